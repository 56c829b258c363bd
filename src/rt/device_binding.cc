// DeviceContexts / ScopedDevice (see device_binding.h).
// Thread-safety: held_ is guarded by mu_.
#include "rt/device_binding.h"

#include <string>

#include "hflow/context_guard.h"

namespace hflow {

DeviceContexts::DeviceContexts(rt::DeviceRuntime* runtime)
    : runtime_(runtime) {}

DeviceContexts::~DeviceContexts() {
  for (auto& [device, ctx] : held_) (void)runtime_->ResetDevice(device);
}

Status DeviceContexts::GetSlow(int32_t device, rt::Context** ctx) {
  const bool small = device >= 0 && device < kFastIds;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(device);
  if (it != held_.end()) {
    *ctx = it->second;
    return Status::OK();
  }
  // SetDevice binds; restore the caller's handle right after (never with
  // SetDevice, see Note [Guard restores handles, not devices]).
  rt::Context* saved = runtime_->CurrentContextFast();
  Status s = runtime_->SetDevice(device);
  rt::Context* got = runtime_->CurrentContextFast();
  if (got != saved) (void)runtime_->SetCurrentContext(saved);
  HFLOW_RETURN_IF_ERROR(s);
  held_.emplace(device, got);
  if (small) fast_[device].store(got, std::memory_order_release);
  *ctx = got;
  return Status::OK();
}

ScopedDevice::ScopedDevice(DeviceContexts* contexts, int32_t device)
    : runtime_(contexts->runtime()),
      device_(device),
      saved_(runtime_->CurrentContextFast()) {
  rt::Context* ctx = nullptr;
  status_ = contexts->Get(device, &ctx);
  if (status_.ok() && ctx != saved_) {
    status_ = runtime_->SetCurrentContext(ctx);
  }
}

ScopedDevice::~ScopedDevice() {
  if (runtime_->CurrentContextFast() != saved_ &&
      !runtime_->SetCurrentContext(saved_).ok()) {
    (void)runtime_->SetCurrentContext(nullptr);
  }
}

Status ScopedDevice::Require(int32_t device) const {
  if (status_.ok() && device == device_) return Status::OK();
  if (!status_.ok()) return status_;
  return Status::Internal("device operation on device " +
                          std::to_string(device) +
                          " called with a binding of device " +
                          std::to_string(device_));
}

}  // namespace hflow
