// Internal state of SimRuntime: contexts and devices. Only sim_*.cc include
// this file.
//
// Thread-safety: fields are atomics or guarded by SimDevice::mu as noted.
#ifndef HFLOW_RT_SIM_SIM_INTERNAL_H_
#define HFLOW_RT_SIM_SIM_INTERNAL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "rt/sim/sim_runtime.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace rt {
namespace sim {

// Host memory standing for device memory (sim_memory.cc, Note [Mapped
// device memory]): 64-byte aligned; HostFree takes the size HostAlloc got.
void* HostAlloc(size_t bytes);
void HostFree(void* p, size_t bytes);

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
  util::Mutex mu;
  std::atomic<SimContext*> default_ctx{nullptr};
  std::atomic<int64_t> refs{0};
  bool implicitly_retained GUARDED_BY(mu) = false;

  std::atomic<bool> lost{false};
  std::atomic<uint64_t> contexts_created{0};
  std::atomic<uint64_t> contexts_alive{0};
  std::atomic<uint64_t> implicit_bindings{0};
  std::atomic<uint64_t> mem_used{0};
  std::atomic<uint64_t> mem_peak{0};
  std::atomic<uint64_t> live_allocations{0};
};

// A thread's caches of answers the runtime's registries gave it (Note
// [Context handle cache], Note [Allocation lookup cache]). On the heap,
// behind one pointer: hflow's thread-locals use the initial-exec model
// (Note [TLS model]), whose space is scarce when a library is dlopened.
struct ThreadCache {
  struct ContextSeen {
    uint64_t runtime = 0;
    const Context* handle = nullptr;
  };
  struct AllocationSeen {
    uint64_t runtime = 0;
    uint64_t epoch = 0;
    uintptr_t base = 0;
    size_t bytes = 0;
    int32_t device = -1;
  };
  ContextSeen contexts[8];
  int next_context = 0;
  AllocationSeen allocations[4];
  int next_allocation = 0;
  // ctxcheck: the context the runtime (by uid) bound implicitly at an
  // unbound call on this thread, until the thread binds explicitly.
  uint64_t implicit_runtime = 0;
  const void* implicit_ctx = nullptr;
};

// This thread's caches (made on first use, freed at thread exit).
ThreadCache& MyThreadCache();

}  // namespace sim
}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_SIM_SIM_INTERNAL_H_
