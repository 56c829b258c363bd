// Shared by the ACL tests (src/acl/*_test.cc, tests/acl_*_test.cc): a
// fixture that starts and ends every test with ACL finalized, hflow
// finalized, no device runtime installed and RESOURCE_CONFIG_PATH unset,
// so tests run in one process stay independent; StderrOf, which returns
// the lines a call writes to stderr (ACL's failure log); and temp files
// (config files, clusters for RESOURCE_CONFIG_PATH) private to the process,
// as ctest runs tests in parallel processes sharing one temp folder.
//
// Thread-safety: test-thread helpers; StderrOf must not overlap another
// capture.
#ifndef HFLOW_TESTS_ACL_TEST_UTIL_H_
#define HFLOW_TESTS_ACL_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

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

// Writes `text` to a file of this process in the test temp folder; returns
// its path.
inline std::string WriteTempFile(const std::string& name,
                                 const std::string& text) {
  const std::string path = ::testing::TempDir() + "hflow_acl_" +
                           std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

// Points RESOURCE_CONFIG_PATH at a cluster of `devices` (compact form).
inline void UseClusterFile(const std::vector<int32_t>& devices) {
  std::string json = "{\"devices\": [";
  for (size_t i = 0; i < devices.size(); ++i) {
    json += (i ? ", " : "") + std::to_string(devices[i]);
  }
  json += "]}";
  std::string name = "cluster";
  for (int32_t d : devices) name += "_" + std::to_string(d);
  setenv(kResourceConfigPathEnv, WriteTempFile(name + ".json", json).c_str(),
         1);
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
