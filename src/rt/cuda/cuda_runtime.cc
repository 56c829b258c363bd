// CudaRuntime: start-up (devices on GPUs) and the binding rule every
// device-dependent call applies; contexts are in cuda_context.cc, memory
// in cuda_memory.cc.
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
    return Status::NotSupported(
        where + ": cuInit failed: " + driver_->ErrorName(r) + " (" +
        driver_->ErrorString(r) +
        "); check that the NVIDIA driver is at least as new as the CUDA "
        "headers hflow was built with, that /dev/nvidia* is visible (in a "
        "container: the NVIDIA container runtime) and what nvidia-smi says");
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
  // Host UDFs read messages in managed memory in place, while the GPU may
  // be working: that needs concurrent managed access (every Linux GPU
  // since Pascal); without it they would fault.
  if (!managed) {
    return Status::NotSupported(
        "device runtime 'cuda': GPU " + std::to_string(ordinal) + " (" +
        std::string(name) + ", device " + std::to_string(desc.device_id) +
        ") has no concurrent managed access, which hflow's host UDFs need "
        "to read messages in place; use a GPU that has it (Pascal or newer, "
        "on Linux) or the 'sim' backend");
  }
  dev->name = name;
  dev->capacity = std::min<uint64_t>(desc.memory_bytes, total);
  dev->host_accessible = true;
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
  if (rec && rec->alive) {
    *device = rec->device;
    return Status::OK();
  }
  // A context hflow did not make (or made and destroyed: the driver may
  // have given its address to a new one): the driver knows its GPU.
  CUdevice cu = 0;
  CUresult r = driver_->CtxGetDevice(&cu);
  if (r == CUDA_SUCCESS && rec) {
    // Only a record still dead goes: a context made meanwhile at the same
    // address has a live one.
    util::MutexLock lock(contexts_mu_);
    auto it = contexts_.find(cur);
    if (it != contexts_.end() && !it->second.alive) contexts_.erase(it);
  }
  if (r != CUDA_SUCCESS && rec) {
    return Status::NoContext(std::string(OpName(op)) +
                             ": the context bound to thread " + Thread() +
                             " was destroyed; bind a live context first");
  }
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
      HFLOW_RETURN_IF_ERROR(RetainPrimary(Op::kSetCurrentContext, dev, &ctx));
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

Status CudaRuntime::DriverCall(int32_t device, Op op) {
  Device* dev = nullptr;
  return EnterDeviceOp(op, device, &dev);
}

}  // namespace rt
}  // namespace hflow
