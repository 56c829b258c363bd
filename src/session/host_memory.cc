// HostMemory (see host_memory.h). Thread-safety: as documented there.
#include "session/host_memory.h"

#include <string>

#include "util/pointer_text.h"

namespace hflow {
namespace session {
using util::PointerText;
using util::RangeText;

struct HostMemory::Registration {
  std::shared_ptr<rt::DeviceRuntime> runtime;
  const void* base = nullptr;
  size_t bytes = 0;
  bool ended = false;  // unregistered explicitly
  ~Registration() {
    // The registry let go (Finalize) and the last message went: a failed
    // unregistration gets one more try, as freeing device memory does.
    if (!ended && !runtime->HostUnregister(base).ok()) {
      (void)runtime->HostUnregister(base);
    }
  }
};

Status HostMemory::Register(const void* ptr, size_t bytes) {
  util::MutexLock lock(mu_);
  HFLOW_RETURN_IF_ERROR(
      runtime_->HostRegister(ptr, bytes).WithContext("RegisterHostMemory: "));
  auto reg = std::make_shared<Registration>();
  reg->runtime = runtime_;
  reg->base = ptr;
  reg->bytes = bytes;
  regs_[reinterpret_cast<uintptr_t>(ptr)] = std::move(reg);
  return Status::OK();
}

// Note [The release is the signal]
// A message fed from registered memory may outlive the caller's last view
// of it by a moment: the executor that delivered an output still holds its
// input until the node's Proc returns, and the fetcher may have the output
// before that. The first release of the view's keep runs when hflow's last
// hold goes (the registration's hold goes just before it), so the release
// is what tells the caller the range is free. Unregister reports
// kFailedPrecondition until then; it does not wait, since it cannot tell a
// hold about to go from a view the caller keeps.
Status HostMemory::Unregister(const void* ptr) {
  util::MutexLock lock(mu_);
  auto it = regs_.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == regs_.end()) {
    return Status::NotFound("UnregisterHostMemory: no registration starts at " +
                            PointerText(ptr) + " (RegisterHostMemory first)");
  }
  // Copies are only made under mu_ (Find), so the count cannot grow here.
  const long users = it->second.use_count() - 1;
  if (users > 0) {
    return Status::FailedPrecondition(
        "UnregisterHostMemory: " + RangeText(ptr, it->second->bytes) +
        " is in " + std::to_string(users) +
        " live message(s) fed with Session::FeedViews; fetch or drop them "
        "(or remove the graph) first");
  }
  HFLOW_RETURN_IF_ERROR(
      runtime_->HostUnregister(ptr).WithContext("UnregisterHostMemory: "));
  it->second->ended = true;
  regs_.erase(it);
  return Status::OK();
}

std::shared_ptr<const void> HostMemory::Find(const void* ptr,
                                             size_t bytes) const {
  const auto addr = reinterpret_cast<uintptr_t>(ptr);
  util::MutexLock lock(mu_);
  auto it = regs_.upper_bound(addr);
  if (it == regs_.begin()) return nullptr;
  --it;
  const Registration& r = *it->second;
  if (addr - it->first > r.bytes || bytes > r.bytes - (addr - it->first)) {
    return nullptr;
  }
  return it->second;
}

void HostMemory::Clear() {
  std::map<uintptr_t, std::shared_ptr<Registration>> gone;
  {
    util::MutexLock lock(mu_);
    gone.swap(regs_);
  }
}

}  // namespace session
}  // namespace hflow
