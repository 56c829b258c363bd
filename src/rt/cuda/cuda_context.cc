// CudaRuntime's contexts: default (primary) contexts retained while
// something holds them, user contexts, and binding handles; the binding
// rule device calls apply is in cuda_runtime.cc.
//
// Thread-safety: a device's default-context state is guarded by its mutex
// (taken before contexts_mu_, never after); the context registry by
// contexts_mu_; the binding is the driver's, per thread.
#include <string>

#include "rt/cuda/cuda_internal.h"
#include "util/thread_name.h"

namespace hflow {
namespace rt {

namespace {
Context* Handle(CUcontext c) { return reinterpret_cast<Context*>(c); }
CUcontext Cu(const Context* c) {
  return reinterpret_cast<CUcontext>(const_cast<Context*>(c));
}
std::string Thread() { return "'" + util::CurrentThreadName() + "'"; }
}  // namespace

// Requires dev->mu. The runtime holds one driver reference on a primary
// context, however many SetDevice references it counts.
Status CudaRuntime::RetainPrimary(Op op, Device* dev, CUcontext* ctx) {
  dev->mu.AssertHeld();
  if (dev->primary == nullptr) {
    CUcontext c = nullptr;
    CUresult r = driver_->DevicePrimaryCtxRetain(&c, dev->cu);
    if (r != CUDA_SUCCESS) {
      return DriverErrorLocked(op, dev, "cuDevicePrimaryCtxRetain", r);
    }
    dev->primary = c;
    dev->contexts_created.fetch_add(1);
    dev->contexts_alive.fetch_add(1);
    util::MutexLock lock(contexts_mu_);
    contexts_[c] = ContextRec{dev->id, /*is_default=*/true, /*alive=*/true};
  }
  *ctx = dev->primary;
  return Status::OK();
}

// Requires dev->mu.
void CudaRuntime::ReleaseIfUnheld(Device* dev) {
  dev->mu.AssertHeld();
  if (dev->refs == 0 && !dev->implicitly_retained && dev->memory_holds == 0) {
    ReleasePrimary(dev);
  }
}

void CudaRuntime::DropMemoryHold(Device* dev) {
  util::MutexLock lock(dev->mu);
  --dev->memory_holds;
  ReleaseIfUnheld(dev);
}

// Requires dev->mu. A released primary leaves the registry rather than
// being marked dead: another holder (torch) may keep it alive, and then a
// thread bound to it is bound to a live context of the GPU.
void CudaRuntime::ReleasePrimary(Device* dev) {
  dev->mu.AssertHeld();
  if (dev->primary == nullptr) return;
  {
    util::MutexLock lock(contexts_mu_);
    contexts_.erase(dev->primary);
  }
  driver_->DevicePrimaryCtxRelease(dev->cu);
  dev->primary = nullptr;
  dev->contexts_alive.fetch_sub(1);
}

Status CudaRuntime::SetDevice(int32_t device) {
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kSetDevice, device, &dev));
  if (dev->lost.load()) {
    return Status::DeviceLost("SetDevice on " + dev->Describe() +
                              ": the device is lost (" + dev->LostReason() +
                              ")");
  }
  CUcontext ctx = nullptr;
  {
    util::MutexLock lock(dev->mu);
    HFLOW_RETURN_IF_ERROR(RetainPrimary(Op::kSetDevice, dev, &ctx));
    ++dev->refs;
  }
  CUresult r = driver_->CtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
    {
      util::MutexLock lock(dev->mu);
      --dev->refs;
      ReleaseIfUnheld(dev);
    }
    return DriverError(Op::kSetDevice, dev, "cuCtxSetCurrent", r);
  }
  return Status::OK();
}

Status CudaRuntime::ResetDevice(int32_t device) {
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kResetDevice, device, &dev));
  util::MutexLock lock(dev->mu);
  if (dev->refs <= 0) {
    return Status::FailedPrecondition(
        "ResetDevice on " + dev->Describe() +
        ": no SetDevice reference is held; call SetDevice and ResetDevice "
        "in pairs");
  }
  --dev->refs;
  // With memory still allocated the primary context stays (Note [Memory
  // belongs to the device] in cuda_memory.cc).
  ReleaseIfUnheld(dev);
  return Status::OK();
}

Status CudaRuntime::GetDevice(int32_t* device) {
  if (device == nullptr) return Status::InvalidArgument("GetDevice: null out");
  CUcontext cur = nullptr;
  driver_->CtxGetCurrent(&cur);
  if (cur == nullptr) {
    return Status::NoContext(
        "GetDevice: no context is bound to the current thread " + Thread());
  }
  int32_t bound = -1;
  HFLOW_RETURN_IF_ERROR(DeviceOfCurrent(Op::kSetDevice, cur, &bound));
  if (bound < 0) {
    return Status::InvalidArgument(
        "GetDevice: thread " + Thread() +
        " is bound to a context of a GPU outside the cluster");
  }
  *device = bound;
  return Status::OK();
}

Status CudaRuntime::CreateContext(int32_t device, Context** out) {
  if (out == nullptr) {
    return Status::InvalidArgument("CreateContext: null out parameter");
  }
  Device* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kCreateContext, device, &dev));
  if (dev->lost.load()) {
    return Status::DeviceLost("CreateContext on " + dev->Describe() +
                              ": the device is lost (" + dev->LostReason() +
                              ")");
  }
  CUcontext ctx = nullptr;
  CUresult r = driver_->CtxCreate(&ctx, dev->cu);  // made current
  if (r != CUDA_SUCCESS) {
    return DriverError(Op::kCreateContext, dev, "cuCtxCreate", r);
  }
  dev->contexts_created.fetch_add(1);
  dev->contexts_alive.fetch_add(1);
  {
    util::MutexLock lock(contexts_mu_);
    contexts_[ctx] = ContextRec{dev->id, /*is_default=*/false, true};
  }
  *out = Handle(ctx);
  return Status::OK();
}

Status CudaRuntime::DestroyContext(Context* handle) {
  // The record is claimed before the driver call, so two threads
  // destroying one context destroy it once; it stays alive (threads bound
  // to it keep their device) until the driver has destroyed it.
  int32_t device = -1;
  {
    util::MutexLock lock(contexts_mu_);
    auto it = handle ? contexts_.find(Cu(handle)) : contexts_.end();
    if (it == contexts_.end() || !it->second.alive || it->second.destroying) {
      return Status::InvalidArgument(
          "DestroyContext: unknown or already destroyed context handle");
    }
    if (it->second.is_default) {
      return Status::InvalidArgument(
          "DestroyContext: the context is the default context of device " +
          std::to_string(it->second.device) + "; release it with ResetDevice");
    }
    it->second.destroying = true;
    device = it->second.device;
  }
  Device* dev = FindDevice(device);
  CUresult r = driver_->CtxDestroy(Cu(handle));
  {
    util::MutexLock lock(contexts_mu_);
    auto it = contexts_.find(Cu(handle));
    if (it != contexts_.end()) {
      it->second.destroying = false;
      if (r == CUDA_SUCCESS) it->second.alive = false;
    }
  }
  if (r != CUDA_SUCCESS) {
    return DriverError(Op::kDestroyContext, dev, "cuCtxDestroy", r);
  }
  dev->contexts_alive.fetch_sub(1);
  return Status::OK();
}

Status CudaRuntime::SetCurrentContext(Context* handle) {
  if (handle != nullptr) {
    std::optional<ContextRec> rec = FindContext(Cu(handle));
    if (rec && !rec->alive) {
      return Status::InvalidArgument(
          "SetCurrentContext: the context was destroyed; pass a context "
          "that is still alive");
    }
  }
  CUresult r = driver_->CtxSetCurrent(Cu(handle));
  if (r != CUDA_SUCCESS) {
    return Status::InvalidArgument(
        "SetCurrentContext: the driver refused the context (" +
        driver_->ErrorName(r) +
        "); pass a context from CreateContext or "
        "GetCurrentContext that is still alive");
  }
  return Status::OK();
}

Context* CudaRuntime::GetCurrentContext() noexcept {
  CUcontext cur = nullptr;
  if (driver_->CtxGetCurrent(&cur) != CUDA_SUCCESS) return nullptr;
  return Handle(cur);
}

Status CudaRuntime::GetContextDevice(const Context* handle, int32_t* device) {
  if (handle == nullptr || device == nullptr) {
    return Status::InvalidArgument("GetContextDevice: null context or out");
  }
  std::optional<ContextRec> rec = FindContext(Cu(handle));
  if (rec) {
    *device = rec->device;
    return Status::OK();
  }
  // Another library's context: ask the driver with it current, briefly.
  CUcontext saved = nullptr;
  driver_->CtxGetCurrent(&saved);
  if (driver_->CtxSetCurrent(Cu(handle)) != CUDA_SUCCESS) {
    return Status::InvalidArgument("GetContextDevice: unknown context handle");
  }
  int32_t bound = -1;
  Status s = DeviceOfCurrent(Op::kSetCurrentContext, Cu(handle), &bound);
  driver_->CtxSetCurrent(saved);
  HFLOW_RETURN_IF_ERROR(s);
  if (bound < 0) {
    return Status::InvalidArgument(
        "GetContextDevice: the context belongs to a GPU outside the cluster");
  }
  *device = bound;
  return Status::OK();
}

}  // namespace rt
}  // namespace hflow
