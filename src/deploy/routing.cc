// Deployment's message routing (see deployer.h): which queue of a consumer's
// replicas a transaction goes to, copies across devices, and delivery, with
// the executor's non-blocking rules and hand-off on pool threads.
// Thread-safety: routes_ and the plan are read-only after Deploy returns;
// the delivery mode and sink are per thread.
#include <algorithm>
#include <utility>

#include "deploy/deployer.h"

namespace hflow {
namespace deploy {
namespace {

thread_local bool t_non_blocking_delivery = false;
thread_local DeliverySink* t_delivery_sink = nullptr;

}  // namespace

void SetDeliverySink(DeliverySink* sink) { t_delivery_sink = sink; }

void SetNonBlockingDelivery(bool enabled) { t_non_blocking_delivery = enabled; }

// Note [Replica choice]: a transaction's messages must meet in one replica,
// so the choice depends on the transaction id alone; it is mixed (splitmix64)
// rather than taken modulo, because ids often advance in strides (a batch of
// 4 carries ids 4, 8, 12, ..., which modulo 4 replicas would all land on
// replica 0).
size_t ReplicaOf(uint64_t trans_id, size_t replicas) {
  uint64_t z = trans_id + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<size_t>(z % replicas);
}

namespace {
// The queue of `replicas` (one consumer node's, by replica) that transaction
// `trans` goes to; a single replica needs no hash.
size_t PickReplica(const std::vector<size_t>& replicas, uint64_t trans) {
  return replicas.size() == 1 ? replicas[0]
                              : replicas[ReplicaOf(trans, replicas.size())];
}
}  // namespace

void Deployment::BuildRoutes() {
  for (size_t i = 0; i < plan_.queues.size(); ++i) {
    const QueuePlan& q = plan_.queues[i];
    auto& targets = routes_[q.producer.ToString()];
    if (q.graph_output) {
      targets.push_back({i});
      continue;
    }
    // One target per consumer node, its replicas in replica order.
    auto it = std::find_if(targets.begin(), targets.end(), [&](const auto& t) {
      const QueuePlan& first = plan_.queues[t.front()];
      return !first.graph_output && first.node == q.node &&
             first.input == q.input;
    });
    if (it == targets.end()) {
      targets.push_back({i});
    } else {
      it->push_back(i);
    }
  }
}

Status Deployment::OnQueueDevice(size_t qi, const services::MbufPtr& mbuf,
                                 services::MbufPtr* out, int32_t timeout_ms) {
  const int32_t device = plan_.queues[qi].device;
  if (mbuf->device() == device) {
    *out = mbuf;
    return Status::OK();
  }
  services::MemoryGroup* g = Group(device);
  if (g == nullptr) {
    return svc_->CopyMbuf(mbuf, device, GroupName(), "deployer", out);
  }
  // A copy only adds to its device: it leaves one largest message free for
  // the consumers there (Note [Waiting for memory] in memory_group.cc).
  const services::AllocWait wait{
      t_non_blocking_delivery ? opts_.alloc_timeout_ms : timeout_ms,
      plan_.options.max_alloc_bytes};
  return svc_->CopyMbuf(mbuf, *g, "deployer", out, wait);
}

Status Deployment::Deliver(size_t qi, const services::MbufPtr& mbuf,
                           int32_t timeout_ms) {
  services::MbufPtr m;
  HFLOW_RETURN_IF_ERROR(OnQueueDevice(qi, mbuf, &m, timeout_ms));
  if (t_non_blocking_delivery) {
    if (t_delivery_sink != nullptr && t_delivery_sink->TryTake(qi, &m)) {
      return Status::OK();
    }
    return svc_->EnqueueOverDepth(*queues_[qi], std::move(m));
  }
  return svc_->Enqueue(*queues_[qi], std::move(m), timeout_ms);
}

Status Deployment::Route(const OutputRef& producer,
                         const services::MbufPtr& mbuf, int32_t timeout_ms) {
  const RouteTargets* targets = RoutesOf(producer);
  if (targets == nullptr) return Status::OK();  // an unconsumed output
  return RouteTo(*targets, mbuf, timeout_ms);
}

const Deployment::RouteTargets* Deployment::RoutesOf(
    const OutputRef& producer) const {
  auto it = routes_.find(producer.ToString());
  return it == routes_.end() ? nullptr : &it->second;
}

Status Deployment::RouteTo(const RouteTargets& targets,
                           const services::MbufPtr& mbuf, int32_t timeout_ms) {
  for (const std::vector<size_t>& replicas : targets) {
    const size_t pick = PickReplica(replicas, mbuf->head().trans_id);
    HFLOW_RETURN_IF_ERROR(Deliver(pick, mbuf, timeout_ms));
  }
  return Status::OK();
}

Status Deployment::Prepare(const RouteTargets& targets,
                           const services::MbufPtr& mbuf, Prepared* out,
                           int32_t timeout_ms) {
  for (const std::vector<size_t>& replicas : targets) {
    const size_t pick = PickReplica(replicas, mbuf->head().trans_id);
    services::MbufPtr m;
    HFLOW_RETURN_IF_ERROR(OnQueueDevice(pick, mbuf, &m, timeout_ms));
    out->emplace_back(pick, std::move(m));
  }
  return Status::OK();
}

int32_t Deployment::FirstDeviceOf(const RouteTargets& targets,
                                  uint64_t trans) const {
  return plan_.queues[PickReplica(targets.front(), trans)].device;
}

}  // namespace deploy
}  // namespace hflow
