// Test helpers (see test_util.h).
#include "test_util.h"

#include <stdexcept>
#include <thread>

#include "hflow/rt.h"
#include "rt/thread_util.h"

namespace hflow {
namespace testing {

std::shared_ptr<rt::SimRuntime> MakeSim(const std::vector<int32_t>& devices,
                                        std::optional<int32_t> default_device,
                                        uint64_t memory_bytes) {
  rt::SimOptions opts;
  opts.cluster = MakeLocalCluster(devices, memory_bytes);
  opts.default_device = default_device;
  std::shared_ptr<rt::SimRuntime> sim;
  Status s = rt::SimRuntime::Create(std::move(opts), &sim);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  return sim;
}

std::shared_ptr<rt::SimRuntime> InstallSim(const std::vector<int32_t>& devices,
                                           std::optional<int32_t> default_device,
                                           uint64_t memory_bytes) {
  auto sim = MakeSim(devices, default_device, memory_bytes);
  rt::InstallRuntime(sim);
  return sim;
}

void RunOnFreshThread(const std::function<void()>& fn,
                      const std::string& name) {
  std::thread t([&] {
    SetCurrentThreadName(name);
    fn();
  });
  t.join();
}

uint64_t ContextsCreated(rt::SimRuntime& sim,
                         const std::vector<int32_t>& devices) {
  uint64_t n = 0;
  for (int32_t d : devices) {
    rt::DeviceStats s;
    if (sim.GetDeviceStats(d, &s).ok()) n += s.contexts_created;
  }
  return n;
}

uint64_t ImplicitBindings(rt::SimRuntime& sim,
                          const std::vector<int32_t>& devices) {
  uint64_t n = 0;
  for (int32_t d : devices) {
    rt::DeviceStats s;
    if (sim.GetDeviceStats(d, &s).ok()) n += s.implicit_bindings;
  }
  return n;
}

}  // namespace testing
}  // namespace hflow
