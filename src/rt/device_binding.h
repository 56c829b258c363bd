// DeviceContexts and ScopedDevice: how hflow's own code binds a device.
//
// DeviceContexts holds one SetDevice reference per device it is asked for
// (lazily, so devices nobody uses never get a context) and hands out their
// default-context handles. ScopedDevice binds one of them for a scope and
// restores the thread's exact previous binding at exit; device operations
// inside hflow take a `const ScopedDevice&` as proof that the caller bound
// the right device, so an unbound call cannot be written (invariant 1).
//
// One registry serves a whole session: it lives in the session's
// environment (session/environment.h) and is passed down by pointer, to the
// exchange service and through it to the deployments and their pools.
//
// Note [Where hflow binds a device]
// hflow's own code binds a device only through a ScopedDevice (or, to take a
// device's reference, inside DeviceContexts), at these places, and nowhere
// else; a reviewer checks this list against the ScopedDevice constructions
// and the SetDevice / CreateContext / SetCurrentContext calls in src/:
//   - rt/device_binding.cc: DeviceContexts::GetSlow (SetDevice, once per
//     device, to take its reference; a ContextGuard restores the caller's
//     binding at once) and ScopedDevice::ScopedDevice / Reassert
//     (SetCurrentContext): the mechanism every place below uses.
//   - rt/thread_pool.cc: ThreadPool::RunBound, one ScopedDevice per device
//     task, handed to the task, which never binds again: the deploy tasks
//     (Deployment::CreateGroups, CreateQueues, LoadOne with the UDFs' Init,
//     Undeploy with their destructors).
//   - services/exchange_service.cc: every public method at its entry (Note
//     [Bind at the entry] in exchange_service.h): ~ExchangeService,
//     SubmitEventSync, AllocMbuf, DestroyGroup, CreateQueue, DestroyQueue,
//     Enqueue, EnqueueOverDepth, Dequeue, DequeueUpTo, CopyMbuf, WriteMbuf,
//     ReadMbuf.
//   - services/event_scheduler.cc: DeviceAgent::Loop, once at thread start.
//   - services/memory_group.cc: MemoryGroup::~MemoryGroup (caches given back
//     on an error path) and MemoryGroup::Release (the last reference to a
//     block may drop on any thread).
//   - exec/graph_runner.cc: GraphRunner::RunWorker, at the start of every
//     run (OnExit::kKeep), and Reassert before each later Proc of the run.
//   - exec/stream_worker.cc: StreamWorker::Body, once at thread start, and
//     Reassert before each call of the stream function.
//   - session/graph_state.cc: GraphState::MakeInputMbuf (a feed's input on
//     its consumer's device), BindFeed and BindFetch (once per feed or fetch
//     call, for FeedData, FeedDataBatch, FetchData and FetchDataBatch in
//     graph_state.cc, graph_state_batch.cc and graph_state_fetch.cc).
// Restoring is not binding: ContextGuard (rt/context_guard.cc) puts back a
// caller's exact handle at every session entry (session/session.cc) and
// around the thread pool's device-less tasks. UDF code may bind on its own;
// the places above bind again (Reassert) where that matters.
//
// Thread-safety: DeviceContexts is thread-safe. A ScopedDevice belongs to
// the thread that made it.
#ifndef HFLOW_RT_DEVICE_BINDING_H_
#define HFLOW_RT_DEVICE_BINDING_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "hflow/context_guard.h"
#include "hflow/device_runtime.h"
#include "hflow/status.h"

namespace hflow {
namespace rt {

class DeviceContexts {
 public:
  explicit DeviceContexts(rt::DeviceRuntime* runtime);
  // Shares ownership of `runtime`: the session's registry, which messages
  // (a fetched view) may keep alive past Finalize, when the session lets
  // go of the runtime.
  explicit DeviceContexts(std::shared_ptr<rt::DeviceRuntime> runtime);
  ~DeviceContexts();  // gives back every reference taken
  DeviceContexts(const DeviceContexts&) = delete;
  DeviceContexts& operator=(const DeviceContexts&) = delete;

  // Default context of `device`, taking a reference on first use. The
  // calling thread's binding is left exactly as it was.
  Status Get(int32_t device, rt::Context** ctx) {
    if (device >= 0 && device < kFastIds) {
      *ctx = fast_[device].load(std::memory_order_acquire);
      if (*ctx != nullptr) return Status::OK();
    }
    return GetSlow(device, ctx);
  }

  rt::DeviceRuntime* runtime() const { return runtime_; }

  // The default context of `device` if a reference is already held, else
  // null: never creates or binds anything (for "is this thread on it?").
  rt::Context* Peek(int32_t device) {
    if (device >= 0 && device < kFastIds) {
      return fast_[device].load(std::memory_order_acquire);
    }
    return PeekSlow(device);
  }

 private:
  Status GetSlow(int32_t device, rt::Context** ctx);
  rt::Context* PeekSlow(int32_t device);

  // Lock-free lookup for small device ids (the common case): Get runs on
  // every queue operation. Entries are written once, under mu_.
  static constexpr int32_t kFastIds = 64;
  std::atomic<rt::Context*> fast_[kFastIds] = {};

  const std::shared_ptr<rt::DeviceRuntime> owner_;  // may be null
  rt::DeviceRuntime* const runtime_;
  std::mutex mu_;
  std::map<int32_t, rt::Context*> held_;
};

class ScopedDevice {
 public:
  // What the scope leaves behind: the thread's previous binding (always, on
  // any thread a caller owns), or this device's (Note [Pool threads keep
  // their binding] in device_binding.cc: hflow's executor threads only).
  enum class OnExit { kRestore, kKeep };

  // Binds `device` (status() tells whether it worked); binding a thread
  // already on the device's context makes no runtime call.
  ScopedDevice(DeviceContexts* contexts, int32_t device,
               OnExit on_exit = OnExit::kRestore);
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

  const Status& status() const { return status_; }
  int32_t device() const { return device_; }
  rt::DeviceRuntime* runtime() const { return runtime_; }

  // Internal-error status unless this scope binds `device` (a programming
  // error: a token for the wrong device).
  Status Require(int32_t device) const;

  // Binds the scope's device again if something (a UDF) switched the
  // thread since; no runtime call when the thread is still on it.
  Status Reassert();

  // Whether the calling thread is on this scope's context right now: a
  // kKeep scope held across a UDF call may have been switched away from,
  // so a callee that takes it as proof of binding checks this first (one
  // thread-local read).
  bool Current() const {
    return status_.ok() && runtime_->CurrentContextFast() == ctx_;
  }

 private:
  rt::DeviceRuntime* const runtime_;
  const int32_t device_;
  ContextGuard guard_;  // restores the caller's exact binding (kRestore)
  rt::Context* ctx_ = nullptr;  // the device's context
  Status status_;
};

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_DEVICE_BINDING_H_
