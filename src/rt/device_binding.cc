// DeviceContexts / ScopedDevice (see device_binding.h).
// Thread-safety: held_ is guarded by mu_.
#include "rt/device_binding.h"

#include <string>

namespace hflow {
namespace rt {

DeviceContexts::DeviceContexts(rt::DeviceRuntime* runtime)
    : runtime_(runtime) {}

DeviceContexts::DeviceContexts(std::shared_ptr<rt::DeviceRuntime> runtime)
    : owner_(std::move(runtime)), runtime_(owner_.get()) {}

DeviceContexts::~DeviceContexts() {
  // Nothing retries after this: one failed ResetDevice (a transient driver
  // error) would keep the device's default context alive for the life of
  // the process, so a failure gets a second try.
  for (auto& [device, ctx] : held_) {
    if (!runtime_->ResetDevice(device).ok())
      (void)runtime_->ResetDevice(device);
  }
}

Status DeviceContexts::GetSlow(int32_t device, rt::Context** ctx) {
  const bool small = device >= 0 && device < kFastIds;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(device);
  if (it != held_.end()) {
    *ctx = it->second;
    return Status::OK();
  }
  // SetDevice binds; the guard restores the caller's handle right after.
  rt::Context* got = nullptr;
  {
    ContextGuard guard(runtime_);
    HFLOW_RETURN_IF_ERROR(runtime_->SetDevice(device));
    got = runtime_->CurrentContextFast();
  }
  held_.emplace(device, got);
  if (small) fast_[device].store(got, std::memory_order_release);
  *ctx = got;
  return Status::OK();
}

// Note [Pool threads keep their binding]
// An executor run binds its instance's device. Restoring the pool thread's
// previous binding after every run cost two context switches per message
// and stage, for a binding nobody looks at: pool threads are hflow's own
// (invariant 2 is about the threads of callers), and every run binds again
// at its start. So runs on pool threads keep the binding (OnExit::kKeep):
// a run on the device the previous run used makes no runtime call, and a
// UDF that left the thread on another device is corrected before the next
// Proc (Reassert, within a run) or by the next run's check: both compare
// the thread's actual current context, one thread-local read.
ScopedDevice::ScopedDevice(DeviceContexts* contexts, int32_t device,
                           OnExit on_exit)
    : runtime_(contexts->runtime()),
      device_(device),
      guard_(on_exit == OnExit::kRestore ? runtime_ : nullptr) {
  status_ = contexts->Get(device, &ctx_);
  if (!status_.ok()) return;
  if (on_exit == OnExit::kKeep) {
    status_ = Reassert();
  } else if (ctx_ != guard_.saved()) {
    status_ = runtime_->SetCurrentContext(ctx_);
  }
}

Status ScopedDevice::Reassert() {
  if (!status_.ok()) return status_;
  if (runtime_->CurrentContextFast() == ctx_) return Status::OK();
  return runtime_->SetCurrentContext(ctx_);
}

rt::Context* DeviceContexts::PeekSlow(int32_t device) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = held_.find(device);
  return it == held_.end() ? nullptr : it->second;
}

Status ScopedDevice::Require(int32_t device) const {
  if (status_.ok() && device == device_) return Status::OK();
  if (!status_.ok()) return status_;
  return Status::Internal(
      "device operation on device " + std::to_string(device) +
      " called with a binding of device " + std::to_string(device_));
}

}  // namespace rt
}  // namespace hflow
