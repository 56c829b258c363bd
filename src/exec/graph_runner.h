// GraphRunner: runs a deployed graph on a small pool of executor threads
// (ExecPool). Each (instance, function) is a work item, scheduled when one of
// its input queues gains a message or one of its output queues drains below
// its depth. A run binds the instance's device (rt::ScopedDevice; the pool
// thread keeps that binding afterwards, so the next run on the same device
// makes no runtime call), takes one message per input (aligned by transaction
// id), calls the UDF's Proc and lets the Router deliver the outputs (an
// output whose consumer is idle is handed to it directly: Note [Hand-off] in
// exec_pool.cc). A failed Proc, or an input that already carries a failure,
// becomes an error message (its ret code set, no data) on every output, so the
// fetcher sees the code and nothing is silently lost.
//
// Pool threads never wait on queues: outputs are pushed over the depth, and
// an item whose output queues are full is not run until they drain, so the
// bound holds up to one Proc's outputs. Stop closes every queue and joins,
// within a bound: a UDF that does not return leaves its thread behind and
// the runner (with the deployment) must then be kept for the rest of the
// process (Note [Abandoning a stuck graph] in graph_runner.cc).
//
// Stream functions (func_list[].stream_input) are not pool items: each has
// a thread of its own that hands the proc its live input queues
// (exec/stream_worker.h); Stop joins them within the same bound.
//
// Thread-safety: Start/Stop from one thread; items are run by one pool
// thread at a time; Proc calls on one instance are serialised by a lock
// (multi-function instances have an item per function); a stream
// function's calls take no lock.
#ifndef HFLOW_EXEC_GRAPH_RUNNER_H_
#define HFLOW_EXEC_GRAPH_RUNNER_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "deploy/deployer.h"
#include "exec/exec_pool.h"
#include "exec/router.h"
#include "exec/stream_worker.h"

namespace hflow {
namespace exec {

class GraphRunner : private DeliverySink {
 public:
  // `threads` <= 0: one per hardware thread (at least 2). `handoff`: run an
  // idle consumer next on the producing thread (Note [Hand-off]).
  // `router` routes `deployment`'s messages (its DeployOptions::outputs);
  // both outlive the runner.
  GraphRunner(deploy::Deployment* deployment, Router* router, int threads = 0,
              bool handoff = true);
  ~GraphRunner();

  void Start();
  // Closes every queue of the deployment (waking feeders and fetchers) and
  // joins the pool, waiting at most `timeout_ms` (-1: forever) for running
  // UDFs. Call before undeploying. A timeout status names the node,
  // function, replica, device and transaction still in Proc; its thread is
  // detached, and from then on neither this runner nor the deployment may
  // be destroyed or undeployed (abandoned() is true).
  // `why` is what the woken feeders and fetchers are told.
  Status Stop(int32_t timeout_ms = -1,
              const std::string& why = "the graph is stopping");
  bool abandoned() const { return abandoned_; }

  uint64_t failures() const { return failures_.load(); }
  int threads() const { return threads_; }

 private:
  struct Worker;
  // Links the outputs of instances in one worker process that go straight
  // to their consumer there (Note [Islands] in graph_runner_islands.cc).
  void LinkIslands();
  void LeaveInputsUncopied();
  void Wire();
  bool RunWorker(Worker* w);
  // Fills w->got with the next input set: a handed message, or TryGather.
  bool NextInput(Worker* w, const rt::ScopedDevice& bound);
  // DeliverySink: claims the consumer of queue `qi` for this thread
  // when it may take the message directly.
  bool TryTake(size_t qi, services::MbufPtr* mbuf) override;
  bool OutputsFull(const Worker& w) const;
  // Whether some input of `w` holds a message (queued or set aside).
  bool HasInput(const Worker& w) const;
  // Fills w->got without waiting. False while some input has no message for
  // the transaction (yet); sets w->dead when an input queue fails.
  bool TryGather(Worker* w, const rt::ScopedDevice& bound);
  void ProcessOne(Worker* w, const rt::ScopedDevice& bound);
  // ProcessOne for up to `budget` input sets at once, the first in w->got
  // (Note [Batches] in graph_runner.cc); how many it took.
  size_t ProcessBatch(Worker* w, const rt::ScopedDevice& bound, size_t budget);
  std::pair<int32_t, uint32_t> Upstream(const Worker& w) const;
  size_t OutputRoom(const Worker& w) const;
  // The nodes still in Proc when a Stop ran out of time.
  std::string StuckReport(int32_t timeout_ms) const;
  // `error_node`: the failing node's tag (Deployment::ErrorNodeTag);
  // the message takes the balance labels of `input` (the first input).
  void EmitError(const deploy::DeployedInstance& inst, int32_t rc,
                 uint64_t trans_id, uint32_t error_node,
                 const services::MbufHead& input);

  deploy::Deployment* const deployment_;
  Router* const router_;
  const int threads_;
  const bool handoff_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // Stream functions (func_list[].stream_input): a thread each, outside
  // the pool (Note [Stream functions] in stream_worker.cc).
  std::vector<std::unique_ptr<StreamWorker>> streams_;
  // Per plan queue: its consumer when a message may be handed to it.
  std::vector<Worker*> handoff_to_;
  std::map<const deploy::DeployedInstance*, std::unique_ptr<std::mutex>> locks_;
  std::unique_ptr<ExecPool> pool_;
  std::atomic<uint64_t> failures_{0};
  bool started_ = false;
  // Set by Stop: a thread returning from a stuck Proc runs nothing more.
  std::atomic<bool> stopping_{false};
  bool abandoned_ = false;
  Status stop_status_;  // what the Stop that abandoned threads returned
};

}  // namespace exec
}  // namespace hflow

#endif  // HFLOW_EXEC_GRAPH_RUNNER_H_
