// CudaRuntime: start-up (devices on GPUs), contexts and the binding rule
// every device-dependent call applies; memory is in cuda_memory.cc.
//
// Thread-safety: the binding is the driver's, per thread; a device's
// default-context state is guarded by its mutex; the context registry by
// contexts_mu_; listeners run outside every lock.
#include "rt/cuda/cuda_runtime.h"

#include <algorithm>
#include <cstdlib>

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

CudaRuntime::CudaRuntime(CudaOptions options)
    : DeviceRuntime(/*slot_backed=*/false),
      options_(std::move(options)),
      driver_(options_.driver.get()) {}

CudaRuntime::~CudaRuntime() { ReleaseEverything(); }

Status CudaRuntime::Create(CudaOptions options,
                           std::shared_ptr<CudaRuntime>* out) {
  if (out == nullptr) return Status::InvalidArgument("CudaRuntime: null out");
  if (!options.driver) {
    return Status::InvalidArgument("CudaRuntime: no driver given");
  }
  std::shared_ptr<CudaRuntime> rt(new CudaRuntime(std::move(options)));
  HFLOW_RETURN_IF_ERROR(rt->Start());
  *out = std::move(rt);
  return Status::OK();
}

// Note [Logical devices on GPUs]
// The cluster names devices by logical id (GE's device_id: 2,3,4,5 on an
// eight-card server); the driver by ordinal, 0..n-1 after
// CUDA_VISIBLE_DEVICES. The i-th smallest logical id is ordinal i: a
// program written for devices 2..5 runs on a four-GPU machine unchanged,
// and a one-GPU machine still runs a device set without 0 (device 3 on
// GPU 0), which is what the seed's bug needs to show. One GPU per logical
// device: two logical devices sharing a GPU would share its primary
// context, and a thread bound to one would pass the other's check.
Status CudaRuntime::Start() {
  const std::string where = "device runtime 'cuda'";
  CUresult r = driver_->Init(0);
  int count = 0;
  if (r == CUDA_SUCCESS) r = driver_->DeviceGetCount(&count);
  if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && count == 0)) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return Status::NotSupported(
        where + ": the NVIDIA driver sees no GPU" +
        (visible ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")"
                 : std::string()) +
        "; use the 'sim' backend on this machine");
  }
  if (r != CUDA_SUCCESS) {
    return Status::NotSupported(where +
                                ": cuInit failed: " + driver_->ErrorName(r) +
                                " (" + driver_->ErrorString(r) + ")");
  }
  ClusterConfig cluster = options_.cluster;
  if (cluster.nodes.empty()) {
    return Status::InvalidArgument(where + ": the cluster '" + cluster.source +
                                   "' has no devices");
  }
  std::vector<DeviceDesc> descs = cluster.LocalNode().devices;
  std::sort(descs.begin(), descs.end(),
            [](const DeviceDesc& a, const DeviceDesc& b) {
              return a.device_id < b.device_id;
            });
  if (static_cast<int>(descs.size()) > count) {
    std::string ids;
    for (const DeviceDesc& d : descs) {
      ids += (ids.empty() ? "" : ",") + std::to_string(d.device_id);
    }
    return Status::InvalidArgument(
        where + ": the cluster '" + cluster.source + "' lists " +
        std::to_string(descs.size()) + " devices (" + ids +
        ") but the driver sees " + std::to_string(count) +
        " GPU(s); each logical device needs a GPU of its own (the i-th "
        "smallest id runs on GPU i): list at most " +
        std::to_string(count) + " devices");
  }
  for (size_t i = 0; i < descs.size(); ++i) {
    HFLOW_RETURN_IF_ERROR(AddDevice(descs[i], static_cast<int>(i)));
  }
  if (options_.default_device) {
    if (*options_.default_device >= 0) {
      if (FindDevice(*options_.default_device) == nullptr) {
        return Status::InvalidArgument(
            where + ": default device " +
            std::to_string(*options_.default_device) +
            " is not a device of the cluster '" + cluster.source + "'");
      }
      default_device_ = options_.default_device;
    }
  } else {
    default_device_ = cluster.ResolvedDefaultDevice();
  }
  return Status::OK();
}

Status CudaRuntime::AddDevice(const DeviceDesc& desc, int ordinal) {
  auto dev = std::make_unique<Device>();
  dev->id = desc.device_id;
  dev->ordinal = ordinal;
  CUresult r = driver_->DeviceGet(&dev->cu, ordinal);
  char name[256] = {};
  size_t total = 0;
  int managed = 0;
  if (r == CUDA_SUCCESS)
    r = driver_->DeviceGetName(name, sizeof(name), dev->cu);
  if (r == CUDA_SUCCESS) r = driver_->DeviceTotalMem(&total, dev->cu);
  if (r == CUDA_SUCCESS) {
    r = driver_->DeviceGetAttribute(
        &managed, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, dev->cu);
  }
  if (r != CUDA_SUCCESS) {
    return Status::NotSupported(
        "device runtime 'cuda': GPU " + std::to_string(ordinal) + " (device " +
        std::to_string(desc.device_id) + "): " + driver_->ErrorName(r));
  }
  dev->name = name;
  dev->capacity = std::min<uint64_t>(desc.memory_bytes, total);
  // Host UDFs read managed memory in place only where the host may touch
  // it while the GPU works (concurrent managed access).
  dev->host_accessible = options_.memory == CudaMemory::kManaged && managed;
  devices_.push_back(std::move(dev));
  return Status::OK();
}

std::vector<int32_t> CudaRuntime::DeviceIds() const {
  std::vector<int32_t> ids;
  for (const auto& d : devices_) ids.push_back(d->id);
  return ids;
}

CudaRuntime::Device* CudaRuntime::FindDevice(int32_t device) const {
  for (const auto& d : devices_) {
    if (d->id == device) return d.get();
  }
  return nullptr;
}

int CudaRuntime::Ordinal(int32_t device) const {
  Device* d = FindDevice(device);
  return d ? d->ordinal : -1;
}

std::string CudaRuntime::GpuName(int32_t device) const {
  Device* d = FindDevice(device);
  return d ? d->name : std::string();
}

std::string CudaRuntime::DeviceLabel(int32_t device) const {
  Device* d = FindDevice(device);
  if (d == nullptr) return "no GPU";
  return "GPU " + std::to_string(d->ordinal) + " (" + d->name + ")";
}

Status CudaRuntime::LookupDevice(Op op, int32_t device, Device** out) const {
  *out = FindDevice(device);
  if (*out != nullptr) return Status::OK();
  return Status::InvalidArgument(std::string(OpName(op)) + ": device " +
                                 std::to_string(device) +
                                 " is not a device of this cluster");
}

std::optional<CudaRuntime::ContextRec> CudaRuntime::FindContext(
    CUcontext ctx) const {
  util::MutexLock lock(contexts_mu_);
  auto it = contexts_.find(ctx);
  if (it == contexts_.end()) return std::nullopt;
  return it->second;
}

Status CudaRuntime::DeviceOfCurrent(Op op, CUcontext cur, int32_t* device) {
  std::optional<ContextRec> rec = FindContext(cur);
  if (rec && !rec->alive) {
    return Status::NoContext(std::string(OpName(op)) +
                             ": the context bound "
                             "to thread " +
                             Thread() +
                             " was destroyed; bind "
                             "a live context first");
  }
  if (rec) {
    *device = rec->device;
    return Status::OK();
  }
  // A context hflow did not make: the driver knows its GPU.
  CUdevice cu = 0;
  CUresult r = driver_->CtxGetDevice(&cu);
  if (r != CUDA_SUCCESS) {
    return Status::NoContext(std::string(OpName(op)) +
                             ": the context bound "
                             "to thread " +
                             Thread() + " is not usable (" +
                             driver_->ErrorName(r) + "); bind a live one");
  }
  for (const auto& d : devices_) {
    if (d->cu == cu) {
      *device = d->id;
      return Status::OK();
    }
  }
  *device = -1;  // a GPU outside the cluster: a mismatch for every device
  return Status::OK();
}

Status CudaRuntime::CheckBinding(Op op, Device* dev) {
  CUcontext cur = nullptr;
  CUresult r = driver_->CtxGetCurrent(&cur);
  if (r != CUDA_SUCCESS) return DriverError(op, dev, "cuCtxGetCurrent", r);
  const std::string what = std::string(OpName(op)) + " on " + dev->Describe();
  if (cur == nullptr) {
    if (default_device_ && *default_device_ == dev->id) {
      return BindImplicitly(dev);
    }
    return Status::NoContext(
        what + ": no valid context is bound to the current thread " + Thread() +
        " (EE1018); bind device " + std::to_string(dev->id) +
        " first (SetDevice or SetCurrentContext)");
  }
  int32_t bound = -1;
  HFLOW_RETURN_IF_ERROR(DeviceOfCurrent(op, cur, &bound));
  if (bound == dev->id) return Status::OK();
  return Status::ContextMismatch(
      what + ": thread " + Thread() + " is bound to a context of " +
      (bound >= 0 ? "device " + std::to_string(bound)
                  : std::string("a GPU outside the cluster")) +
      ", not device " + std::to_string(dev->id) + "; bind device " +
      std::to_string(dev->id) + " first (SetDevice or SetCurrentContext)");
}

Status CudaRuntime::BindImplicitly(Device* dev) {
  CUcontext ctx = nullptr;
  {
    util::MutexLock lock(dev->mu);
    if (!dev->implicitly_retained) {
      HFLOW_RETURN_IF_ERROR(RetainPrimary(dev, &ctx));
      dev->implicitly_retained = true;
    }
    ctx = dev->primary;
  }
  CUresult r = driver_->CtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
    return DriverError(Op::kSetCurrentContext, dev, "cuCtxSetCurrent", r);
  }
  dev->implicit_bindings.fetch_add(1);
  return Status::OK();
}

Status CudaRuntime::EnterDeviceOp(Op op, int32_t device, Device** dev) {
  HFLOW_RETURN_IF_ERROR(LookupDevice(op, device, dev));
  if ((*dev)->lost.load(std::memory_order_relaxed)) {
    return Status::DeviceLost(std::string(OpName(op)) + " on " +
                              (*dev)->Describe() + ": the device is lost (" +
                              (*dev)->LostReason() + ")");
  }
  return CheckBinding(op, *dev);
}

// Requires dev->mu. The runtime holds one driver reference on a primary
// context, however many SetDevice references it counts.
Status CudaRuntime::RetainPrimary(Device* dev, CUcontext* ctx) {
  dev->mu.AssertHeld();
  if (dev->primary == nullptr) {
    CUcontext c = nullptr;
    CUresult r = driver_->DevicePrimaryCtxRetain(&c, dev->cu);
    if (r != CUDA_SUCCESS) {
      return DriverError(Op::kSetDevice, dev, "cuDevicePrimaryCtxRetain", r);
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
                              ": the device is lost");
  }
  CUcontext ctx = nullptr;
  {
    util::MutexLock lock(dev->mu);
    HFLOW_RETURN_IF_ERROR(RetainPrimary(dev, &ctx));
    ++dev->refs;
  }
  CUresult r = driver_->CtxSetCurrent(ctx);
  if (r != CUDA_SUCCESS) {
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
  if (--dev->refs == 0 && !dev->implicitly_retained) ReleasePrimary(dev);
  return Status::OK();
}

Status CudaRuntime::GetDevice(int32_t* device) {
  if (device == nullptr) return Status::InvalidArgument("GetDevice: null out");
  CUcontext cur = nullptr;
  driver_->CtxGetCurrent(&cur);
  if (cur == nullptr) {
    return Status::NoContext(
        "GetDevice: no context is bound to the current "
        "thread " +
        Thread());
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
                              ": the device is lost");
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
  std::optional<ContextRec> rec =
      handle ? FindContext(Cu(handle)) : std::nullopt;
  if (!rec || !rec->alive) {
    return Status::InvalidArgument(
        "DestroyContext: unknown or already destroyed context handle");
  }
  if (rec->is_default) {
    return Status::InvalidArgument(
        "DestroyContext: the context is the default context of device " +
        std::to_string(rec->device) + "; release it with ResetDevice");
  }
  Device* dev = FindDevice(rec->device);
  CUresult r = driver_->CtxDestroy(Cu(handle));
  if (r != CUDA_SUCCESS) {
    return DriverError(Op::kDestroyContext, dev, "cuCtxDestroy", r);
  }
  {
    util::MutexLock lock(contexts_mu_);
    contexts_[Cu(handle)].alive = false;
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

Status CudaRuntime::DriverCall(int32_t device, Op op) {
  Device* dev = nullptr;
  return EnterDeviceOp(op, device, &dev);
}

}  // namespace rt
}  // namespace hflow
