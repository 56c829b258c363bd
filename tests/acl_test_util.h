// Shared by the ACL tests (src/acl/*_test.cc, tests/acl_*_test.cc): a
// fixture that starts and ends every test with ACL finalized, hflow
// finalized, no device runtime installed and RESOURCE_CONFIG_PATH unset,
// so tests run in one process stay independent; and StderrOf, which
// returns the lines a call writes to stderr (ACL's failure log).
//
// Thread-safety: test-thread helpers; StderrOf must not overlap another
// capture.
#ifndef HFLOW_TESTS_ACL_TEST_UTIL_H_
#define HFLOW_TESTS_ACL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "acl/acl.h"
#include "hflow/ge_options.h"
#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"

namespace hflow {
namespace testing {

// What `fn` wrote to stderr.
template <typename Fn>
std::string StderrOf(Fn&& fn) {
  ::testing::internal::CaptureStderr();
  std::forward<Fn>(fn)();
  return ::testing::internal::GetCapturedStderr();
}

class AclTest : public ::testing::Test {
 protected:
  void SetUp() override { Clean(); }
  void TearDown() override { Clean(); }

  static void Clean() {
    (void)StderrOf([] {
      (void)aclFinalize();
      (void)hflow::Finalize();
    });
    rt::InstallRuntime(nullptr);
    unsetenv(kResourceConfigPathEnv);
  }

  // The installed runtime as a sim (aclInit makes one), or nullptr.
  static rt::SimRuntime* Sim() {
    return dynamic_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  }

  // The counters of `device` in the installed sim.
  static rt::DeviceStats Stats(int32_t device) {
    rt::DeviceStats st;
    rt::SimRuntime* sim = Sim();
    EXPECT_NE(sim, nullptr);
    if (sim != nullptr) {
      EXPECT_TRUE(sim->GetDeviceStats(device, &st).ok());
    }
    return st;
  }
};

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_ACL_TEST_UTIL_H_
