// SimRuntime: the simulated device runtime (the default backend). Devices
// are host memory and host threads, but the context rules are those of a real
// accelerator runtime, enforced strictly, so that every bug of the kind
// docs/architecture.md describes fails an ordinary test:
//   - each thread's current context starts as none and is private to it;
//   - device-dependent calls check the binding; only the configured default
//     device gets the implicit-binding quirk, and each use is counted;
//   - per-device counters of contexts created and implicit bindings show
//     stray contexts on devices nothing should touch.
// For tests it records calls (thread name, op, device, bound context,
// result), injects faults (fail the Nth call of an op; lose a device) and
// models per-op latency.
//
// Thread-safety: every public method may be called from any thread.
// Contexts are never freed before the runtime is destroyed (only marked dead),
// so a stale or foreign handle is detected, never dereferenced after free.
#ifndef HFLOW_RT_SIM_SIM_RUNTIME_H_
#define HFLOW_RT_SIM_SIM_RUNTIME_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "hflow/cluster.h"
#include "hflow/device_runtime.h"
#include "rt/ctxcheck.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace rt {

// Explicitly "no default device" in SimOptions::default_device.
inline constexpr int32_t kNoDefaultDevice = -1;

struct SimOptions {
  ClusterConfig cluster = DefaultClusterConfig();
  // Overrides the cluster's default device; kNoDefaultDevice disables the
  // implicit-binding quirk altogether.
  std::optional<int32_t> default_device;
  bool record_calls = false;
  // hflow ctxcheck (rt/ctxcheck.h); unset: $HFLOW_CTXCHECK decides.
  std::optional<ctxcheck::Mode> ctxcheck;
};

// One recorded runtime call.
struct CallRecord {
  uint64_t seq = 0;
  std::string thread;  // name of the calling thread
  Op op = Op::kCount;
  int32_t device = -1;        // target device (-1: none, e.g. unbinding)
  int64_t bound_context = 0;  // id of the context bound at entry (0: none)
  int32_t bound_device = -1;  // its device (-1: none)
  bool implicit_binding = false;
  StatusCode result = StatusCode::kOk;
};

namespace sim {
struct SimContext;
struct SimDevice;
}  // namespace sim

class SimRuntime final : public DeviceRuntime {
 public:
  explicit SimRuntime(SimOptions options = {});
  ~SimRuntime() override;

  // Validates the options (unknown default device, empty cluster) first.
  static Status Create(SimOptions options, std::shared_ptr<SimRuntime>* out);

  const char* Name() const override { return "sim"; }
  std::vector<int32_t> DeviceIds() const override;
  std::optional<int32_t> DefaultDevice() const override;

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
  // Sim devices' memory is host memory: the host reads it in place.
  bool HostAccessible(int32_t device) const override {
    return FindDevice(device) != nullptr;
  }
  Status DriverCall(int32_t device, Op op) override;
  Status GetDeviceStats(int32_t device, DeviceStats* out) const override;

  // --- Test hooks ---
  // Fails the `nth` call (1 = the next one) of `op` counted from now, with
  // `error`. kAnyOp counts every faultable call (all but SetCurrentContext:
  // guards restore with it and real runtimes only fail it on bad handles).
  void InjectFault(Op op, uint64_t nth, Status error);
  void ClearFaults();
  // Calls are counted only while instrumentation is on (call counting, a
  // fault armed, call recording or a latency set), so uninstrumented hot
  // paths share no counter cache line between threads.
  void SetCountCalls(bool on);
  // Faultable calls counted (kAnyOp), or calls of one op.
  uint64_t CallCount(Op op = kAnyOp) const;
  void ResetCallCounts();
  // Every later device-dependent call on `device` fails with kDeviceLost;
  // lost-device listeners run (outside any runtime lock).
  void MarkDeviceLost(int32_t device);
  int AddDeviceLostListener(LostListener fn) override;
  void RemoveDeviceLostListener(int id) override;
  // Sleeps this long inside every call of `op` (e.g. model load latency).
  void SetOpLatency(Op op, std::chrono::microseconds latency);

  void SetRecordCalls(bool on);
  std::vector<CallRecord> CallLog() const;
  // hflow ctxcheck's mode (rt/ctxcheck.h): set at construction from
  // SimOptions::ctxcheck or $HFLOW_CTXCHECK; changeable later (a session
  // adopting a runtime, tests).
  void SetCtxCheck(ctxcheck::Mode mode);
  ctxcheck::Mode CtxCheck() const {
    return ctxcheck_.load(std::memory_order_relaxed);
  }
  void ClearCallLog();

  // Context id (>0) of a handle, 0 for nullptr or unknown handles.
  int64_t ContextId(const Context* ctx) const;
  // Stats of all devices, ascending id.
  std::vector<DeviceStats> AllDeviceStats() const;
  // Host memory registered now (HostRegister less HostUnregister): bytes
  // and registrations.
  uint64_t RegisteredHostBytes() const { return registered_bytes_.load(); }
  uint64_t HostRegistrations() const { return registrations_.load(); }

 private:
  friend struct SimAccess;
  using SimContext = sim::SimContext;
  using SimDevice = sim::SimDevice;

  Status ValidateOptions() const;
  // Clusters have a handful of devices: a linear scan beats hashing.
  SimDevice* FindDevice(int32_t device) const {
    for (size_t i = 0; i < device_ids_.size(); ++i) {
      if (device_ids_[i] == device) return devices_[i].get();
    }
    return nullptr;
  }
  Status LookupDevice(Op op, int32_t device, SimDevice** out) const;
  // The binding lives in the rt layer's thread slot (Note [Thread slot]).
  SimContext* BoundContext() const noexcept {
    const internal::ThreadSlot& s = internal::t_slot;
    return s.owner == runtime_id() ? reinterpret_cast<SimContext*>(s.ctx)
                                   : nullptr;
  }
  Status DriverCallSlow(int32_t device, Op op);
  void Bind(SimContext* ctx) noexcept;
  SimContext* FindContext(const Context* handle) const;
  SimContext* NewContext(SimDevice* dev, bool is_default);
  void KillContext(SimContext* ctx);
  SimContext* EnsureDefaultContext(SimDevice* dev);
  // The binding rule for device-dependent ops. `implicit` reports whether
  // the default-device quirk bound the thread.
  Status CheckBinding(Op op, SimDevice* dev, bool* implicit);
  // CheckBinding's unbound branch while ctxcheck is on: notes the finding,
  // then binds implicitly (report) or fails with EE1018 (strict).
  Status CheckedUnbound(Op op, SimDevice* dev, bool* implicit,
                        ctxcheck::Mode mode);
  // Binds `dev`'s default context because an unbound call needed one (the
  // quirk), counting it.
  SimContext* BindImplicitly(SimDevice* dev);
  // Notes a cross-device finding if ctxcheck is on: a call naming `device`
  // touched `touched`'s resources while the thread is bound to a context of
  // another device (registered host memory belongs to every device).
  void NoteCrossDevice(Op op, int32_t device, int32_t touched);
  // Instrumented's ctxcheck epilogue: finds calls still on an implicit
  // binding, keeps the thread's implicit-binding mark and reports the note.
  void CtxCheckEpilogue(Op op, int32_t device, SimContext* entry,
                        const Status& s);
  // Lookup + lost check + binding check.
  Status EnterDeviceOp(Op op, int32_t device, SimDevice** dev, bool* implicit);

  // Instrumentation: fault injection, latency, call log. `body` runs only if
  // no fault fires.
  template <typename Body>
  Status Instrumented(Op op, int32_t device, Body&& body);
  Status MaybeFault(Op op);
  void Record(Op op, int32_t device, SimContext* entry, bool implicit,
              const Status& s);
  void UpdateInstrumented() REQUIRES(instr_mu_);  // after a change

  // Whether [p, p + bytes) lies inside one live allocation (its device in
  // *device): answered from a per-thread cache while no allocation has been
  // freed since (Note [Allocation lookup cache]), else from the map under
  // allocs_mu_ (shared).
  bool FindAllocation(const void* p, size_t bytes, int32_t* device) const;

  SimOptions options_;
  std::optional<int32_t> default_device_;
  std::vector<std::unique_ptr<SimDevice>> devices_;  // ascending id
  std::vector<int32_t> device_ids_;                  // devices_[i]'s id

  // All contexts ever created (alive or dead), for handle validation.
  mutable util::Mutex contexts_mu_;
  std::deque<std::unique_ptr<SimContext>> contexts_ GUARDED_BY(contexts_mu_);
  std::unordered_set<const void*> context_set_ GUARDED_BY(contexts_mu_);
  std::atomic<int64_t> next_context_id_{1};
  // Tells this runtime apart from one later built at the same address, for
  // FindContext's per-thread cache of handles already validated.
  const uint64_t uid_;

  // Allocations of all devices: start address -> (size, device).
  struct Allocation {
    size_t bytes;
    int32_t device;
  };
  mutable util::SharedMutex allocs_mu_;
  std::map<uintptr_t, Allocation> allocs_ GUARDED_BY(allocs_mu_);
  // Bumped under allocs_mu_ (exclusive) by every Free: a cached lookup made
  // in an older epoch may name a dead allocation.
  std::atomic<uint64_t> allocs_epoch_{0};
  // Registered host memory lives in allocs_ too, under this device id, so
  // copies find it as they find device memory (sim_host_memory.cc).
  static constexpr int32_t kRegisteredHost = -2;
  std::atomic<uint64_t> registered_bytes_{0};
  std::atomic<uint64_t> registrations_{0};

  // Instrumentation state. `instrumented_` is the one relaxed load hot paths
  // pay when nothing is armed; ctxcheck rides on it (Note [ctxcheck costs
  // nothing when off]). `faulting_`: whether MaybeFault has work (counting,
  // faults, latency, recording), so that ctxcheck alone takes no lock.
  std::atomic<bool> instrumented_{false};
  std::atomic<bool> faulting_{false};
  std::atomic<ctxcheck::Mode> ctxcheck_{ctxcheck::Mode::kOff};
  std::atomic<bool> record_calls_{false};
  bool count_calls_ GUARDED_BY(instr_mu_) = false;
  mutable util::Mutex instr_mu_;
  struct Fault {
    Op op;
    uint64_t remaining;
    Status error;
  };
  std::vector<Fault> faults_ GUARDED_BY(instr_mu_);
  std::array<uint64_t, static_cast<size_t>(Op::kCount) + 1> call_counts_
      GUARDED_BY(instr_mu_){};
  std::array<std::chrono::microseconds, static_cast<size_t>(Op::kCount)>
      latency_ GUARDED_BY(instr_mu_){};
  bool any_latency_ GUARDED_BY(instr_mu_) = false;
  std::vector<CallRecord> log_ GUARDED_BY(instr_mu_);
  uint64_t next_seq_ GUARDED_BY(instr_mu_) = 1;

  mutable util::Mutex listeners_mu_;
  std::map<int, LostListener> lost_listeners_ GUARDED_BY(listeners_mu_);
  int next_listener_id_ GUARDED_BY(listeners_mu_) = 1;
};

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_SIM_SIM_RUNTIME_H_
