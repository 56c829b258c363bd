// Router: the per-message routing of a deployed graph. It resolves, once,
// the consumers of every producer (a graph input or a node output: one
// target per consumer node, that node's queues by replica, and the graph
// output), picks the replica a transaction goes to (Note [Replica choice]
// in router.cc), copies a message made on another device to the queue's
// device, and puts it in the queue: waiting on a full queue on callers'
// threads, pushing over the depth or handing it straight to an idle
// consumer on executor pool threads (PoolRun, Note [Hand-off] in
// exec_pool.cc). As the deployment's deploy::OutputWiring it gives every
// UDF instance its output function while Deploy builds the instances.
//
// Thread-safety: Attach runs once, inside Deploy, before any other call;
// after it the routes are read-only and every method may be called from
// many threads. PoolRun and CurrentTransaction set state of the calling
// thread only, read by the deliveries that thread makes.
#ifndef HFLOW_EXEC_ROUTER_H_
#define HFLOW_EXEC_ROUTER_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "deploy/deployer.h"

namespace hflow {
namespace exec {

// Where a pool thread's deliveries may go straight to their consumer
// instead of its queue (GraphRunner). TryTake gets the message already on
// the queue's device; true means it took it, false that it must be queued.
class DeliverySink {
 public:
  virtual ~DeliverySink() = default;
  virtual bool TryTake(size_t queue_index, services::MbufPtr* mbuf) = 0;
};

class Router : public deploy::OutputWiring {
 public:
  // A producer's targets: one consumer node's queue indexes by replica per
  // target; a graph output is a one-queue target.
  using RouteTargets = std::vector<std::vector<size_t>>;
  // (queue index, message on that queue's device) per delivery (Prepare).
  using Prepared = std::vector<std::pair<size_t, services::MbufPtr>>;

  Router() = default;
  Router(const Router&) = delete;
  Router& operator=(const Router&) = delete;

  // deploy::OutputWiring: resolves the routes of `deployment`'s plan.
  void Attach(deploy::Deployment* deployment) override;
  // deploy::OutputWiring: `inst`'s output function. Outputs the UDF leaves
  // without a transaction id or user data inherit the current
  // transaction's (CurrentTransaction); a failed delivery fails the graph.
  OutputFn OutputOf(const deploy::DeployedInstance& inst,
                    uint32_t udf_outputs) override;

  // Delivers `mbuf`, produced by `producer`, to every consumer queue: one
  // replica per consumer node (by transaction id) and the graph output.
  Status Route(const deploy::OutputRef& producer, const services::MbufPtr& mbuf,
               int32_t timeout_ms);
  // The producer's targets (null for an output nothing consumes), looked
  // up once so that RouteTo builds no string and searches no map.
  const RouteTargets* RoutesOf(const deploy::OutputRef& producer) const;
  Status RouteTo(const RouteTargets& targets, const services::MbufPtr& mbuf,
                 int32_t timeout_ms);
  // RouteTo in two steps, for a feed that must go in whole (Note [A
  // transaction goes in whole] in session/graph_state.cc): Prepare appends
  // a delivery for every queue RouteTo would deliver to, making the copies
  // across devices; Deliver then puts one in its queue.
  Status Prepare(const RouteTargets& targets, const services::MbufPtr& mbuf,
                 Prepared* out, int32_t timeout_ms);
  Status Deliver(size_t queue_index, const services::MbufPtr& mbuf,
                 int32_t timeout_ms);
  // Queue `qi`'s consumer copies its inputs itself (flow_func::Instance::
  // CopiesInputs): messages from other devices go in as they are. Before
  // any delivery (GraphRunner::Start).
  void LeaveUncopied(size_t qi);
  // The device of the queue RouteTo delivers transaction `trans` to first:
  // a message made there reaches that target with no copy.
  int32_t FirstDeviceOf(const RouteTargets& targets, uint64_t trans) const;

  // For its lifetime, the calling thread is an executor pool thread: its
  // deliveries never wait on a full queue (they push over the depth; the
  // executor keeps the bound by not running producers whose outputs are
  // full) and offer each message to `sink` first (null: none). Other
  // threads (feeders, UDF timers) wait as usual. `bound` (may be null) is
  // the run's binding: a delivery to a queue on its device, made while it
  // is still current, enqueues on it without binding again (Note [One
  // driver call per queue operation] in services/exchange_service.cc).
  class PoolRun {
   public:
    explicit PoolRun(DeliverySink* sink,
                     const rt::ScopedDevice* bound = nullptr);
    ~PoolRun();
    PoolRun(const PoolRun&) = delete;
    PoolRun& operator=(const PoolRun&) = delete;
  };
  // For its lifetime, the calling thread processes transaction `trans`
  // (with the head of its first input, and all its inputs, MbufFlowMsgs):
  // outputs a UDF leaves without a transaction id or user data inherit
  // them, so a transaction stays one transaction, with its user data,
  // through every node; an input passed on is never written.
  class CurrentTransaction {
   public:
    CurrentTransaction(
        uint64_t trans, const services::MbufHead* input,
        const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* inputs);
    ~CurrentTransaction();
    CurrentTransaction(const CurrentTransaction&) = delete;
    CurrentTransaction& operator=(const CurrentTransaction&) = delete;
  };
  // For its lifetime, the calling thread runs a stream function (Note
  // [Stream functions] in stream_worker.cc): outputs the UDF leaves
  // without a transaction id get a counter of their UDF output, 1, 2, 3,
  // ... (GE's numbering for stream procs); nothing else is inherited.
  class StreamRun {
   public:
    StreamRun();
    ~StreamRun();
    StreamRun(const StreamRun&) = delete;
    StreamRun& operator=(const StreamRun&) = delete;

   private:
    std::vector<uint64_t> counts_;  // per UDF output: ids given so far
  };

 private:
  // `mbuf` itself if it is on queue `qi`'s device, else a copy made there.
  // A copy waits up to `timeout_ms` for memory (alloc_timeout_ms on a pool
  // thread) and leaves one largest message free.
  Status OnQueueDevice(size_t qi, const services::MbufPtr& mbuf,
                       services::MbufPtr* out, int32_t timeout_ms);

  deploy::Deployment* dep_ = nullptr;
  services::ExchangeService* svc_ = nullptr;
  const deploy::Plan* plan_ = nullptr;
  int32_t pool_alloc_timeout_ms_ = 0;
  // Producer ("add:0", "a") -> its targets. Built by Attach; read-only
  // after.
  std::map<std::string, RouteTargets> routes_;
  // Per queue: LeaveUncopied's (read-only once deliveries begin).
  std::vector<char> uncopied_;
};

// The replica (of `replicas`) that transaction `trans_id` goes to.
size_t ReplicaOf(uint64_t trans_id, size_t replicas);
// The replica a message of transaction `trans_id` with `route_label` goes
// to (label 0: ReplicaOf(trans_id, replicas)).
size_t ReplicaOf(uint64_t trans_id, uint32_t route_label, size_t replicas);

}  // namespace exec
}  // namespace hflow

#endif  // HFLOW_EXEC_ROUTER_H_
