// DeviceRuntime: the injected device-runtime interface (in the spirit of
// LevelDB's Env and c10's DeviceGuardImpl). Everything in hflow that touches
// a device goes through one of these; `sim` (the default) simulates devices
// on host threads, `cuda` (later) drives real GPUs.
//
// Semantics every backend honours (docs/architecture.md):
// each thread has a current context, initially none; GetCurrentContext never
// binds; every device-dependent operation names its device and checks the
// calling thread's binding (match: proceed; other device: kContextMismatch;
// unbound: implicit binding only for the configured default device, else
// kNoContext naming the device).
//
// Errors every method may return: kInvalidArgument for a device id not in
// the cluster or a null out parameter; kDeviceLost once the device is lost
// (fault injection); on device-dependent operations kNoContext /
// kContextMismatch as above. A fault injected for the op (tests) returns
// its error instead. Further codes are listed per method.
//
// Thread-safety: all methods may be called concurrently from any thread.
#ifndef HFLOW_DEVICE_RUNTIME_H_
#define HFLOW_DEVICE_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hflow/status.h"

namespace hflow {
namespace rt {

// Opaque context handle. Backends define what it points to; callers only
// compare, store and pass it back.
class Context;

enum class MemcpyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };

// Every runtime operation, for call logs, fault injection and latency models.
// The driver-call ops (kEventSubmit...) are checked, logged and injectable
// exactly like the memory ops; the services layer performs them through
// DeviceRuntime::DriverCall before doing the work on its device agent.
enum class Op : int {
  kSetDevice,
  kResetDevice,
  kCreateContext,
  kDestroyContext,
  kSetCurrentContext,
  kMalloc,
  kFree,
  kMemcpy,
  kMemset,
  kSynchronize,
  kGetMemInfo,
  kEventSubmit,
  kGroupCreate,
  kGroupAddMember,
  kGroupDestroy,
  kMbufAlloc,
  kMbufFree,
  kQueueCreate,
  kQueueDestroy,
  kQueueEnqueue,
  kQueueDequeue,
  kModelLoad,
  kModelUnload,
  kModelExecute,
  kHostRegister,
  kHostUnregister,
  kCount,  // number of ops; also "any op" in fault specs
};
inline constexpr Op kAnyOp = Op::kCount;

// Stable name of an op ("Malloc", "QueueDestroy", ...).
const char* OpName(Op op);

// Per-device counters every backend reports (hflow run --stats).
struct DeviceStats {
  int32_t device_id = 0;
  uint64_t contexts_created = 0;  // default and user contexts, ever
  uint64_t contexts_alive = 0;
  uint64_t implicit_bindings = 0;  // the default-device quirk, ever
  uint64_t mem_capacity_bytes = 0;
  uint64_t mem_used_bytes = 0;
  uint64_t mem_peak_bytes = 0;
  uint64_t live_allocations = 0;
  int64_t default_context_refs = 0;  // SetDevice minus ResetDevice
  bool lost = false;
};

class DeviceRuntime;

namespace internal {
// Note [Thread slot]: a backend whose current context is process-local state
// (sim) keeps each thread's binding here, in the rt layer, so that the
// guard at every public entry point reads it inline: one %fs-relative load
// (initial-exec TLS), no virtual call. `owner` is the id of the runtime the
// binding belongs to; a binding made under another runtime instance reads as
// none. Backends whose context lives in a driver (CUDA) leave the slot alone
// and answer through GetCurrentContext.
struct ThreadSlot {
  uint64_t owner = 0;
  Context* ctx = nullptr;
};
extern thread_local ThreadSlot t_slot
    __attribute__((tls_model("initial-exec")));
}  // namespace internal

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;
  DeviceRuntime(const DeviceRuntime&) = delete;
  DeviceRuntime& operator=(const DeviceRuntime&) = delete;

  // Unique per instance, never reused within a process. Never fails.
  uint64_t runtime_id() const noexcept { return id_; }

  // GetCurrentContext without the virtual call for slot-backed runtimes.
  // Never fails; no side effect.
  Context* CurrentContextFast() noexcept {
    if (slot_backed_) {
      const internal::ThreadSlot& s = internal::t_slot;
      return s.owner == id_ ? s.ctx : nullptr;
    }
    return GetCurrentContext();
  }

  // "sim", "cuda". Never fails.
  virtual const char* Name() const = 0;
  // What stands for `device` ("GPU 0 (NVIDIA H100 80GB HBM3)"; the backend's
  // name where nothing more is known). Never fails.
  virtual std::string DeviceLabel(int32_t device) const { return Name(); }
  // Device ids of the local node, ascending. Never fails.
  virtual std::vector<int32_t> DeviceIds() const = 0;
  // The device an unbound thread falls back to, if any. Never fails.
  virtual std::optional<int32_t> DefaultDevice() const = 0;

  // --- Contexts (ACL semantics) ---
  // Binds `device`'s default context, creating it on first use; reference
  // counted against ResetDevice.
  virtual Status SetDevice(int32_t device) = 0;
  // Drops one SetDevice reference; the last one destroys the default context.
  // kFailedPrecondition when no SetDevice reference is held.
  virtual Status ResetDevice(int32_t device) = 0;
  // Device of the bound context; kNoContext when unbound. Never binds.
  virtual Status GetDevice(int32_t* device) = 0;
  // Creates a user context on `device` and binds it.
  virtual Status CreateContext(int32_t device, Context** ctx) = 0;
  // Destroys a user context (default contexts go with ResetDevice).
  // kInvalidArgument for an unknown, dead or default context.
  virtual Status DestroyContext(Context* ctx) = 0;
  // Binds `ctx`; nullptr unbinds. kInvalidArgument for an unknown or
  // destroyed context (the binding is left as it was).
  virtual Status SetCurrentContext(Context* ctx) = 0;
  // The bound context or nullptr. No side effect, ever.
  virtual Context* GetCurrentContext() noexcept = 0;
  // Device a context belongs to; kInvalidArgument for an unknown handle.
  virtual Status GetContextDevice(const Context* ctx, int32_t* device) = 0;

  // --- Device-dependent operations (check the binding) ---
  // Malloc: kOutOfMemory when the device's memory (the cluster config's
  // memory_bytes) cannot hold `bytes`. Free: kInvalidArgument for a
  // pointer that is not a live allocation of `device`. Memcpy/Memset:
  // kInvalidArgument for ranges outside live allocations or of the wrong
  // device. Synchronize waits for the device's work (none pending in sim).
  virtual Status Malloc(int32_t device, size_t bytes, void** ptr) = 0;
  virtual Status Free(int32_t device, void* ptr) = 0;
  // `device` issues the copy; for kDeviceToDevice it must own src or dst.
  virtual Status Memcpy(int32_t device, void* dst, const void* src,
                        size_t bytes, MemcpyKind kind) = 0;
  virtual Status Memset(int32_t device, void* dst, int value, size_t bytes) = 0;
  virtual Status Synchronize(int32_t device) = 0;
  virtual Status GetMemInfo(int32_t device, uint64_t* free_bytes,
                            uint64_t* total_bytes) = 0;
  // --- Registered host memory (device-independent; need no binding) ---
  // Makes [ptr, ptr + bytes) of host memory usable by every device's
  // copies (as cudaHostRegister with the portable flag): a device-to-device
  // or device-to-host copy may then name it as a device-side pointer of any
  // device. kInvalidArgument for null, zero bytes, or a range overlapping
  // a registration or an allocation.
  virtual Status HostRegister(const void* ptr, size_t bytes) = 0;
  // Ends the registration starting at `ptr`; kInvalidArgument when none
  // starts there.
  virtual Status HostUnregister(const void* ptr) = 0;
  // Whether the host may read `device`'s memory in place (a fetched view
  // then needs no copy). Never fails; no side effect.
  virtual bool HostAccessible(int32_t device) const = 0;

  // A driver operation the services layer performs on `device` (queue,
  // group, mbuf, event, model ops): binding check, fault injection, logging
  // and latency, nothing else.
  virtual Status DriverCall(int32_t device, Op op) = 0;

  // Counters of one device; kInvalidArgument for an unknown id.
  virtual Status GetDeviceStats(int32_t device, DeviceStats* out) const = 0;

  // Device-loss notifications, so that services can wake waiters promptly.
  // Listeners run on the thread that detects the loss, outside runtime locks.
  // Add returns an id for Remove; neither fails. Remove waits for nothing:
  // a listener already running may still finish.
  using LostListener = std::function<void(int32_t device)>;
  virtual int AddDeviceLostListener(LostListener fn) = 0;
  virtual void RemoveDeviceLostListener(int id) = 0;

 protected:
  // `slot_backed`: the backend keeps bindings in internal::t_slot.
  explicit DeviceRuntime(bool slot_backed);

 private:
  const uint64_t id_;
  const bool slot_backed_;
};

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_DEVICE_RUNTIME_H_
