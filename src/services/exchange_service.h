// ExchangeService: the services layer's facade for the deployer and the
// executors: synchronous proxy events to per-device event schedulers, memory
// groups and mbufs, device queues and cross-device copies.
//
// Note [Bind at the entry]: every public method binds the device it targets
// at its entry (rt::ScopedDevice) and restores the caller's exact binding on
// exit. Binding there covers every caller (a deploy pool thread that
// never bound anything, the user's thread, an executor bound to another
// device; all of hflow's bind points: Note [Where hflow binds a device] in
// rt/device_binding.h) and is the fix for GE's seed bug, where pool threads
// reached SubmitEventSync unbound. ExchangeOptions::bind_at_entry = false
// exists only so that a test can prove its regression test catches that bug.
//
// Devices get a context (and an agent thread) only when first used, so a
// service on a {0..7} cluster used on {2..5} never touches 0, 1, 6 or 7.
//
// Thread-safety: all methods are thread-safe.
#ifndef HFLOW_SERVICES_EXCHANGE_SERVICE_H_
#define HFLOW_SERVICES_EXCHANGE_SERVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hflow/device_runtime.h"
#include "rt/device_binding.h"
#include "services/device_queue.h"
#include "services/event_scheduler.h"
#include "services/events.h"
#include "services/memory_group.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace services {

struct ExchangeOptions {
  // Test-only: false reproduces the seed bug (see Note [Bind at the entry]).
  bool bind_at_entry = true;
};

struct DeviceServiceStats {
  int32_t device = 0;
  size_t queues = 0;
  size_t groups = 0;
  uint64_t live_mbufs = 0;
  uint64_t dropped_msgs = 0;  // dropped by OVERWRITE queues (live ones)
};

class ExchangeService {
 public:
  // Binds through `contexts`, the session's registry (shared: memory
  // groups that outlive the service, held by messages, still bind with it).
  explicit ExchangeService(std::shared_ptr<rt::DeviceContexts> contexts,
                           ExchangeOptions options = {});
  // The same with a registry of its own on `runtime` (standalone use:
  // tests, benchmarks).
  explicit ExchangeService(rt::DeviceRuntime* runtime,
                           ExchangeOptions options = {});
  // Destroys every queue and group and stops the agents, each on a thread
  // bound to its device.
  ~ExchangeService();
  ExchangeService(const ExchangeService&) = delete;
  ExchangeService& operator=(const ExchangeService&) = delete;

  // --- Proxy events (executed by the device's agent) ---
  Status SubmitEventSync(int32_t device, const EventRequest& request,
                         EventReply* reply, int32_t timeout_ms = -1);

  // --- Direct operations ---
  // Allocates from `group` on `device` on the calling thread (executors).
  // `wait`: how the allocation waits for a free block (MemoryGroup::Alloc).
  Status AllocMbuf(int32_t device, const std::string& group,
                   const std::string& member, uint64_t size, MbufPtr* out,
                   const AllocWait& wait = {});
  // A group handle for the per-message paths below (no registry lookup per
  // message). The handle stays valid after DestroyGroup; allocating from a
  // destroyed group then fails.
  Status OpenGroup(int32_t device, const std::string& group,
                   std::shared_ptr<MemoryGroup>* out) const;
  // An mbuf over `size` bytes of registered host memory at `data` for
  // `device` (a zero-copy feed: as halMbufBuild over user memory), holding
  // `keep` until its last reference goes. A driver call on `device`, which
  // is bound for it; the caller's binding is kept.
  Status BuildHostMbuf(int32_t device, const void* data, uint64_t size,
                       std::shared_ptr<const void> keep, MbufPtr* out);
  Status AllocMbuf(MemoryGroup& group, const std::string& member, uint64_t size,
                   MbufPtr* out, const AllocWait& wait = {});
  // Destroys `group`; kFailedPrecondition while its mbufs are alive (the
  // group stays, usable).
  Status DestroyGroup(int32_t device, const std::string& group);
  // As DestroyGroup, except that a group whose mbufs are still alive (a
  // caller's fetched view) is taken out of the service at once and its
  // memory freed with its last mbuf: an undeploy neither waits for the
  // caller nor leaves the pool behind until shutdown.
  Status RetireGroup(int32_t device, const std::string& group);

  Status CreateQueue(int32_t device, uint32_t depth, const std::string& name,
                     uint32_t* id, QueuePolicy policy = QueuePolicy::kFifo);
  Status DestroyQueue(uint32_t id);
  Status Enqueue(uint32_t id, MbufPtr mbuf, int32_t timeout_ms);
  Status Dequeue(uint32_t id, MbufPtr* out, int32_t timeout_ms);

  // Queue handles for hot paths: resolve the id once (at deploy time), then
  // skip the registry lookup per message. The handle stays valid after the
  // queue is destroyed; operations on it then fail with the close reason.
  Status OpenQueue(uint32_t id, std::shared_ptr<DeviceQueue>* out) const;
  Status Enqueue(DeviceQueue& q, MbufPtr mbuf, int32_t timeout_ms);
  Status Dequeue(DeviceQueue& q, MbufPtr* out, int32_t timeout_ms);
  // Takes what is queued, up to `max`, without waiting (one driver call for
  // the lot, as a real batch dequeue); *taken says how many were appended.
  Status DequeueUpTo(DeviceQueue& q, size_t max, std::vector<MbufPtr>* out,
                     size_t* taken);
  // Enqueue that never waits: the depth is the caller's to keep
  // (DeviceQueue::PushOverDepth). Same binding and driver call as Enqueue.
  Status EnqueueOverDepth(DeviceQueue& q, MbufPtr mbuf);

  // The same operations on a thread the caller has bound to the queue's
  // device already (an executor's run): `bound` is the proof, and must be
  // current on this thread (ScopedDevice::Current). They make one checked
  // driver call and no binding call: no save, switch or restore of the
  // thread's context (Note [One driver call per queue operation]).
  Status Dequeue(const rt::ScopedDevice& bound, DeviceQueue& q, MbufPtr* out,
                 int32_t timeout_ms);
  Status EnqueueOverDepth(const rt::ScopedDevice& bound, DeviceQueue& q,
                          MbufPtr mbuf);

  // Copies `src` (data and head) into a new mbuf of `dst_group` on
  // `dst_device`. The copy is issued on the source device when the calling
  // thread is already on hflow's context there and a cache of the group
  // serves the block; otherwise on the destination, which is bound for it
  // (Note [Copies issued on the source]). The caller's binding is kept.
  Status CopyMbuf(const MbufPtr& src, int32_t dst_device,
                  const std::string& dst_group, const std::string& member,
                  MbufPtr* out);
  Status CopyMbuf(const MbufPtr& src, MemoryGroup& dst,
                  const std::string& member, MbufPtr* out,
                  const AllocWait& wait = {});
  // Host <-> mbuf data transfers (bounds-checked).
  Status WriteMbuf(const MbufPtr& mbuf, const void* src, uint64_t bytes,
                   uint64_t offset = 0);
  Status ReadMbuf(const MbufPtr& mbuf, void* dst, uint64_t bytes,
                  uint64_t offset = 0);

  std::vector<DeviceServiceStats> Stats() const;
  rt::DeviceRuntime* runtime() const { return runtime_; }
  // The registry every binding of this service's users goes through (the
  // session's one).
  rt::DeviceContexts* contexts() const { return contexts_.get(); }
  // The same registry, shared: for what must keep the runtime alive as
  // long as it does (a worker's segment registered with it).
  const std::shared_ptr<rt::DeviceContexts>& shared_contexts() const {
    return contexts_;
  }

 private:
  Status CopyInto(const MbufPtr& src, int32_t issuer, MbufPtr copy,
                  MbufPtr* out);
  struct DeviceState {
    std::map<std::string, std::shared_ptr<MemoryGroup>> groups;
    std::unique_ptr<DeviceAgent> agent;
  };

  Status HandleEvent(int32_t device, const rt::ScopedDevice& bound,
                     const EventRequest& request, EventReply* reply);
  Status FindGroup(int32_t device, const std::string& name,
                   std::shared_ptr<MemoryGroup>* out) const;
  Status FindQueue(uint32_t id, std::shared_ptr<DeviceQueue>* out) const;
  Status CopyQMbuf(const rt::ScopedDevice& bound, const CopyQMbufRequest& r);
  DeviceAgent* AgentFor(int32_t device);
  void OnDeviceLost(int32_t device);

  rt::DeviceRuntime* const runtime_;
  const ExchangeOptions options_;
  const std::shared_ptr<rt::DeviceContexts> contexts_;
  int lost_listener_ = 0;

  mutable util::Mutex mu_;
  std::map<int32_t, DeviceState> devices_ GUARDED_BY(mu_);
  std::map<uint32_t, std::shared_ptr<DeviceQueue>> queues_ GUARDED_BY(mu_);
  uint32_t next_queue_id_ GUARDED_BY(mu_) = 1;
};

}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_EXCHANGE_SERVICE_H_
