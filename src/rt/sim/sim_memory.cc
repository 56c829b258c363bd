// SimRuntime device memory: allocations are host memory accounted against
// each device's capacity; copies validate that every device pointer lies in
// a live allocation of the device the copy names.
//
// Thread-safety: the allocation map is guarded by allocs_mu_ (shared for
// lookups, which a per-thread cache mostly answers: Note [Allocation lookup
// cache]); per-device usage counters are atomics.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <new>
#include <string>

#include "rt/sim/sim_instrumented.h"
#include "rt/sim/sim_internal.h"

namespace hflow {
namespace rt {
namespace {
constexpr size_t kAlign = 64;

std::string Dev(int32_t d) { return "device " + std::to_string(d); }

std::string Ptr(const void* p) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}
// Note [Mapped device memory]
// Large allocations (the message pools: 256 MiB per device by default) are
// anonymous mappings, not heap blocks: their pages are committed on first
// touch, as a device's memory would be, and the sanitizers' allocators do
// not shadow, poison and quarantine every byte of them (a sanitized run of
// the fault sweep spent 1.4 s per Initialize..Finalize doing that, 25 ms
// plain). Nothing is lost to ASan: a pool is one allocation, so overruns
// inside it were never visible to it; small allocations stay on the heap.
// The mappings ask for transparent huge pages (MADV_HUGEPAGE; a no-op
// where the kernel has none): a device's memory is physically backed when
// allocated, not page by page, and faulting in a model's weights 4 KiB at
// a time was most of a model load's upload (resnet18, 46 MB: a build took
// 0.2-0.4 s against 0.06-0.09 s with huge pages, the machine busy). The
// cost is residency in 2 MiB steps for pools touched sparsely.
constexpr size_t kMapThreshold = 1u << 20;

size_t MappedSize(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}
}  // namespace

void* sim::HostAlloc(size_t bytes) {
  if (bytes < kMapThreshold) {
    return ::operator new (bytes, std::align_val_t{kAlign}, std::nothrow);
  }
  void* p = mmap(nullptr, MappedSize(bytes), PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  // Note [Mapped device memory]: in huge pages where the kernel has them.
  if (p != MAP_FAILED) (void)madvise(p, MappedSize(bytes), MADV_HUGEPAGE);
  return p == MAP_FAILED ? nullptr : p;
}

void sim::HostFree(void* p, size_t bytes) {
  if (bytes < kMapThreshold) {
    ::operator delete (p, std::align_val_t{kAlign});
  } else {
    munmap(p, MappedSize(bytes));
  }
}

Status SimRuntime::Malloc(int32_t device, size_t bytes, void** ptr) {
  return Instrumented(Op::kMalloc, device, [&](bool* implicit) -> Status {
    if (ptr == nullptr) return Status::InvalidArgument("Malloc: null out");
    SimDevice* dev = nullptr;
    HFLOW_RETURN_IF_ERROR(EnterDeviceOp(Op::kMalloc, device, &dev, implicit));
    if (bytes == 0) {
      return Status::InvalidArgument("Malloc on " + Dev(device) +
                                     ": size must be positive");
    }
    // Reserve capacity first so concurrent allocations cannot overshoot.
    uint64_t used = dev->mem_used.load();
    do {
      if (bytes > dev->capacity || used > dev->capacity - bytes) {
        return Status::OutOfMemory(
            "Malloc on " + Dev(device) + ": " + std::to_string(bytes) +
            " bytes requested, " + std::to_string(used) + " of " +
            std::to_string(dev->capacity) + " bytes in use");
      }
    } while (!dev->mem_used.compare_exchange_weak(used, used + bytes));
    void* p = sim::HostAlloc(bytes);
    if (p == nullptr) {
      dev->mem_used.fetch_sub(bytes);
      return Status::OutOfMemory("Malloc on " + Dev(device) +
                                 ": host memory exhausted");
    }
    uint64_t peak = dev->mem_peak.load();
    uint64_t now = used + bytes;
    while (now > peak && !dev->mem_peak.compare_exchange_weak(peak, now)) {
    }
    dev->live_allocations.fetch_add(1);
    {
      util::WriterMutexLock lock(allocs_mu_);
      allocs_[reinterpret_cast<uintptr_t>(p)] = Allocation{bytes, device};
    }
    *ptr = p;
    return Status::OK();
  });
}

// Note [Free on a lost device]: Free checks the binding like any device
// operation, but on a lost device it still releases the allocation and
// succeeds: cleanup after device loss must be able to return everything, or
// every rollback path would leak.
Status SimRuntime::Free(int32_t device, void* ptr) {
  return Instrumented(Op::kFree, device, [&](bool* implicit) -> Status {
    SimDevice* dev = nullptr;
    HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kFree, device, &dev));
    if (!dev->lost.load()) {
      HFLOW_RETURN_IF_ERROR(CheckBinding(Op::kFree, dev, implicit));
    }
    size_t bytes = 0;
    {
      util::WriterMutexLock lock(allocs_mu_);
      auto it = allocs_.find(reinterpret_cast<uintptr_t>(ptr));
      if (it == allocs_.end() || it->second.device != device) {
        if (it != allocs_.end()) {
          NoteCrossDevice(Op::kFree, device, it->second.device);
        }
        return Status::InvalidArgument(
            "Free on " + Dev(device) + ": " + Ptr(ptr) +
            " is not a live allocation of this device (double free, or "
            "memory of another device?)");
      }
      bytes = it->second.bytes;
      allocs_.erase(it);
      allocs_epoch_.fetch_add(1, std::memory_order_release);
    }
    sim::HostFree(ptr, bytes);
    dev->mem_used.fetch_sub(bytes);
    dev->live_allocations.fetch_sub(1);
    return Status::OK();
  });
}

// Note [Allocation lookup cache]
// Every Memcpy validates its device pointers against the allocation map,
// and the map's shared lock is an atomic read-modify-write on a line every
// copying thread shares (4% of a four-device chain). Device buffers in a
// running graph are a few cache pools, allocated once: each thread keeps
// the last few allocations it found, tagged with the runtime's uid and the
// free epoch of the moment it found them. Any Free bumps the epoch, so an
// entry is only trusted while no allocation at all has died since: a hit
// gives exactly the answer the map would have given at that moment.
namespace {
// Whether [addr, addr + bytes) lies inside the allocation `a` describes.
bool Covers(const sim::ThreadCache::AllocationSeen& a, uintptr_t addr,
            size_t bytes) {
  return addr >= a.base && addr - a.base <= a.bytes &&
         bytes <= a.bytes - (addr - a.base);
}
}  // namespace

bool SimRuntime::FindAllocation(const void* p, size_t bytes,
                                int32_t* device) const {
  sim::ThreadCache& c = sim::MyThreadCache();
  const auto addr = reinterpret_cast<uintptr_t>(p);
  const uint64_t epoch = allocs_epoch_.load(std::memory_order_acquire);
  for (const auto& e : c.allocations) {
    if (e.runtime == uid_ && e.epoch == epoch && Covers(e, addr, bytes)) {
      *device = e.device;
      return true;
    }
  }
  util::ReaderMutexLock lock(allocs_mu_);
  auto it = allocs_.upper_bound(addr);  // the first allocation after addr
  if (it == allocs_.begin()) return false;
  --it;
  // The epoch is read under the lock: no Free runs between it and the map.
  const sim::ThreadCache::AllocationSeen found{
      uid_, allocs_epoch_.load(std::memory_order_relaxed), it->first,
      it->second.bytes, it->second.device};
  if (!Covers(found, addr, bytes)) return false;
  constexpr int kSeen = sizeof(c.allocations) / sizeof(c.allocations[0]);
  c.allocations[c.next_allocation] = found;
  c.next_allocation = (c.next_allocation + 1) % kSeen;
  *device = found.device;
  return true;
}

Status SimRuntime::Memcpy(int32_t device, void* dst, const void* src,
                          size_t bytes, MemcpyKind kind) {
  return Instrumented(Op::kMemcpy, device, [&](bool* implicit) -> Status {
    SimDevice* dev = nullptr;
    HFLOW_RETURN_IF_ERROR(EnterDeviceOp(Op::kMemcpy, device, &dev, implicit));
    if (bytes == 0) return Status::OK();
    if (dst == nullptr || src == nullptr) {
      return Status::InvalidArgument("Memcpy on " + Dev(device) +
                                     ": null pointer");
    }
    // Only the sides the kind puts on a device are looked up: a host-side
    // pointer costs no search (and a failed search no error status).
    int32_t dst_dev = -1, src_dev = -1;
    bool dst_on_dev = false, src_on_dev = false;
    if (kind != MemcpyKind::kDeviceToHost) {
      dst_on_dev = FindAllocation(dst, bytes, &dst_dev);
    }
    if (kind != MemcpyKind::kHostToDevice) {
      src_on_dev = FindAllocation(src, bytes, &src_dev);
    }
    auto bad = [&](const char* what, const void* p) {
      return Status::InvalidArgument("Memcpy on " + Dev(device) + ": " + what +
                                     " " + Ptr(p) + " (+" +
                                     std::to_string(bytes) +
                                     " bytes) is not inside a live allocation "
                                     "of the expected device");
    };
    // Registered host memory counts as memory of every device
    // (sim_host_memory.cc).
    auto reaches = [&](int32_t owner) {
      return owner == device || owner == kRegisteredHost;
    };
    // ctxcheck: a pointer of another device is a cross-device finding; one
    // that is no allocation at all is not.
    switch (kind) {
      case MemcpyKind::kHostToDevice:
        if (!dst_on_dev || dst_dev != device) {
          if (dst_on_dev) NoteCrossDevice(Op::kMemcpy, device, dst_dev);
          return bad("destination", dst);
        }
        break;
      case MemcpyKind::kDeviceToHost:
        if (!src_on_dev || !reaches(src_dev)) {
          if (src_on_dev) NoteCrossDevice(Op::kMemcpy, device, src_dev);
          return bad("source", src);
        }
        break;
      case MemcpyKind::kDeviceToDevice:
        if (!dst_on_dev) return bad("destination", dst);
        if (!src_on_dev) return bad("source", src);
        if (!reaches(dst_dev) && !reaches(src_dev)) {
          NoteCrossDevice(Op::kMemcpy, device, src_dev);
          return Status::InvalidArgument("Memcpy on " + Dev(device) +
                                         ": a device-to-device copy from " +
                                         Dev(src_dev) + " to " + Dev(dst_dev) +
                                         " must be issued on one of them");
        }
        for (int32_t peer : {src_dev, dst_dev}) {
          if (peer != kRegisteredHost && FindDevice(peer)->lost.load()) {
            // Name the lost one: it is what the caller must act on.
            return Status::DeviceLost("Memcpy on " + Dev(device) + ": " +
                                      Dev(peer) + " is lost");
          }
        }
        break;
    }
    std::memmove(dst, src, bytes);
    return Status::OK();
  });
}

Status SimRuntime::Memset(int32_t device, void* dst, int value, size_t bytes) {
  return Instrumented(Op::kMemset, device, [&](bool* implicit) -> Status {
    SimDevice* dev = nullptr;
    HFLOW_RETURN_IF_ERROR(EnterDeviceOp(Op::kMemset, device, &dev, implicit));
    if (bytes == 0) return Status::OK();
    int32_t owner = -1;
    bool found = false;
    found = FindAllocation(dst, bytes, &owner);
    if (!found || owner != device) {
      if (found) NoteCrossDevice(Op::kMemset, device, owner);
      return Status::InvalidArgument("Memset on " + Dev(device) + ": " +
                                     Ptr(dst) +
                                     " is not inside a live allocation of "
                                     "this device");
    }
    std::memset(dst, value, bytes);
    return Status::OK();
  });
}

Status SimRuntime::Synchronize(int32_t device) {
  // Sim work is synchronous: only the checks remain.
  return Instrumented(Op::kSynchronize, device, [&](bool* implicit) {
    SimDevice* dev = nullptr;
    return EnterDeviceOp(Op::kSynchronize, device, &dev, implicit);
  });
}

Status SimRuntime::GetMemInfo(int32_t device, uint64_t* free_bytes,
                              uint64_t* total_bytes) {
  return Instrumented(Op::kGetMemInfo, device, [&](bool* implicit) -> Status {
    SimDevice* dev = nullptr;
    HFLOW_RETURN_IF_ERROR(
        EnterDeviceOp(Op::kGetMemInfo, device, &dev, implicit));
    uint64_t used = dev->mem_used.load();
    if (free_bytes) *free_bytes = dev->capacity - used;
    if (total_bytes) *total_bytes = dev->capacity;
    return Status::OK();
  });
}

Status SimRuntime::DriverCall(int32_t device, Op op) {
  // Fast path (once per queued message): uninstrumented, bound to a live
  // context of a live target device. Everything else takes the full path,
  // which produces the errors.
  if (!instrumented_.load(std::memory_order_relaxed)) {
    SimContext* cur = BoundContext();
    if (cur != nullptr && cur->device == device &&
        cur->alive.load(std::memory_order_relaxed)) {
      SimDevice* dev = FindDevice(device);
      if (!dev->lost.load(std::memory_order_relaxed)) return Status::OK();
    }
  }
  return DriverCallSlow(device, op);
}

// Out of line so the fast path above stays a leaf without a large frame.
Status SimRuntime::DriverCallSlow(int32_t device, Op op) {
  return Instrumented(op, device, [&](bool* implicit) {
    SimDevice* dev = nullptr;
    return EnterDeviceOp(op, device, &dev, implicit);
  });
}

}  // namespace rt
}  // namespace hflow
