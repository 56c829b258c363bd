// Helpers shared by hflow's tests: building sim runtimes on given device
// sets, and running code on fresh threads (whose context starts as none).
//
// Thread-safety: helpers are reentrant.
#ifndef HFLOW_TESTS_TEST_UTIL_H_
#define HFLOW_TESTS_TEST_UTIL_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hflow/cluster.h"
#include "rt/sim/sim_runtime.h"

namespace hflow {
namespace testing {

// A sim runtime on `devices` (one local node). `default_device` overrides the
// cluster's rule (0 when present); rt::kNoDefaultDevice disables it.
std::shared_ptr<rt::SimRuntime> MakeSim(
    const std::vector<int32_t>& devices,
    std::optional<int32_t> default_device = std::nullopt,
    uint64_t memory_bytes = kDefaultDeviceMemoryBytes);

// As MakeSim, and installs it as the process-wide runtime.
std::shared_ptr<rt::SimRuntime> InstallSim(
    const std::vector<int32_t>& devices,
    std::optional<int32_t> default_device = std::nullopt,
    uint64_t memory_bytes = kDefaultDeviceMemoryBytes);

// "Devices_2_3_4_5": a test name for a device set (the parameter of the
// tests that run on sets with and without device 0).
std::string DevicesName(const std::vector<int32_t>& devices);

// In a sanitizer build, makes death-test children (which re-execute the
// test binary and read the sanitizer options at start) leave SIGSEGV,
// SIGBUS, SIGFPE, SIGILL and SIGABRT to the process's own handlers and skip
// the leak check at exit, so a test of hflow's crash report sees what a
// user's process would. No effect in other builds.
void LeaveCrashSignalsToTheProcess();

// UDF projects that hflow builds during BuildGraph build under the build
// tree (examples_udf_builds), against the build tree's SDK, unless the
// caller's environment already names other folders.
void UseBuildTreeForUdfs();

// Runs `fn` on a new thread named `name` and joins it.
void RunOnFreshThread(const std::function<void()>& fn,
                      const std::string& name = "test-fresh");

// Sum of contexts created and implicit bindings over `devices`.
uint64_t ContextsCreated(rt::SimRuntime& sim,
                         const std::vector<int32_t>& devices);
uint64_t ImplicitBindings(rt::SimRuntime& sim,
                          const std::vector<int32_t>& devices);

// What a sim runtime holds, summed over its devices: device memory in use,
// live allocations and live contexts (default and user). All three are zero
// once everything hflow made has been released.
struct SimHoldings {
  uint64_t mem_bytes = 0;
  uint64_t allocations = 0;
  uint64_t contexts = 0;
  bool empty() const {
    return mem_bytes == 0 && allocations == 0 && contexts == 0;
  }
  std::string ToString() const;
};
SimHoldings Holdings(const rt::SimRuntime& sim);

// Aborts the process, naming `what`, unless destroyed (or Disarm()ed) within
// `limit`: a hang then fails the test at once instead of blocking ctest
// until its own timeout. The watchdog thread does no device work.
// Sets an environment variable for a scope, putting the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

class Watchdog {
 public:
  Watchdog(std::chrono::milliseconds limit, std::string what);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  // Replaces the description printed on expiry (e.g. the current step).
  void SetWhat(std::string what);
  void Disarm();

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::string what_;
  std::thread thread_;
};

// Polls `done` every millisecond until it holds or `limit` passes; returns
// its last value.
template <typename Pred>
bool WaitFor(Pred done, std::chrono::milliseconds limit =
                            std::chrono::milliseconds(3000)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_TEST_UTIL_H_
