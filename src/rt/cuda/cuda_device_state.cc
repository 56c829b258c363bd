// CudaRuntime's device state: driver errors as Statuses, device loss and
// its listeners, counters, the runtime's end, and the factory on the real
// driver.
//
// Thread-safety: a device's loss is an atomic flag set once, its reason
// under lost_mu; listeners are copied out of listeners_mu_ and run outside
// every lock.
#include <cstdlib>
#include <string>

#include "rt/cuda/cuda_internal.h"

namespace hflow {
namespace rt {

namespace {
// Errors after which a CUDA context is unusable for good: the device (its
// primary context, in which hflow works) is lost to the process.
bool Sticky(CUresult r) {
  switch (r) {
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      return true;
    default:
      return false;
  }
}
}  // namespace

Status CudaRuntime::DriverErrorLocked(Op op, Device* dev, const char* call,
                                      CUresult r) {
  std::string what = std::string(OpName(op)) +
                     (dev ? " on " + dev->Describe() : std::string()) + ": " +
                     call + " failed: " + driver_->ErrorName(r) + " (" +
                     driver_->ErrorString(r) + ")";
  switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      return Status::OutOfMemory(what);
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
      return Status::NoContext(what);
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
      return Status::InvalidArgument(what);
    default:
      break;
  }
  if (Sticky(r)) return Status::DeviceLost(what);
  return Status::Internal(what);
}

Status CudaRuntime::DriverError(Op op, Device* dev, const char* call,
                                CUresult r) {
  Status st = DriverErrorLocked(op, dev, call, r);
  if (Sticky(r) && dev != nullptr) MarkLost(dev, st.message());
  return st;
}

void CudaRuntime::MarkLost(Device* dev, const std::string& why) {
  {
    util::MutexLock lock(dev->lost_mu);
    if (dev->lost.exchange(true)) return;
    dev->lost_reason = why;
  }
  std::vector<LostListener> listeners;
  {
    util::MutexLock lock(listeners_mu_);
    for (const auto& l : listeners_) listeners.push_back(l.second);
  }
  for (const LostListener& l : listeners) l(dev->id);
}

int CudaRuntime::AddDeviceLostListener(LostListener fn) {
  util::MutexLock lock(listeners_mu_);
  int id = next_listener_++;
  listeners_.emplace_back(id, std::move(fn));
  return id;
}

void CudaRuntime::RemoveDeviceLostListener(int id) {
  util::MutexLock lock(listeners_mu_);
  for (auto it = listeners_.begin(); it != listeners_.end(); ++it) {
    if (it->first == id) {
      listeners_.erase(it);
      return;
    }
  }
}

Status CudaRuntime::GetDeviceStats(int32_t device, DeviceStats* out) const {
  Device* dev = FindDevice(device);
  if (dev == nullptr || out == nullptr) {
    return Status::InvalidArgument("GetDeviceStats: device " +
                                   std::to_string(device) +
                                   " is not a device of this cluster");
  }
  out->device_id = dev->id;
  out->contexts_created = dev->contexts_created.load();
  out->contexts_alive = dev->contexts_alive.load();
  out->implicit_bindings = dev->implicit_bindings.load();
  out->mem_capacity_bytes = dev->capacity;
  out->mem_used_bytes = dev->mem_used.load();
  out->mem_peak_bytes = dev->mem_peak.load();
  out->live_allocations = dev->live_allocations.load();
  {
    util::MutexLock lock(dev->mu);
    out->default_context_refs = dev->refs;
  }
  out->lost = dev->lost.load();
  return Status::OK();
}

// What the runtime holds goes back to the driver: allocations are freed in
// their device's primary context (retained for the purpose if need be),
// then the retained primaries and the registration context are released.
// The calling thread's binding is left as it was.
void CudaRuntime::ReleaseEverything() {
  CUcontext saved = nullptr;
  driver_->CtxGetCurrent(&saved);
  std::map<uintptr_t, Allocation> allocs;
  CUcontext host_ctx = nullptr;
  {
    util::MutexLock lock(allocs_mu_);
    allocs.swap(allocs_);
  }
  {
    util::MutexLock lock(host_mu_);
    host_ctx = host_ctx_;
    host_ctx_ = nullptr;
  }
  for (const auto& dev : devices_) {
    CUcontext ctx = nullptr;
    bool retained = false;
    for (const auto& [base, a] : allocs) {
      if (a.device != dev->id) continue;
      if (ctx == nullptr) {
        retained =
            driver_->DevicePrimaryCtxRetain(&ctx, dev->cu) == CUDA_SUCCESS;
        if (!retained) break;
        driver_->CtxSetCurrent(ctx);
      }
      driver_->MemFree(static_cast<CUdeviceptr>(base));
    }
    if (retained) driver_->DevicePrimaryCtxRelease(dev->cu);
    util::MutexLock lock(dev->mu);
    dev->memory_holds = 0;
    ReleasePrimary(dev.get());
  }
  if (host_ctx != nullptr) {
    driver_->CtxSetCurrent(host_ctx);
    for (const auto& [base, a] : allocs) {
      if (a.device == kRegisteredHost) {
        driver_->MemHostUnregister(reinterpret_cast<void*>(base));
      }
    }
    driver_->DevicePrimaryCtxRelease(devices_.front()->cu);
  }
  driver_->CtxSetCurrent(saved);
}

namespace {
util::Mutex g_test_driver_mu;
std::shared_ptr<CudaDriver>& TestDriver() {
  static auto* driver = new std::shared_ptr<CudaDriver>();
  return *driver;
}
}  // namespace

void SetCudaDriverForTesting(std::shared_ptr<CudaDriver> driver) {
  util::MutexLock lock(g_test_driver_mu);
  TestDriver() = std::move(driver);
}

Status MakeCudaRuntime(const ClusterConfig& cluster,
                       std::optional<int32_t> default_device,
                       std::shared_ptr<DeviceRuntime>* out) {
  std::shared_ptr<CudaDriver> driver;
  {
    util::MutexLock lock(g_test_driver_mu);
    driver = TestDriver();
  }
  if (!driver) {
    std::unique_ptr<CudaDriver> real;
    const char* env = std::getenv("HFLOW_CUDA_DRIVER");
    HFLOW_RETURN_IF_ERROR(
        LoadCudaDriver(env && *env ? env : "libcuda.so.1", &real));
    driver = std::move(real);
  }
  CudaOptions options;
  options.cluster = cluster;
  options.default_device = default_device;
  options.driver = std::move(driver);
  std::shared_ptr<CudaRuntime> rt;
  HFLOW_RETURN_IF_ERROR(CudaRuntime::Create(std::move(options), &rt));
  *out = std::move(rt);
  return Status::OK();
}

}  // namespace rt
}  // namespace hflow
