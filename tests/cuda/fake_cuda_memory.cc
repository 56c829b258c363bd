// FakeCudaDriver's memory: allocations (real host memory standing for
// device memory, checked by range), copies and fills that land late unless
// the memory is synchronous, and host registrations.
//
// Thread-safety: every call runs under the fake's mutex (Run).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "cuda/fake_cuda_driver.h"

namespace hflow {
namespace testing {
namespace {

constexpr size_t kAlignment = 256;  // cuMemAlloc's guarantee
// Fresh "device" memory is filled with this, so a runtime that relies on
// cuMemAlloc returning zeros (it does not promise to) fails its tests.
// Only the first kPoisonBytes: a message pool is hundreds of MiB, and
// poisoning all of it costs each graph test seconds of page faults.
constexpr unsigned char kPoison = 0xCD;
constexpr size_t kPoisonBytes = 1 << 20;

}  // namespace

CUresult FakeCudaDriver::AllocLocked(Context* ctx, CUdeviceptr* ptr,
                                     size_t bytes, bool managed) {
  if (ptr == nullptr || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  Device& device = devices_[ctx->ordinal];
  if (bytes > memory_per_gpu_ - device.used_bytes) {
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* memory = std::aligned_alloc(kAlignment, rounded);
  if (memory == nullptr) return CUDA_ERROR_OUT_OF_MEMORY;
  std::memset(memory, kPoison, std::min(rounded, kPoisonBytes));
  const uintptr_t addr = reinterpret_cast<uintptr_t>(memory);
  allocations_[addr] = Allocation{bytes, ctx->ordinal, managed, ctx};
  device.used_bytes += bytes;
  ++device.live_allocations;
  *ptr = static_cast<CUdeviceptr>(addr);
  return CUDA_SUCCESS;
}

// Only ranges that start inside an allocation can be judged: anything else
// is host memory, which unified addressing lets every copy use.
CUresult FakeCudaDriver::CheckRangeLocked(uintptr_t addr, size_t bytes) const {
  if (addr == 0 || bytes > UINTPTR_MAX - addr) return CUDA_ERROR_INVALID_VALUE;
  if (auto it = allocations_.upper_bound(addr); it != allocations_.begin()) {
    --it;
    const uintptr_t start = it->first;
    const size_t size = it->second.bytes;
    if (addr < start + size) {
      if (devices_[it->second.ordinal].lost != CUDA_SUCCESS) {
        return devices_[it->second.ordinal].lost;
      }
      return bytes > start + size - addr ? CUDA_ERROR_INVALID_VALUE
                                         : CUDA_SUCCESS;
    }
  }
  if (auto it = dead_allocations_.upper_bound(addr);
      it != dead_allocations_.begin()) {
    --it;
    if (addr < it->first + it->second) return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

// Note [Asynchronous copies]
// The real cuMemcpy and cuMemsetD8 may return before a write into device
// memory has landed (a fill, a device-to-device copy, a host-to-device
// copy from pageable memory: CUDA's "API synchronization behavior"); only
// writes into host memory are complete on return, and the memory's
// CU_POINTER_ATTRIBUTE_SYNC_MEMOPS makes every one synchronous. The fake
// keeps such writes pending (their source read at the call, as the driver
// stages it) until a call that orders them: another copy or fill,
// cuMemFree or cuCtxSynchronize. A host thread reading the memory directly
// in between sees the old bytes, as it may on a GPU.
void FakeCudaDriver::WriteLocked(uintptr_t dst, std::vector<unsigned char> b) {
  auto it = allocations_.upper_bound(dst);
  bool deferred = false;
  if (it != allocations_.begin()) {
    --it;
    deferred = dst - it->first < it->second.bytes && !it->second.sync_memops;
  }
  if (deferred) {
    pending_.push_back(PendingWrite{dst, std::move(b)});
    return;
  }
  std::memcpy(reinterpret_cast<void*>(dst), b.data(), b.size());
}

void FakeCudaDriver::FlushLocked() {
  for (PendingWrite& w : pending_) {
    std::memcpy(reinterpret_cast<void*>(w.dst), w.bytes.data(), w.bytes.size());
  }
  pending_.clear();
}

CUresult FakeCudaDriver::PointerSetAttribute(const void* value,
                                             CUpointer_attribute attr,
                                             CUdeviceptr ptr) {
  return Run("PointerSetAttribute", Needs::kContext, [&](Context*) {
    auto it = allocations_.find(static_cast<uintptr_t>(ptr));
    if (value == nullptr || it == allocations_.end() ||
        attr != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    it->second.sync_memops = *static_cast<const int*>(value) != 0;
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::MemAlloc(CUdeviceptr* ptr, size_t bytes) {
  return Run("MemAlloc", Needs::kContext, [&](Context* ctx) {
    return AllocLocked(ctx, ptr, bytes, /*managed=*/false);
  });
}

CUresult FakeCudaDriver::MemAllocManaged(CUdeviceptr* ptr, size_t bytes,
                                         unsigned int flags) {
  return Run("MemAllocManaged", Needs::kContext, [&](Context* ctx) {
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    return AllocLocked(ctx, ptr, bytes, /*managed=*/true);
  });
}

CUresult FakeCudaDriver::MemFree(CUdeviceptr ptr) {
  return Run("MemFree", Needs::kContext, [&](Context*) {
    FlushLocked();  // cuMemFree waits for the device's work
    auto it = allocations_.find(static_cast<uintptr_t>(ptr));
    if (it == allocations_.end()) return CUDA_ERROR_INVALID_VALUE;
    Device& device = devices_[it->second.ordinal];
    if (device.lost != CUDA_SUCCESS) return device.lost;
    device.used_bytes -= it->second.bytes;
    --device.live_allocations;
    std::free(reinterpret_cast<void*>(it->first));
    allocations_.erase(it);
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::Memcpy(CUdeviceptr dst, CUdeviceptr src,
                                size_t bytes) {
  return Run("Memcpy", Needs::kContext, [&](Context*) {
    if (bytes == 0) return CUDA_SUCCESS;
    if (CUresult r = CheckRangeLocked(dst, bytes); r != CUDA_SUCCESS) return r;
    if (CUresult r = CheckRangeLocked(src, bytes); r != CUDA_SUCCESS) return r;
    FlushLocked();  // in order after what was issued before
    const auto* from = reinterpret_cast<const unsigned char*>(src);
    WriteLocked(dst, std::vector<unsigned char>(from, from + bytes));
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::MemsetD8(CUdeviceptr dst, unsigned char value,
                                  size_t count) {
  return Run("MemsetD8", Needs::kContext, [&](Context*) {
    if (count == 0) return CUDA_SUCCESS;
    if (CUresult r = CheckRangeLocked(dst, count); r != CUDA_SUCCESS) return r;
    FlushLocked();
    WriteLocked(dst, std::vector<unsigned char>(count, value));
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::MemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  return Run("MemGetInfo", Needs::kContext, [&](Context* ctx) {
    if (free_bytes == nullptr || total_bytes == nullptr) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    *total_bytes = memory_per_gpu_;
    *free_bytes = memory_per_gpu_ - devices_[ctx->ordinal].used_bytes;
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::MemHostRegister(void* ptr, size_t bytes,
                                         unsigned int flags) {
  return Run("MemHostRegister", Needs::kContext, [&](Context* ctx) {
    const uintptr_t start = reinterpret_cast<uintptr_t>(ptr);
    constexpr unsigned int kKnownFlags =
        CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
        CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
    if (ptr == nullptr || bytes == 0 || (flags & ~kKnownFlags) != 0 ||
        bytes > UINTPTR_MAX - start) {
      return CUDA_ERROR_INVALID_VALUE;
    }
    // Registrations are disjoint, so only the last one starting before our
    // end can overlap us.
    if (auto it = registrations_.lower_bound(start + bytes);
        it != registrations_.begin()) {
      --it;
      if (it->first + it->second.bytes > start) {
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
      }
    }
    registrations_[start] = Registration{bytes, ctx};
    return CUDA_SUCCESS;
  });
}

CUresult FakeCudaDriver::MemHostUnregister(void* ptr) {
  return Run("MemHostUnregister", Needs::kContext, [&](Context*) {
    auto it = registrations_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == registrations_.end()) {
      return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    if (CUresult r = devices_[it->second.owner->ordinal].lost;
        r != CUDA_SUCCESS) {
      return r;
    }
    registrations_.erase(it);
    return CUDA_SUCCESS;
  });
}

// Counted but not logged: they return no CUresult and cannot fail.

}  // namespace testing
}  // namespace hflow
