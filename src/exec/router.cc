// Router (see router.h): routes, replica choice, copies across devices,
// delivery and hand-off.
// Thread-safety: routes_ and the plan are read-only after Attach; the
// current run (delivery mode, sink, transaction) is per thread, set and
// read inside this file only.
#include "exec/router.h"

#include <algorithm>
#include <utility>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "util/fast_tls.h"

namespace hflow {
namespace exec {
namespace {

// The calling thread's current run: set by PoolRun and CurrentTransaction
// (executor threads), read by the deliveries and outputs it makes.
struct CurrentRun {
  bool non_blocking = false;
  DeliverySink* sink = nullptr;
  const rt::ScopedDevice* bound = nullptr;  // the pool run's binding
  uint64_t trans = 0;
  const services::MbufHead* input = nullptr;
  // Every input of the Proc call in progress (CurrentTransaction's).
  const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* inputs = nullptr;
  std::vector<uint64_t>* stream_counts = nullptr;  // StreamRun's
};
thread_local CurrentRun t_run HFLOW_FAST_TLS;

// Whether `h` is the head of an input of the Proc call in progress (the
// executor's inputs are all MbufFlowMsgs).
bool IsCurrentInput(const services::MbufHead& h) {
  if (t_run.input == &h) return true;
  if (t_run.inputs == nullptr) return false;
  for (const auto& m : *t_run.inputs) {
    if (m != nullptr &&
        &static_cast<const flow_func::MbufFlowMsg&>(*m).head() == &h) {
      return true;
    }
  }
  return false;
}

// The transaction id of a stream function's output on UDF output `idx`.
uint64_t NextStreamId(std::vector<uint64_t>* counts, uint32_t idx) {
  if (counts->size() <= idx) counts->resize(idx + 1, 0);
  return ++(*counts)[idx];
}

}  // namespace

Router::PoolRun::PoolRun(DeliverySink* sink, const rt::ScopedDevice* bound) {
  t_run.non_blocking = true;
  t_run.sink = sink;
  t_run.bound = bound;
}

Router::PoolRun::~PoolRun() {
  t_run.sink = nullptr;
  t_run.bound = nullptr;
  t_run.non_blocking = false;
}

Router::CurrentTransaction::CurrentTransaction(
    uint64_t trans, const services::MbufHead* input,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* inputs) {
  t_run.trans = trans;
  t_run.input = input;
  t_run.inputs = inputs;
}

Router::CurrentTransaction::~CurrentTransaction() {
  t_run.trans = 0;
  t_run.input = nullptr;
  t_run.inputs = nullptr;
}

Router::StreamRun::StreamRun() { t_run.stream_counts = &counts_; }

Router::StreamRun::~StreamRun() { t_run.stream_counts = nullptr; }

// Note [Replica choice]: a transaction's messages must meet in one replica,
// so the choice depends on the transaction id alone; it is mixed (splitmix64)
// rather than taken modulo, because ids often advance in strides (a batch of
// 4 carries ids 4, 8, 12, ..., which modulo 4 replicas would all land on
// replica 0).
//
// A message with a route label (load balancing: OutOptions' BalanceConfig,
// or SetRouteLabel) goes to (ReplicaOf(trans) + label - 1) % replicas:
// deterministic and stateless (no lock, no table on the delivery path), so
// cells with the same (transaction, label) from two producers meet in one
// replica, and the cells of one transaction go round the replicas from
// the transaction's own, spreading evenly (cell k of a NO_AFFINITY scatter
// to base + k - 1, row r of a ROW_AFFINITY gather to base + r). Label 0 is
// the transaction's replica, as without balancing. GE leaves this choice to
// its queue scheduler and, with dynamic scheduling, picks the least loaded
// instance per (transaction, label) and caches it; hflow's rule does not
// look at load.
size_t ReplicaOf(uint64_t trans_id, size_t replicas) {
  uint64_t z = trans_id + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<size_t>(z % replicas);
}

size_t ReplicaOf(uint64_t trans_id, uint32_t route_label, size_t replicas) {
  const size_t base = ReplicaOf(trans_id, replicas);
  if (route_label == 0) return base;
  return static_cast<size_t>((base + (route_label - 1) % replicas) % replicas);
}

namespace {
// The queue of `replicas` (one consumer node's, by replica) that a message
// with `head` goes to; a single replica needs no hash.
size_t PickReplica(const std::vector<size_t>& replicas,
                   const services::MbufHead& head) {
  return replicas.size() == 1
             ? replicas[0]
             : replicas[ReplicaOf(head.trans_id, head.route_label,
                                  replicas.size())];
}
}  // namespace

void Router::Attach(deploy::Deployment* deployment) {
  dep_ = deployment;
  svc_ = deployment->exchange();
  plan_ = &deployment->plan();
  pool_alloc_timeout_ms_ = deployment->options().alloc_timeout_ms;
  routes_.clear();
  for (size_t i = 0; i < plan_->queues.size(); ++i) {
    const deploy::QueuePlan& q = plan_->queues[i];
    auto& targets = routes_[q.producer.ToString()];
    if (q.graph_output) {
      targets.push_back({i});
      continue;
    }
    // One target per consumer node, its replicas in replica order.
    auto it = std::find_if(targets.begin(), targets.end(), [&](const auto& t) {
      const deploy::QueuePlan& first = plan_->queues[t.front()];
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

Router::OutputFn Router::OutputOf(const deploy::DeployedInstance& inst,
                                  uint32_t udf_outputs) {
  const deploy::NodeDef* n = plan_->graph.FindNode(inst.plan.node);
  // UDF output `idx` feeds node outputs j where output_map[j] == idx (or j ==
  // idx without a map). Their routes are resolved here, once, so emitting a
  // message builds no strings and searches no maps (Note [Proc hot path] in
  // udf_instance.cc).
  std::vector<std::vector<const RouteTargets*>> by_output(udf_outputs);
  for (uint32_t j = 0; j < n->output_num; ++j) {
    uint32_t idx = n->output_map.empty() ? j : n->output_map[j];
    const RouteTargets* targets = RoutesOf(deploy::OutputRef{n->name, j});
    if (idx < by_output.size() && targets != nullptr) {
      by_output[idx].push_back(targets);
    }
  }
  const uint32_t tag = dep_->ErrorNodeTag(n->name);
  return [this, by_output, tag](uint32_t idx,
                                std::shared_ptr<flow_func::MbufFlowMsg> msg) {
    // Note [An input passed on is not written]
    // An input the UDF passes on is one mbuf that other consumers of it
    // (on the same device) may be reading on their threads right now: its
    // head is left as it is (it has its transaction already). So is a
    // message a stream function dequeued and passes on: it has a
    // transaction id, and only a message given one here is new.
    services::MbufHead& h = msg->head();
    services::StampOutput(
        &h,
        [&] {
          return t_run.stream_counts == nullptr
                     ? t_run.trans
                     : NextStreamId(t_run.stream_counts, idx);
        },
        [&] { return t_run.stream_counts != nullptr || IsCurrentInput(h); },
        tag, t_run.input);
    if (idx >= by_output.size()) return FlowFunc::FLOW_FUNC_SUCCESS;
    for (const RouteTargets* targets : by_output[idx]) {
      Status s = RouteTo(*targets, msg->mbuf(), -1);
      if (!s.ok()) {
        // Some consumers may have the message and others not: only failing
        // the graph keeps transactions from being paired wrongly (Note
        // [Failing a graph] in deploy/deployer.cc).
        dep_->Fail(s.WithContext("node output delivery: "));
        return FlowFunc::FLOW_FUNC_ERR_QUEUE_ERROR;
      }
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  };
}

// Note [One copy into a worker]
// An instance in a worker process takes its inputs in its worker's
// segment: it copies each one there (RemoteInstance::PutInput), whatever
// device it is on. A message made on another device, copied first to the
// queue's device as for an instance in the host, would be copied twice
// on its way: half the bandwidth of an isolated hop across devices. Such
// a queue (LeaveUncopied) takes the message as it is, still the source
// device's, and the consumer's copy into its segment is the one copy
// across devices. The message keeps its device's memory until that copy
// is made, as a message queued on its own device would; a message for
// several consumers is shared by them, read-only, as on one device.
void Router::LeaveUncopied(size_t qi) {
  if (uncopied_.size() <= qi) uncopied_.resize(plan_->queues.size());
  uncopied_.at(qi) = 1;
}

Status Router::OnQueueDevice(size_t qi, const services::MbufPtr& mbuf,
                             services::MbufPtr* out, int32_t timeout_ms) {
  const int32_t device = plan_->queues[qi].device;
  if (mbuf->device() == device || (qi < uncopied_.size() && uncopied_[qi])) {
    *out = mbuf;
    return Status::OK();
  }
  services::MemoryGroup* g = dep_->Group(device);
  if (g == nullptr) {
    return svc_->CopyMbuf(mbuf, device, dep_->GroupName(), "deployer", out);
  }
  // A copy only adds to its device: it leaves one largest message free for
  // the consumers there (Note [Waiting for memory] in memory_group.cc).
  const services::AllocWait wait{
      t_run.non_blocking ? pool_alloc_timeout_ms_ : timeout_ms,
      plan_->options.max_alloc_bytes};
  return svc_->CopyMbuf(mbuf, *g, "deployer", out, wait);
}

Status Router::Deliver(size_t qi, const services::MbufPtr& mbuf,
                       int32_t timeout_ms) {
  services::MbufPtr m;
  HFLOW_RETURN_IF_ERROR(OnQueueDevice(qi, mbuf, &m, timeout_ms));
  if (t_run.non_blocking) {
    if (t_run.sink != nullptr && t_run.sink->TryTake(qi, &m)) {
      return Status::OK();
    }
    services::DeviceQueue& q = *dep_->queue(qi);
    // Current(): the UDF delivering may have switched the thread away.
    if (t_run.bound != nullptr && t_run.bound->device() == q.device() &&
        t_run.bound->Current()) {
      return svc_->EnqueueOverDepth(*t_run.bound, q, std::move(m));
    }
    return svc_->EnqueueOverDepth(q, std::move(m));
  }
  return svc_->Enqueue(*dep_->queue(qi), std::move(m), timeout_ms);
}

Status Router::Route(const deploy::OutputRef& producer,
                     const services::MbufPtr& mbuf, int32_t timeout_ms) {
  const RouteTargets* targets = RoutesOf(producer);
  if (targets == nullptr) return Status::OK();  // an unconsumed output
  return RouteTo(*targets, mbuf, timeout_ms);
}

const Router::RouteTargets* Router::RoutesOf(
    const deploy::OutputRef& producer) const {
  auto it = routes_.find(producer.ToString());
  return it == routes_.end() ? nullptr : &it->second;
}

Status Router::RouteTo(const RouteTargets& targets,
                       const services::MbufPtr& mbuf, int32_t timeout_ms) {
  for (const std::vector<size_t>& replicas : targets) {
    const size_t pick = PickReplica(replicas, mbuf->head());
    HFLOW_RETURN_IF_ERROR(Deliver(pick, mbuf, timeout_ms));
  }
  return Status::OK();
}

Status Router::Prepare(const RouteTargets& targets,
                       const services::MbufPtr& mbuf, Prepared* out,
                       int32_t timeout_ms) {
  for (const std::vector<size_t>& replicas : targets) {
    const size_t pick = PickReplica(replicas, mbuf->head());
    services::MbufPtr m;
    HFLOW_RETURN_IF_ERROR(OnQueueDevice(pick, mbuf, &m, timeout_ms));
    out->emplace_back(pick, std::move(m));
  }
  return Status::OK();
}

int32_t Router::FirstDeviceOf(const RouteTargets& targets,
                              uint64_t trans) const {
  // Feeds carry no route label (only a UDF sets one).
  const std::vector<size_t>& replicas = targets.front();
  return plan_
      ->queues[replicas.size() == 1
                   ? replicas[0]
                   : replicas[ReplicaOf(trans, replicas.size())]]
      .device;
}

}  // namespace exec
}  // namespace hflow
