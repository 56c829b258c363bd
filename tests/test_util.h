// Helpers shared by hflow's tests: building sim runtimes on given device
// sets, and running code on fresh threads (whose context starts as none).
//
// Thread-safety: helpers are reentrant.
#ifndef HFLOW_TESTS_TEST_UTIL_H_
#define HFLOW_TESTS_TEST_UTIL_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
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

// Runs `fn` on a new thread named `name` and joins it.
void RunOnFreshThread(const std::function<void()>& fn,
                      const std::string& name = "test-fresh");

// Sum of contexts created and implicit bindings over `devices`.
uint64_t ContextsCreated(rt::SimRuntime& sim, const std::vector<int32_t>& devices);
uint64_t ImplicitBindings(rt::SimRuntime& sim,
                          const std::vector<int32_t>& devices);

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_TEST_UTIL_H_
