// CudaRuntime: hflow's devices on NVIDIA GPUs, through the driver API
// (cuda_driver.h). The binding rules are DeviceRuntime's, enforced on the
// driver's own per-thread current context:
//   - a logical device (the cluster's id) is one GPU, mapped in order: the
//     i-th smallest logical id is the driver's ordinal i (after
//     CUDA_VISIBLE_DEVICES, which the driver applies), so device 3 may be
//     GPU 0 (Note [Logical devices on GPUs] in cuda_runtime.cc);
//   - a device's default context is its primary context, retained while
//     SetDevice references (or an implicit binding) hold it;
//   - every device-dependent call reads the thread's current context and
//     fails with kNoContext / kContextMismatch as the sim does; only the
//     configured default device binds an unbound thread implicitly (the
//     CUDA runtime API's habit with device 0), counted in DeviceStats;
//   - a context hflow did not make (torch's, the user's) is a context like
//     any other: its device is the driver's answer, and the context guards
//     restore it, since hflow's Context handle is the CUcontext itself.
// Device memory is managed memory (host UDFs read messages in place; Note
// [Managed memory for messages] in cuda_memory.cc), allocated in the
// device's primary context whatever the caller has bound, and every copy
// and fill is complete when the call returns, as the sim's are.
//
// Thread-safety: every public method may be called from any thread; the
// binding is the driver's, per thread; registries are guarded by mutexes.
#ifndef HFLOW_RT_CUDA_CUDA_RUNTIME_H_
#define HFLOW_RT_CUDA_CUDA_RUNTIME_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hflow/cluster.h"
#include "hflow/device_runtime.h"
#include "rt/cuda/cuda_driver.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace rt {

struct CudaOptions {
  ClusterConfig cluster = DefaultClusterConfig();
  // As SimOptions::default_device: overrides the cluster's; -1 disables the
  // implicit binding altogether.
  std::optional<int32_t> default_device;
  std::shared_ptr<CudaDriver> driver;  // required (LoadCudaDriver or a fake)
};

class CudaRuntime final : public DeviceRuntime {
 public:
  // Initializes the driver and maps the cluster's local devices to GPUs;
  // kNotSupported when the driver sees no GPU or a GPU on which the host
  // may not touch managed memory while the GPU works (no concurrent
  // managed access), kInvalidArgument when the cluster lists more devices
  // than there are GPUs or an unknown default.
  static Status Create(CudaOptions options, std::shared_ptr<CudaRuntime>* out);
  ~CudaRuntime() override;

  const char* Name() const override { return "cuda"; }
  std::string DeviceLabel(int32_t device) const override;
  std::vector<int32_t> DeviceIds() const override;
  std::optional<int32_t> DefaultDevice() const override {
    return default_device_;
  }

  Status SetDevice(int32_t device) override;
  Status ResetDevice(int32_t device) override;
  Status GetDevice(int32_t* device) override;
  Status CreateContext(int32_t device, Context** ctx) override;
  Status DestroyContext(Context* ctx) override;
  Status SetCurrentContext(Context* ctx) override;
  Context* GetCurrentContext() noexcept override;
  Status GetContextDevice(const Context* ctx, int32_t* device) override;

  Status Malloc(int32_t device, size_t bytes, void** ptr) override;
  Status Free(int32_t device, void* ptr) override;
  Status Memcpy(int32_t device, void* dst, const void* src, size_t bytes,
                MemcpyKind kind) override;
  Status Memset(int32_t device, void* dst, int value, size_t bytes) override;
  Status Synchronize(int32_t device) override;
  Status GetMemInfo(int32_t device, uint64_t* free_bytes,
                    uint64_t* total_bytes) override;
  Status HostRegister(const void* ptr, size_t bytes) override;
  Status HostUnregister(const void* ptr) override;
  bool HostAccessible(int32_t device) const override;
  Status DriverCall(int32_t device, Op op) override;
  Status GetDeviceStats(int32_t device, DeviceStats* out) const override;

  int AddDeviceLostListener(LostListener fn) override;
  void RemoveDeviceLostListener(int id) override;

  // The driver ordinal and name of a logical device ("" / -1 if unknown).
  int Ordinal(int32_t device) const;
  std::string GpuName(int32_t device) const;

 private:
  struct Device;
  struct ContextRec {
    int32_t device = -1;
    bool is_default = false;
    bool alive = true;
    bool destroying = false;  // claimed by a DestroyContext in progress
  };
  struct Allocation {
    size_t bytes = 0;
    int32_t device = -1;  // kRegisteredHost for a host registration
  };
  static constexpr int32_t kRegisteredHost = -2;
  static constexpr int32_t kRegistering = -3;  // claimed, not yet registered

  explicit CudaRuntime(CudaOptions options);
  Status Start();
  Status AddDevice(const DeviceDesc& desc, int ordinal);
  // Frees what the runtime still holds (allocations, registrations,
  // retained primary contexts) at its end.
  void ReleaseEverything();

  Device* FindDevice(int32_t device) const;
  Status LookupDevice(Op op, int32_t device, Device** out) const;
  // The lost check and the binding rule (CheckBinding) of a device op.
  Status EnterDeviceOp(Op op, int32_t device, Device** dev);
  Status CheckBinding(Op op, Device* dev);
  // The logical device of the thread's current context `cur`.
  Status DeviceOfCurrent(Op op, CUcontext cur, int32_t* device);
  Status BindImplicitly(Device* dev);
  // Retains dev's primary context for one more reference (from zero: a
  // context created, registered as dev's default). Requires dev->mu.
  Status RetainPrimary(Op op, Device* dev, CUcontext* ctx);
  // Releases dev's primary context once nothing holds it (SetDevice
  // references, an implicit binding, live memory). Requires dev->mu.
  void ReleaseIfUnheld(Device* dev);
  void ReleasePrimary(Device* dev);
  // Drops one memory hold (an allocation ended or failed).
  void DropMemoryHold(Device* dev);
  // A failed driver call as a Status naming op, device and call; a sticky
  // error marks the device lost and runs the listeners, so the caller must
  // hold no runtime lock.
  Status DriverError(Op op, Device* dev, const char* call, CUresult r);
  // The same without the loss, for calls made under a runtime lock (a
  // sticky error repeats at the next call, which marks the loss).
  Status DriverErrorLocked(Op op, Device* dev, const char* call, CUresult r);
  void MarkLost(Device* dev, const std::string& why);
  std::optional<ContextRec> FindContext(CUcontext ctx) const;
  // The live allocation or registration holding [p, p + bytes), if any.
  bool FindAllocation(const void* p, size_t bytes, int32_t* owner) const;
  Status HostContext(CUcontext* ctx);
  // Runs `call` with `ctx` current, the caller's binding restored after.
  CUresult InContext(CUcontext ctx, const std::function<CUresult()>& call);

  const CudaOptions options_;
  CudaDriver* const driver_;
  std::optional<int32_t> default_device_;
  std::vector<std::unique_ptr<Device>> devices_;  // by logical id, ascending

  mutable util::Mutex contexts_mu_;
  std::map<CUcontext, ContextRec> contexts_ GUARDED_BY(contexts_mu_);

  mutable util::Mutex allocs_mu_;
  std::map<uintptr_t, Allocation> allocs_ GUARDED_BY(allocs_mu_);
  // The primary context host registrations are made in (the first
  // device's), retained from the first registration to the end.
  util::Mutex host_mu_;
  CUcontext host_ctx_ GUARDED_BY(host_mu_) = nullptr;

  util::Mutex listeners_mu_;
  int next_listener_ GUARDED_BY(listeners_mu_) = 1;
  std::vector<std::pair<int, LostListener>> listeners_
      GUARDED_BY(listeners_mu_);
};

// Makes a CudaRuntime on the real driver (LoadCudaDriver), or on the one
// SetCudaDriverForTesting gave.
Status MakeCudaRuntime(const ClusterConfig& cluster,
                       std::optional<int32_t> default_device,
                       std::shared_ptr<DeviceRuntime>* out);

// Test hook: while set, MakeCudaRuntime (the "cuda" backend of Initialize)
// runs on `driver` (a fake) instead of loading the real one; nullptr ends it.
void SetCudaDriverForTesting(std::shared_ptr<CudaDriver> driver);

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_CUDA_CUDA_RUNTIME_H_
