// HostMemory: the session's registry of host memory registered with the
// device runtime (hflow::RegisterHostMemory), which a zero-copy feed
// (Session::FeedViews) looks its views up in. Each registration is shared:
// the registry holds it, and so does every message fed from it, so that
// Unregister can refuse while messages use the memory, and a registration
// the registry dropped (Finalize) ends with the last of them.
//
// Thread-safety: all methods are thread-safe (one mutex over the map).
#ifndef HFLOW_SESSION_HOST_MEMORY_H_
#define HFLOW_SESSION_HOST_MEMORY_H_

#include <cstdint>
#include <map>
#include <memory>

#include "hflow/device_runtime.h"
#include "hflow/status.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace session {

class HostMemory {
 public:
  explicit HostMemory(std::shared_ptr<rt::DeviceRuntime> runtime)
      : runtime_(std::move(runtime)) {}

  Status Register(const void* ptr, size_t bytes);
  Status Unregister(const void* ptr);
  // The registration holding all of [ptr, ptr + bytes), or null.
  std::shared_ptr<const void> Find(const void* ptr, size_t bytes) const;
  // Drops the registry's hold on every registration (Finalize): each ends
  // (HostUnregister) once no message uses it.
  void Clear();

 private:
  struct Registration;
  const std::shared_ptr<rt::DeviceRuntime> runtime_;
  mutable util::Mutex mu_;
  std::map<uintptr_t, std::shared_ptr<Registration>> regs_ GUARDED_BY(mu_);
};

}  // namespace session
}  // namespace hflow

#endif  // HFLOW_SESSION_HOST_MEMORY_H_
