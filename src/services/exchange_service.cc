// ExchangeService (see exchange_service.h).
// Thread-safety: devices_ and queues_ are guarded by mu_; objects found under
// it are shared_ptrs used outside it. Device work never runs under mu_.
#include "services/exchange_service.h"

#include <algorithm>
#include <optional>
#include <string>

namespace hflow {
namespace services {
namespace {
std::string Dev(int32_t d) { return "device " + std::to_string(d); }
}  // namespace

ExchangeService::ExchangeService(rt::DeviceRuntime* runtime,
                                 ExchangeOptions options)
    : ExchangeService(std::make_shared<rt::DeviceContexts>(runtime), options) {}

ExchangeService::ExchangeService(std::shared_ptr<rt::DeviceContexts> contexts,
                                 ExchangeOptions options)
    : runtime_(contexts->runtime()),
      options_(options),
      contexts_(std::move(contexts)) {
  lost_listener_ = runtime_->AddDeviceLostListener(
      [this](int32_t device) { OnDeviceLost(device); });
}

ExchangeService::~ExchangeService() {
  runtime_->RemoveDeviceLostListener(lost_listener_);
  std::map<uint32_t, std::shared_ptr<DeviceQueue>> queues;
  std::map<int32_t, DeviceState> devices;
  {
    util::MutexLock lock(mu_);
    queues.swap(queues_);
    devices.swap(devices_);
  }
  for (auto& [id, q] : queues) {
    rt::ScopedDevice bound(contexts_.get(), q->device());
    (void)runtime_->DriverCall(q->device(), rt::Op::kQueueDestroy);
    q->Close(Status::Cancelled("the exchange service is shutting down"));
  }
  for (auto& [device, state] : devices) {
    state.agent.reset();  // stops the agent thread first
    rt::ScopedDevice bound(contexts_.get(), device);
    for (auto& [name, group] : state.groups) (void)group->Destroy(bound);
  }
}

DeviceAgent* ExchangeService::AgentFor(int32_t device) {
  util::MutexLock lock(mu_);
  DeviceState& st = devices_[device];
  if (!st.agent) {
    st.agent = std::make_unique<DeviceAgent>(
        contexts_, device,
        [this, device](const rt::ScopedDevice& bound, const EventRequest& req,
                       EventReply* reply) {
          return HandleEvent(device, bound, req, reply);
        });
  }
  return st.agent.get();
}

Status ExchangeService::SubmitEventSync(int32_t device,
                                        const EventRequest& request,
                                        EventReply* reply, int32_t timeout_ms) {
  const char* name = SubEventName(SubEventOf(request));
  std::optional<rt::ScopedDevice> bound;
  if (options_.bind_at_entry) {
    bound.emplace(contexts_.get(), device);
    if (!bound->status().ok()) {
      return bound->status().WithContext(std::string(name) + " event on " +
                                         Dev(device) + ": binding: ");
    }
  }
  Status s = runtime_->DriverCall(device, rt::Op::kEventSubmit);
  if (s.ok()) s = AgentFor(device)->Call(request, reply, timeout_ms);
  return s.WithContext(std::string(name) + " event on " + Dev(device) +
                       " failed: ");
}

Status ExchangeService::HandleEvent(int32_t device,
                                    const rt::ScopedDevice& bound,
                                    const EventRequest& request,
                                    EventReply* reply) {
  HFLOW_RETURN_IF_ERROR(runtime_->DriverCall(device, rt::Op::kEventSubmit));
  std::shared_ptr<MemoryGroup> group;
  switch (SubEventOf(request)) {
    case SubEvent::kCreateGroup: {
      const auto& r = std::get<CreateGroupRequest>(request);
      if (r.group.empty() || r.size_bytes == 0) {
        return Status::InvalidArgument(
            "CreateGroup needs a name and a positive size");
      }
      HFLOW_RETURN_IF_ERROR(runtime_->DriverCall(device, rt::Op::kGroupCreate));
      util::MutexLock lock(mu_);
      auto& groups = devices_[device].groups;
      if (groups.count(r.group)) {
        return Status::AlreadyExists("memory group '" + r.group +
                                     "' already exists on " + Dev(device));
      }
      groups[r.group] = MemoryGroup::Create(contexts_, device, r.group,
                                            r.size_bytes, r.creator);
      return Status::OK();
    }
    case SubEvent::kAddGroup: {
      const auto& r = std::get<AddGroupRequest>(request);
      HFLOW_RETURN_IF_ERROR(FindGroup(device, r.group, &group));
      HFLOW_RETURN_IF_ERROR(
          runtime_->DriverCall(device, rt::Op::kGroupAddMember));
      return group->AddMember(r.by, r.member, r.permissions);
    }
    case SubEvent::kAllocCache: {
      const auto& r = std::get<AllocCacheRequest>(request);
      HFLOW_RETURN_IF_ERROR(FindGroup(device, r.group, &group));
      return group->AllocCache(bound, r.size_bytes, r.max_alloc_bytes);
    }
    case SubEvent::kAllocMbuf: {
      const auto& r = std::get<AllocMbufRequest>(request);
      HFLOW_RETURN_IF_ERROR(FindGroup(device, r.group, &group));
      HFLOW_RETURN_IF_ERROR(runtime_->DriverCall(device, rt::Op::kMbufAlloc));
      return group->Alloc(bound, r.member, r.size, &reply->mbuf);
    }
    case SubEvent::kFreeMbuf: {
      const auto& r = std::get<FreeMbufRequest>(request);
      if (!r.mbuf || r.mbuf->device() != device) {
        return Status::InvalidArgument("FreeMbuf: the mbuf is null or not on " +
                                       Dev(device));
      }
      return runtime_->DriverCall(device, rt::Op::kMbufFree);
      // The request's reference drops with the event.
    }
    case SubEvent::kCopyQMbuf:
      return CopyQMbuf(bound, std::get<CopyQMbufRequest>(request));
  }
  return Status::Internal("unknown event");
}

Status ExchangeService::CopyQMbuf(const rt::ScopedDevice& bound,
                                  const CopyQMbufRequest& r) {
  std::shared_ptr<DeviceQueue> src, dst;
  HFLOW_RETURN_IF_ERROR(FindQueue(r.src_queue, &src));
  HFLOW_RETURN_IF_ERROR(FindQueue(r.dst_queue, &dst));
  if (dst->device() != bound.device()) {
    return Status::InvalidArgument(
        "CopyQMbuf: destination queue " + std::to_string(r.dst_queue) +
        " is on " + Dev(dst->device()) + "; submit the event to that device");
  }
  // Check what can be checked before taking the mbuf out of its queue.
  std::shared_ptr<MemoryGroup> g;
  HFLOW_RETURN_IF_ERROR(FindGroup(dst->device(), r.dst_group, &g));
  HFLOW_RETURN_IF_ERROR(g->CheckPermission(r.member, kPermAlloc));
  MbufPtr in, out;
  HFLOW_RETURN_IF_ERROR(src->Dequeue(&in, r.timeout_ms));
  Status s = CopyMbuf(in, dst->device(), r.dst_group, r.member, &out);
  if (s.ok()) s = dst->Enqueue(std::move(out), r.timeout_ms);
  if (!s.ok()) (void)src->Return(std::move(in));  // nothing is lost
  return s;
}

Status ExchangeService::FindGroup(int32_t device, const std::string& name,
                                  std::shared_ptr<MemoryGroup>* out) const {
  util::MutexLock lock(mu_);
  auto d = devices_.find(device);
  if (d != devices_.end()) {
    auto g = d->second.groups.find(name);
    if (g != d->second.groups.end()) {
      *out = g->second;
      return Status::OK();
    }
  }
  return Status::NotFound("memory group '" + name + "' does not exist on " +
                          Dev(device) + "; create it with CreateGroup first");
}

Status ExchangeService::FindQueue(uint32_t id,
                                  std::shared_ptr<DeviceQueue>* out) const {
  util::MutexLock lock(mu_);
  auto it = queues_.find(id);
  if (it == queues_.end()) {
    return Status::NotFound("queue " + std::to_string(id) +
                            " does not exist (never created or destroyed)");
  }
  *out = it->second;
  return Status::OK();
}

Status ExchangeService::AllocMbuf(int32_t device, const std::string& group,
                                  const std::string& member, uint64_t size,
                                  MbufPtr* out, const AllocWait& wait) {
  std::shared_ptr<MemoryGroup> g;
  HFLOW_RETURN_IF_ERROR(FindGroup(device, group, &g));
  return AllocMbuf(*g, member, size, out, wait);
}

Status ExchangeService::OpenGroup(int32_t device, const std::string& group,
                                  std::shared_ptr<MemoryGroup>* out) const {
  return FindGroup(device, group, out);
}

Status ExchangeService::AllocMbuf(MemoryGroup& g, const std::string& member,
                                  uint64_t size, MbufPtr* out,
                                  const AllocWait& wait) {
  rt::ScopedDevice bound(contexts_.get(), g.device());
  HFLOW_RETURN_IF_ERROR(bound.status());
  HFLOW_RETURN_IF_ERROR(runtime_->DriverCall(g.device(), rt::Op::kMbufAlloc));
  return g.Alloc(bound, member, size, out, wait);
}

Status ExchangeService::BuildHostMbuf(int32_t device, const void* data,
                                      uint64_t size,
                                      std::shared_ptr<const void> keep,
                                      MbufPtr* out) {
  rt::ScopedDevice bound(contexts_.get(), device);
  HFLOW_RETURN_IF_ERROR(bound.status());
  HFLOW_RETURN_IF_ERROR(runtime_->DriverCall(device, rt::Op::kMbufAlloc));
  // The mbuf never writes through the pointer: nodes read fed messages.
  *out = MakeHostMbuf(device, const_cast<void*>(data), size, std::move(keep));
  return Status::OK();
}

Status ExchangeService::DestroyGroup(int32_t device, const std::string& name) {
  std::shared_ptr<MemoryGroup> g;
  HFLOW_RETURN_IF_ERROR(FindGroup(device, name, &g));
  rt::ScopedDevice bound(contexts_.get(), device);
  HFLOW_RETURN_IF_ERROR(bound.status());
  // On a lost device the group is gone anyway: release its memory (Free
  // succeeds on a lost device) and unregister it, as DestroyQueue does.
  Status s = runtime_->DriverCall(device, rt::Op::kGroupDestroy);
  if (!s.ok() && !s.IsDeviceLost()) return s;
  HFLOW_RETURN_IF_ERROR(g->Destroy(bound));
  util::MutexLock lock(mu_);
  devices_[device].groups.erase(name);
  return Status::OK();
}

Status ExchangeService::RetireGroup(int32_t device, const std::string& name) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Status s = DestroyGroup(device, name);
    if (s.code() != StatusCode::kFailedPrecondition) return s;
    std::shared_ptr<MemoryGroup> g;
    if (!FindGroup(device, name, &g).ok()) return s;
    // The last mbuf went meanwhile: destroy it after all.
    if (g->Stats().live_mbufs == 0) continue;
    // The mbufs hold the group; ~MemoryGroup frees its caches, on its
    // device, when the last of them goes.
    util::MutexLock lock(mu_);
    devices_[device].groups.erase(name);
    return Status::OK();
  }
  return DestroyGroup(device, name);
}

Status ExchangeService::CreateQueue(int32_t device, uint32_t depth,
                                    const std::string& name, uint32_t* id,
                                    QueuePolicy policy) {
  if (depth == 0) {
    return Status::InvalidArgument("CreateQueue on " + Dev(device) +
                                   ": depth must be positive");
  }
  rt::ScopedDevice bound(contexts_.get(), device);
  HFLOW_RETURN_IF_ERROR(bound.status());
  HFLOW_RETURN_IF_ERROR(runtime_->DriverCall(device, rt::Op::kQueueCreate));
  util::MutexLock lock(mu_);
  uint32_t qid = next_queue_id_++;
  queues_[qid] =
      std::make_shared<DeviceQueue>(qid, device, depth, name, policy);
  *id = qid;
  return Status::OK();
}

// Binds the queue's device first: every destroy path (undeploy pool
// threads, rollback, shutdown) goes through here.
Status ExchangeService::DestroyQueue(uint32_t id) {
  std::shared_ptr<DeviceQueue> q;
  HFLOW_RETURN_IF_ERROR(FindQueue(id, &q));
  rt::ScopedDevice bound(contexts_.get(), q->device());
  HFLOW_RETURN_IF_ERROR(bound.status());
  // On a lost device the queue is gone anyway: unregister it (as Free on a
  // lost device releases), so cleanup paths can finish.
  Status s = runtime_->DriverCall(q->device(), rt::Op::kQueueDestroy);
  if (!s.ok() && !s.IsDeviceLost()) return s;
  q->Close(Status::Cancelled("destroyed"));
  util::MutexLock lock(mu_);
  queues_.erase(id);
  return Status::OK();
}

Status ExchangeService::OpenQueue(uint32_t id,
                                  std::shared_ptr<DeviceQueue>* out) const {
  return FindQueue(id, out);
}

Status ExchangeService::Enqueue(uint32_t id, MbufPtr mbuf, int32_t timeout_ms) {
  std::shared_ptr<DeviceQueue> q;
  HFLOW_RETURN_IF_ERROR(FindQueue(id, &q));
  return Enqueue(*q, std::move(mbuf), timeout_ms);
}

Status ExchangeService::Dequeue(uint32_t id, MbufPtr* out, int32_t timeout_ms) {
  std::shared_ptr<DeviceQueue> q;
  HFLOW_RETURN_IF_ERROR(FindQueue(id, &q));
  return Dequeue(*q, out, timeout_ms);
}

Status ExchangeService::Enqueue(DeviceQueue& q, MbufPtr mbuf,
                                int32_t timeout_ms) {
  rt::ScopedDevice bound(contexts_.get(), q.device());
  HFLOW_RETURN_IF_ERROR(bound.status());
  HFLOW_RETURN_IF_ERROR(
      runtime_->DriverCall(q.device(), rt::Op::kQueueEnqueue));
  return q.Enqueue(std::move(mbuf), timeout_ms);
}

Status ExchangeService::EnqueueOverDepth(DeviceQueue& q, MbufPtr mbuf) {
  rt::ScopedDevice bound(contexts_.get(), q.device());
  HFLOW_RETURN_IF_ERROR(bound.status());
  HFLOW_RETURN_IF_ERROR(
      runtime_->DriverCall(q.device(), rt::Op::kQueueEnqueue));
  return q.PushOverDepth(std::move(mbuf));
}

Status ExchangeService::Dequeue(DeviceQueue& q, MbufPtr* out,
                                int32_t timeout_ms) {
  rt::ScopedDevice bound(contexts_.get(), q.device());
  HFLOW_RETURN_IF_ERROR(bound.status());
  HFLOW_RETURN_IF_ERROR(
      runtime_->DriverCall(q.device(), rt::Op::kQueueDequeue));
  return q.Dequeue(out, timeout_ms);
}

// Note [One driver call per queue operation]
// A queue operation on a thread that may be anywhere binds the queue's
// device for the call and restores the caller's context after: a save, a
// switch when needed, the driver call, a restore. An executor's run has
// bound the instance's device already (its ScopedDevice), and its inputs
// and same-device outputs live there, so for those the proof overloads make
// only the driver call, which the runtime checks against the thread's
// binding as it checks every call (a wrong proof fails Require; a thread
// switched away by a UDF is the caller's to catch with Current()). Fault
// injection and the call log see the same driver call as before.
Status ExchangeService::Dequeue(const rt::ScopedDevice& bound, DeviceQueue& q,
                                MbufPtr* out, int32_t timeout_ms) {
  HFLOW_RETURN_IF_ERROR(bound.Require(q.device()));
  HFLOW_RETURN_IF_ERROR(
      runtime_->DriverCall(q.device(), rt::Op::kQueueDequeue));
  return q.Dequeue(out, timeout_ms);
}

Status ExchangeService::EnqueueOverDepth(const rt::ScopedDevice& bound,
                                         DeviceQueue& q, MbufPtr mbuf) {
  HFLOW_RETURN_IF_ERROR(bound.Require(q.device()));
  HFLOW_RETURN_IF_ERROR(
      runtime_->DriverCall(q.device(), rt::Op::kQueueEnqueue));
  return q.PushOverDepth(std::move(mbuf));
}

Status ExchangeService::DequeueUpTo(DeviceQueue& q, size_t max,
                                    std::vector<MbufPtr>* out, size_t* taken) {
  *taken = 0;
  if (q.Size() == 0) return Status::OK();  // nothing to take: no driver call
  rt::ScopedDevice bound(contexts_.get(), q.device());
  HFLOW_RETURN_IF_ERROR(bound.status());
  HFLOW_RETURN_IF_ERROR(
      runtime_->DriverCall(q.device(), rt::Op::kQueueDequeue));
  *taken = q.DequeueUpTo(max, out);
  return Status::OK();
}

Status ExchangeService::CopyMbuf(const MbufPtr& src, int32_t dst_device,
                                 const std::string& dst_group,
                                 const std::string& member, MbufPtr* out) {
  if (!src) return Status::InvalidArgument("CopyMbuf: null source mbuf");
  std::shared_ptr<MemoryGroup> g;
  HFLOW_RETURN_IF_ERROR(FindGroup(dst_device, dst_group, &g));
  return CopyMbuf(src, *g, member, out);
}

// Note [Copies issued on the source]
// A pipeline stage hands its output to the next device while its thread is
// bound to its own device, the copy's source. Binding the destination for
// the copy and restoring afterwards cost two context switches per hop, for
// a copy the runtime accepts from either end. So when the calling thread is
// already on hflow's context of the source device and the destination
// group's cache can serve the block (no device call, so no binding needed
// there), the copy is issued on the source under the caller's binding.
// Otherwise (another binding, a user's context, a direct allocation) the
// destination is bound as before.
Status ExchangeService::CopyMbuf(const MbufPtr& src, MemoryGroup& g,
                                 const std::string& member, MbufPtr* out,
                                 const AllocWait& wait) {
  if (!src) return Status::InvalidArgument("CopyMbuf: null source mbuf");
  rt::Context* src_ctx = contexts_->Peek(src->device());
  MbufPtr copy;
  if (src_ctx != nullptr && src_ctx == runtime_->CurrentContextFast() &&
      g.AllocFromCache(member, src->size(), &copy, wait.keep_free).ok()) {
    return CopyInto(src, src->device(), std::move(copy), out);
  }
  const int32_t dst_device = g.device();
  rt::ScopedDevice bound(contexts_.get(), dst_device);
  HFLOW_RETURN_IF_ERROR(bound.status());
  HFLOW_RETURN_IF_ERROR(g.Alloc(bound, member, src->size(), &copy, wait));
  return CopyInto(src, dst_device, std::move(copy), out);
}

// Copies src's payload and head into `copy`, issuing the copy on `issuer`
// (the device the calling thread is bound to: one of the two ends).
Status ExchangeService::CopyInto(const MbufPtr& src, int32_t issuer,
                                 MbufPtr copy, MbufPtr* out) {
  // An aligned payload is re-aligned in the new block: the slack allocated
  // for alignment covers both offsets.
  const MbufHead& h = src->head();
  uint64_t from = h.data_offset, to = 0;
  if (h.align > 1) {
    auto p = reinterpret_cast<uintptr_t>(copy->data());
    to = (h.align - p % h.align) % h.align;
  }
  uint64_t n =
      src->size() - std::min<uint64_t>(src->size(), std::max(from, to));
  if (n > 0) {
    HFLOW_RETURN_IF_ERROR(
        runtime_->Memcpy(issuer, static_cast<char*>(copy->data()) + to,
                         static_cast<const char*>(src->data()) + from, n,
                         rt::MemcpyKind::kDeviceToDevice));
  }
  copy->head() = h;
  copy->head().data_offset = to;
  *out = std::move(copy);
  return Status::OK();
}

Status ExchangeService::WriteMbuf(const MbufPtr& mbuf, const void* src,
                                  uint64_t bytes, uint64_t offset) {
  if (!mbuf || offset > mbuf->size() || bytes > mbuf->size() - offset) {
    return Status::InvalidArgument("WriteMbuf: range outside the mbuf");
  }
  rt::ScopedDevice bound(contexts_.get(), mbuf->device());
  HFLOW_RETURN_IF_ERROR(bound.status());
  return runtime_->Memcpy(mbuf->device(),
                          static_cast<char*>(mbuf->data()) + offset, src, bytes,
                          rt::MemcpyKind::kHostToDevice);
}

Status ExchangeService::ReadMbuf(const MbufPtr& mbuf, void* dst, uint64_t bytes,
                                 uint64_t offset) {
  if (!mbuf || offset > mbuf->size() || bytes > mbuf->size() - offset) {
    return Status::InvalidArgument("ReadMbuf: range outside the mbuf");
  }
  rt::ScopedDevice bound(contexts_.get(), mbuf->device());
  HFLOW_RETURN_IF_ERROR(bound.status());
  return runtime_->Memcpy(mbuf->device(), dst,
                          static_cast<char*>(mbuf->data()) + offset, bytes,
                          rt::MemcpyKind::kDeviceToHost);
}

void ExchangeService::OnDeviceLost(int32_t device) {
  std::vector<std::shared_ptr<DeviceQueue>> lost;
  DeviceAgent* agent = nullptr;
  {
    util::MutexLock lock(mu_);
    for (auto& [id, q] : queues_) {
      if (q->device() == device) lost.push_back(q);
    }
    auto d = devices_.find(device);
    if (d != devices_.end()) agent = d->second.agent.get();
  }
  Status reason = Status::DeviceLost(Dev(device) + " is lost");
  for (auto& q : lost) q->Close(reason);
  if (agent != nullptr) agent->Fail(reason);
}

std::vector<DeviceServiceStats> ExchangeService::Stats() const {
  util::MutexLock lock(mu_);
  std::map<int32_t, DeviceServiceStats> by_device;
  for (const auto& [device, st] : devices_) {
    auto& s = by_device[device];
    s.device = device;
    s.groups = st.groups.size();
    for (const auto& [name, g] : st.groups)
      s.live_mbufs += g->Stats().live_mbufs;
  }
  for (const auto& [id, q] : queues_) {
    auto& s = by_device[q->device()];
    s.device = q->device();
    ++s.queues;
    s.dropped_msgs += q->dropped();
  }
  std::vector<DeviceServiceStats> out;
  for (auto& [d, s] : by_device) out.push_back(s);
  return out;
}

}  // namespace services
}  // namespace hflow
