// Internal state of CudaRuntime: one GPU standing for one logical device.
// Only cuda_*.cc include this file.
//
// Thread-safety: fields are constant after start-up, atomics, or guarded
// by Device::mu / Device::lost_mu as noted.
#ifndef HFLOW_RT_CUDA_CUDA_INTERNAL_H_
#define HFLOW_RT_CUDA_CUDA_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "rt/cuda/cuda_runtime.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace rt {

struct CudaRuntime::Device {
  int32_t id = 0;   // logical (the cluster's)
  int ordinal = 0;  // the driver's
  CUdevice cu = 0;
  std::string name;       // "NVIDIA H100 80GB HBM3"
  uint64_t capacity = 0;  // min(the config's memory_bytes, the GPU's)
  bool host_accessible = false;

  // Guards the default (primary) context's retention.
  util::Mutex mu;
  CUcontext primary GUARDED_BY(mu) = nullptr;  // retained by the runtime
  int64_t refs GUARDED_BY(mu) = 0;             // SetDevice references
  bool implicitly_retained GUARDED_BY(mu) = false;
  // Live allocations: memory lives in the primary context and dies with
  // it, so each one holds it (Note [Memory belongs to the device]).
  int64_t memory_holds GUARDED_BY(mu) = 0;

  std::atomic<bool> lost{false};
  util::Mutex lost_mu;
  std::string lost_reason GUARDED_BY(lost_mu);

  std::atomic<uint64_t> contexts_created{0};
  std::atomic<uint64_t> contexts_alive{0};
  std::atomic<uint64_t> implicit_bindings{0};
  std::atomic<uint64_t> mem_used{0};
  std::atomic<uint64_t> mem_peak{0};
  std::atomic<uint64_t> live_allocations{0};

  // "device 3 (GPU 0)", for messages.
  std::string Describe() const {
    return "device " + std::to_string(id) + " (GPU " + std::to_string(ordinal) +
           ")";
  }
  std::string LostReason() {
    util::MutexLock lock(lost_mu);
    return lost_reason;
  }
};

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_CUDA_CUDA_INTERNAL_H_
