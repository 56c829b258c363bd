// SimRuntime's registered host memory (HostRegister/HostUnregister): the
// caller's host ranges entered in the allocation map under kRegisteredHost,
// so that a copy naming one as a device-side pointer validates, on any
// device, as copies from pinned, registered memory do on a real runtime.
// Each registration is accounted (RegisteredHostBytes, HostRegistrations)
// and faultable (Op::kHostRegister, Op::kHostUnregister).
//
// Thread-safety: the map is guarded by allocs_mu_; an unregistration bumps
// allocs_epoch_ as Free does, so no thread's lookup cache outlives it.
#include <string>

#include "rt/sim/sim_instrumented.h"
#include "rt/sim/sim_internal.h"
#include "util/pointer_text.h"

namespace hflow {
namespace rt {
using util::PointerText;
using util::RangeText;

Status SimRuntime::HostRegister(const void* ptr, size_t bytes) {
  return Instrumented(Op::kHostRegister, -1, [&](bool*) -> Status {
    if (ptr == nullptr || bytes == 0) {
      return Status::InvalidArgument(
          "HostRegister: give a non-null pointer and a positive size");
    }
    const auto addr = reinterpret_cast<uintptr_t>(ptr);
    if (addr + bytes < addr) {
      return Status::InvalidArgument("HostRegister: " + RangeText(ptr, bytes) +
                                     " wraps around the address space");
    }
    util::WriterMutexLock lock(allocs_mu_);
    // The entry at or before addr may reach into the range, and the one
    // after it may start inside it.
    auto next = allocs_.upper_bound(addr);
    bool overlaps = next != allocs_.end() && next->first < addr + bytes;
    if (next != allocs_.begin()) {
      auto prev = std::prev(next);
      overlaps = overlaps || prev->first + prev->second.bytes > addr;
    }
    if (overlaps) {
      return Status::InvalidArgument(
          "HostRegister: " + RangeText(ptr, bytes) +
          " overlaps registered host memory or device memory; register each "
          "range once, and host memory only");
    }
    allocs_[addr] = Allocation{bytes, kRegisteredHost};
    registered_bytes_.fetch_add(bytes);
    registrations_.fetch_add(1);
    return Status::OK();
  });
}

Status SimRuntime::HostUnregister(const void* ptr) {
  return Instrumented(Op::kHostUnregister, -1, [&](bool*) -> Status {
    util::WriterMutexLock lock(allocs_mu_);
    auto it = allocs_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == allocs_.end() || it->second.device != kRegisteredHost) {
      return Status::InvalidArgument(
          "HostUnregister: no registration starts at " + PointerText(ptr) +
          " (already unregistered, or device memory?)");
    }
    registered_bytes_.fetch_sub(it->second.bytes);
    registrations_.fetch_sub(1);
    allocs_.erase(it);
    allocs_epoch_.fetch_add(1, std::memory_order_release);
    return Status::OK();
  });
}

}  // namespace rt
}  // namespace hflow
