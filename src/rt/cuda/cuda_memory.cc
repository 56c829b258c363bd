// CudaRuntime's memory: allocations (managed or device memory), copies,
// fills and registered host memory, each checked against the binding and
// against the live allocations, as the sim checks them.
//
// Thread-safety: allocations and registrations are guarded by allocs_mu_;
// the driver calls need no lock of hflow's.
#include <algorithm>
#include <string>

#include "rt/cuda/cuda_internal.h"
#include "util/pointer_text.h"

namespace hflow {
namespace rt {

namespace {
CUdeviceptr Dptr(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

void RaisePeak(std::atomic<uint64_t>& peak, uint64_t used) {
  uint64_t seen = peak.load();
  while (used > seen && !peak.compare_exchange_weak(seen, used)) {
  }
}
}  // namespace

// Note [Managed memory for messages]
// hflow's messages live in device memory groups, and host UDFs (the
// FlowFunc API) read and write them in place, as AICPU UDFs do on Ascend.
// Plain device memory (cuMemAlloc) cannot be read by a host thread, so a
// device's memory is managed memory (cuMemAllocManaged, attached
// globally): one address for the host and every GPU, pages migrating to
// whichever touches them, which is what a pipeline of host stages and GPU
// models needs without a copy at each boundary. The host may touch it
// while a GPU works only with concurrent managed access, which Create
// therefore requires.
//
// Note [Memory belongs to the device]
// In the sim (and in hflow's services, which free pools after the contexts
// they bound are gone) memory belongs to a device; in CUDA to the context
// it was allocated in, and it dies with it. So memory is always allocated
// in the device's primary context, whatever the caller has bound (a user
// context of the device, or torch's), and each live allocation holds that
// context: a last ResetDevice with memory still allocated leaves it alive
// until the last Free. Each allocation is also marked
// CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: a fill or a copy into it is then
// complete when cuMemsetD8/cuMemcpy return (otherwise they may not be), as
// every hflow caller, and a host UDF reading the message next, assumes.
Status CudaRuntime::Malloc(int32_t device, size_t bytes, void** ptr) {
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(EnterDeviceOp(Op::kMalloc, device, &dev));
  if (ptr == nullptr) return Status::InvalidArgument("Malloc: null out");
  if (bytes == 0) {
    return Status::InvalidArgument("Malloc on " + dev->Describe() +
                                   ": zero bytes");
  }
  uint64_t used = dev->mem_used.fetch_add(bytes) + bytes;
  if (used > dev->capacity) {
    dev->mem_used.fetch_sub(bytes);
    return Status::OutOfMemory(
        "Malloc on " + dev->Describe() + ": " + std::to_string(bytes) +
        " bytes do not fit (" + std::to_string(used - bytes) + " of " +
        std::to_string(dev->capacity) + " bytes in use)");
  }
  CUcontext primary = nullptr;
  {
    util::MutexLock lock(dev->mu);
    Status st = RetainPrimary(Op::kMalloc, dev, &primary);
    if (!st.ok()) {
      dev->mem_used.fetch_sub(bytes);
      return st;
    }
    ++dev->memory_holds;
  }
  // In the primary context whatever the caller has bound; the caller's
  // binding is back before any error is reported (and listeners run).
  CUcontext caller = nullptr;
  driver_->CtxGetCurrent(&caller);
  const char* call = "cuCtxSetCurrent";
  CUresult r =
      caller == primary ? CUDA_SUCCESS : driver_->CtxSetCurrent(primary);
  CUdeviceptr p = 0;
  bool allocated = false;
  if (r == CUDA_SUCCESS) {
    call = "cuMemAllocManaged";
    r = driver_->MemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL);
    allocated = r == CUDA_SUCCESS;
  }
  if (allocated) {
    const int on = 1;
    call = "cuPointerSetAttribute";
    r = driver_->PointerSetAttribute(&on, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, p);
    if (r != CUDA_SUCCESS) driver_->MemFree(p);
  }
  CUresult restored =
      caller == primary ? CUDA_SUCCESS : driver_->CtxSetCurrent(caller);
  if (r == CUDA_SUCCESS && restored != CUDA_SUCCESS) {
    driver_->MemFree(p);
    r = restored;
    call = "cuCtxSetCurrent (restoring the caller's context)";
  }
  if (r != CUDA_SUCCESS) {
    dev->mem_used.fetch_sub(bytes);
    DropMemoryHold(dev);
    return DriverError(Op::kMalloc, dev, call, r);
  }
  RaisePeak(dev->mem_peak, used);
  dev->live_allocations.fetch_add(1);
  {
    util::MutexLock lock(allocs_mu_);
    allocs_[static_cast<uintptr_t>(p)] = Allocation{bytes, dev->id};
  }
  *ptr = reinterpret_cast<void*>(p);
  return Status::OK();
}

// On a lost device Free still gives the memory back and succeeds, as the
// sim's does, so that cleanup after a loss returns everything.
Status CudaRuntime::Free(int32_t device, void* ptr) {
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kFree, device, &dev));
  Status enter = EnterDeviceOp(Op::kFree, device, &dev);
  const bool lost = dev->lost.load();  // checked or lost meanwhile
  if (!enter.ok() && !lost) return enter;
  size_t bytes = 0;
  {
    util::MutexLock lock(allocs_mu_);
    auto it = allocs_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == allocs_.end() || it->second.device != device) {
      return Status::InvalidArgument(
          "Free on " + dev->Describe() + ": " + util::PointerText(ptr) +
          " is not a live allocation of this device");
    }
    bytes = it->second.bytes;
    allocs_.erase(it);
  }
  CUresult r = CUDA_SUCCESS;
  if (lost) {
    // The caller may be bound to nothing: free in the primary context,
    // which this allocation's hold keeps alive; the driver's sticky
    // error says nothing new.
    CUcontext primary = nullptr;
    {
      util::MutexLock lock(dev->mu);
      primary = dev->primary;
    }
    InContext(primary, [&] { return driver_->MemFree(Dptr(ptr)); });
  } else {
    r = driver_->MemFree(Dptr(ptr));
  }
  dev->mem_used.fetch_sub(bytes);
  dev->live_allocations.fetch_sub(1);
  DropMemoryHold(dev);
  if (r != CUDA_SUCCESS) return DriverError(Op::kFree, dev, "cuMemFree", r);
  return Status::OK();
}

bool CudaRuntime::FindAllocation(const void* p, size_t bytes,
                                 int32_t* owner) const {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  util::MutexLock lock(allocs_mu_);
  auto it = allocs_.upper_bound(a);
  if (it == allocs_.begin()) return false;
  --it;
  if (a - it->first >= it->second.bytes) return false;
  if (bytes > it->second.bytes - (a - it->first)) return false;
  *owner = it->second.device;
  return true;
}

Status CudaRuntime::Memcpy(int32_t device, void* dst, const void* src,
                           size_t bytes, MemcpyKind kind) {
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(EnterDeviceOp(Op::kMemcpy, device, &dev));
  if (bytes == 0) return Status::OK();
  if (dst == nullptr || src == nullptr) {
    return Status::InvalidArgument("Memcpy on " + dev->Describe() +
                                   ": null pointer");
  }
  int32_t dst_dev = -1, src_dev = -1;
  bool dst_on =
      kind != MemcpyKind::kDeviceToHost && FindAllocation(dst, bytes, &dst_dev);
  bool src_on =
      kind != MemcpyKind::kHostToDevice && FindAllocation(src, bytes, &src_dev);
  auto bad = [&](const char* what, const void* p) {
    return Status::InvalidArgument(
        "Memcpy on " + dev->Describe() + ": " + what + " " +
        util::RangeText(p, bytes) +
        " is not inside a live allocation of the expected device");
  };
  auto reaches = [&](int32_t owner) {
    return owner == device || owner == kRegisteredHost;
  };
  switch (kind) {
    case MemcpyKind::kHostToDevice:
      if (!dst_on || dst_dev != device) return bad("destination", dst);
      break;
    case MemcpyKind::kDeviceToHost:
      if (!src_on || !reaches(src_dev)) return bad("source", src);
      break;
    case MemcpyKind::kDeviceToDevice:
      if (!dst_on) return bad("destination", dst);
      if (!src_on) return bad("source", src);
      for (int32_t peer : {src_dev, dst_dev}) {
        Device* other = peer == kRegisteredHost ? nullptr : FindDevice(peer);
        if (other != nullptr && other->lost.load()) {
          // Name the lost one: it is what the caller must act on, and the
          // issuing device is not to be blamed for its sticky error.
          return Status::DeviceLost("Memcpy on " + dev->Describe() + ": " +
                                    other->Describe() + " is lost (" +
                                    other->LostReason() + ")");
        }
      }
      if (!reaches(dst_dev) && !reaches(src_dev)) {
        return Status::InvalidArgument(
            "Memcpy on " + dev->Describe() + ": a copy from device " +
            std::to_string(src_dev) + " to device " + std::to_string(dst_dev) +
            " must be issued on one of them");
      }
      break;
  }
  CUresult r = driver_->Memcpy(Dptr(dst), Dptr(src), bytes);
  if (r != CUDA_SUCCESS) return DriverError(Op::kMemcpy, dev, "cuMemcpy", r);
  return Status::OK();
}

Status CudaRuntime::Memset(int32_t device, void* dst, int value, size_t bytes) {
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(EnterDeviceOp(Op::kMemset, device, &dev));
  if (bytes == 0) return Status::OK();
  int32_t owner = -1;
  if (dst == nullptr || !FindAllocation(dst, bytes, &owner) ||
      owner != device) {
    return Status::InvalidArgument(
        "Memset on " + dev->Describe() + ": " + util::RangeText(dst, bytes) +
        " is not inside a live allocation of this device");
  }
  CUresult r =
      driver_->MemsetD8(Dptr(dst), static_cast<unsigned char>(value), bytes);
  if (r != CUDA_SUCCESS) return DriverError(Op::kMemset, dev, "cuMemsetD8", r);
  return Status::OK();
}

Status CudaRuntime::Synchronize(int32_t device) {
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(EnterDeviceOp(Op::kSynchronize, device, &dev));
  CUresult r = driver_->CtxSynchronize();
  if (r != CUDA_SUCCESS) {
    return DriverError(Op::kSynchronize, dev, "cuCtxSynchronize", r);
  }
  return Status::OK();
}

Status CudaRuntime::GetMemInfo(int32_t device, uint64_t* free_bytes,
                               uint64_t* total_bytes) {
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(EnterDeviceOp(Op::kGetMemInfo, device, &dev));
  if (free_bytes == nullptr || total_bytes == nullptr) {
    return Status::InvalidArgument("GetMemInfo: null out");
  }
  size_t gpu_free = 0, gpu_total = 0;
  CUresult r = driver_->MemGetInfo(&gpu_free, &gpu_total);
  if (r != CUDA_SUCCESS) {
    return DriverError(Op::kGetMemInfo, dev, "cuMemGetInfo", r);
  }
  // The config's budget bounds what hflow may use; the GPU may have less
  // free (other processes).
  uint64_t used = dev->mem_used.load();
  uint64_t budget = dev->capacity > used ? dev->capacity - used : 0;
  *free_bytes = std::min<uint64_t>(budget, gpu_free);
  *total_bytes = dev->capacity;
  return Status::OK();
}

// Runs `call` with `ctx` current on this thread and the caller's binding
// restored after, for the driver calls that act in a context of hflow's
// choosing rather than the caller's.
CUresult CudaRuntime::InContext(CUcontext ctx,
                                const std::function<CUresult()>& call) {
  CUcontext saved = nullptr;
  driver_->CtxGetCurrent(&saved);
  if (saved != ctx) driver_->CtxSetCurrent(ctx);
  CUresult r = call();
  if (saved != ctx) driver_->CtxSetCurrent(saved);
  return r;
}

bool CudaRuntime::HostAccessible(int32_t device) const {
  Device* dev = FindDevice(device);
  return dev != nullptr && dev->host_accessible;
}

// Registrations need a current context; the caller's thread may have
// none (registration is device-independent in hflow). They are made in
// the first device's primary context, retained from the first
// registration until the runtime ends, with the caller's binding restored.
Status CudaRuntime::HostContext(CUcontext* ctx) {
  util::MutexLock lock(host_mu_);
  if (host_ctx_ == nullptr) {
    CUresult r =
        driver_->DevicePrimaryCtxRetain(&host_ctx_, devices_.front()->cu);
    if (r != CUDA_SUCCESS) {
      host_ctx_ = nullptr;
      return DriverErrorLocked(Op::kHostRegister, nullptr,
                               "cuDevicePrimaryCtxRetain", r);
    }
  }
  *ctx = host_ctx_;
  return Status::OK();
}

Status CudaRuntime::HostRegister(const void* ptr, size_t bytes) {
  if (ptr == nullptr || bytes == 0) {
    return Status::InvalidArgument("HostRegister: null pointer or zero bytes");
  }
  uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
  // Claimed under the lock, registered outside it: pinning a large range
  // takes long, and every copy looks allocations up under allocs_mu_.
  {
    util::MutexLock lock(allocs_mu_);
    auto next = allocs_.lower_bound(a);
    bool overlaps = next != allocs_.end() && next->first < a + bytes;
    if (next != allocs_.begin()) {
      auto prev = std::prev(next);
      overlaps = overlaps || prev->first + prev->second.bytes > a;
    }
    if (overlaps) {
      return Status::InvalidArgument(
          "HostRegister: " + util::RangeText(ptr, bytes) +
          " overlaps a registration or a device allocation");
    }
    allocs_[a] = Allocation{bytes, kRegistering};
  }
  CUcontext ctx = nullptr;
  Status st = HostContext(&ctx);
  if (st.ok()) {
    CUresult r = InContext(ctx, [&] {
      return driver_->MemHostRegister(const_cast<void*>(ptr), bytes,
                                      CU_MEMHOSTREGISTER_PORTABLE);
    });
    if (r != CUDA_SUCCESS) {
      st = DriverError(Op::kHostRegister, nullptr, "cuMemHostRegister", r);
    }
  }
  util::MutexLock lock(allocs_mu_);
  if (!st.ok()) {
    allocs_.erase(a);
    return st;
  }
  allocs_[a].device = kRegisteredHost;
  return Status::OK();
}

Status CudaRuntime::HostUnregister(const void* ptr) {
  {
    util::MutexLock lock(allocs_mu_);
    auto it = allocs_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == allocs_.end() || it->second.device != kRegisteredHost) {
      return Status::InvalidArgument(
          "HostUnregister: no registration starts at " +
          util::PointerText(ptr));
    }
    it->second.device = kRegistering;  // claimed: no copy may use it now
  }
  CUcontext ctx = nullptr;
  Status st = HostContext(&ctx);
  if (st.ok()) {
    CUresult r = InContext(ctx, [&] {
      return driver_->MemHostUnregister(const_cast<void*>(ptr));
    });
    if (r != CUDA_SUCCESS) {
      st = DriverError(Op::kHostUnregister, nullptr, "cuMemHostUnregister", r);
    }
  }
  util::MutexLock lock(allocs_mu_);
  allocs_.erase(reinterpret_cast<uintptr_t>(ptr));
  return st;
}

}  // namespace rt
}  // namespace hflow
