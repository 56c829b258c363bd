// Internal state of SimRuntime: contexts and devices. Only sim_*.cc include
// this file.
//
// Thread-safety: fields are atomics or guarded by SimDevice::mu as noted.
#ifndef HFLOW_RT_SIM_SIM_INTERNAL_H_
#define HFLOW_RT_SIM_SIM_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <mutex>

#include "rt/sim/sim_runtime.h"

namespace hflow {
namespace rt {
namespace sim {

struct SimContext {
  int64_t id = 0;
  int32_t device = 0;
  bool is_default = false;
  std::atomic<bool> alive{true};
};

struct SimDevice {
  int32_t id = 0;
  uint64_t capacity = 0;

  // Guards creation and destruction of the default context and the
  // implicit-retention flag. Refcount increments from a positive value may
  // happen without it (SetDevice's fast path); from zero only under it.
  std::mutex mu;
  std::atomic<SimContext*> default_ctx{nullptr};
  std::atomic<int64_t> refs{0};
  bool implicitly_retained = false;  // guarded by mu

  std::atomic<bool> lost{false};
  std::atomic<uint64_t> contexts_created{0};
  std::atomic<uint64_t> contexts_alive{0};
  std::atomic<uint64_t> implicit_bindings{0};
  std::atomic<uint64_t> mem_used{0};
  std::atomic<uint64_t> mem_peak{0};
  std::atomic<uint64_t> live_allocations{0};
};

}  // namespace sim
}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_SIM_SIM_INTERNAL_H_
