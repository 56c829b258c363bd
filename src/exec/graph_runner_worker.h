// GraphRunner's per-(instance, function) work item and the helpers its
// two source files share (graph_runner.cc: gathering and scheduling;
// graph_runner_proc.cc: calling the UDF). Private to exec.
//
// Thread-safety: a Worker's state is touched only by the pool thread running
// it (ExecPool runs an item on one thread at a time).
#ifndef HFLOW_EXEC_GRAPH_RUNNER_WORKER_H_
#define HFLOW_EXEC_GRAPH_RUNNER_WORKER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "exec/graph_runner.h"
#include "flow_func/flow_msg.h"

namespace hflow {
namespace exec {

// What a multi-input node pairs its inputs by.
using PairKey = std::pair<uint64_t, uint32_t>;  // (trans id, data label)
inline PairKey KeyOf(const services::MbufHead& h) {
  return {h.trans_id, h.data_label};
}

// "node 'n' replica r on device d: " for error messages.
inline std::string Where(const deploy::DeployedInstance& inst) {
  return "node '" + inst.plan.node + "' replica " +
         std::to_string(inst.plan.replica) + " on device " +
         std::to_string(inst.plan.device) + ": ";
}

struct GraphRunner::Worker final : ExecPool::Item {
  GraphRunner* runner = nullptr;
  deploy::DeployedInstance* inst = nullptr;
  std::mutex* lock = nullptr;  // the instance's Proc lock (Note [Proc locks])
  size_t func = 0;
  std::vector<size_t> inputs;  // node input indexes, in the function's order
  std::vector<services::DeviceQueue*> in_queues;   // per entry of inputs
  std::vector<services::DeviceQueue*> out_queues;  // every queue it feeds
  // The nodes whose outputs its calls set: its own, and those its
  // instance's links reach (Note [Islands] in graph_runner_islands.cc).
  std::vector<std::string> produces;
  // Messages that arrived ahead of their partners, by input then (trans
  // id, data label): the cells of one transaction (load balancing) pair
  // cell by cell.
  std::vector<std::map<PairKey, std::deque<services::MbufPtr>>> pending;
  // The input set being gathered: got[0..next) hold transaction `trans`,
  // cell `label`.
  std::vector<services::MbufPtr> got;
  std::vector<std::shared_ptr<FlowFunc::FlowMsg>> msgs;  // reused per Proc
  size_t next = 0;
  uint64_t trans = 0;
  uint32_t label = 0;
  bool dead = false;  // an input queue failed (closed, device lost)
  // A message handed over by its producer (one-input workers only); taken
  // before the input queue, which was empty when it was handed.
  services::MbufPtr handed;
  // Up to how many input sets go to the instance at once (Note [Batches]).
  size_t batch = 1;

  bool Run() override { return runner->RunWorker(this); }
};

}  // namespace exec
}  // namespace hflow

#endif  // HFLOW_EXEC_GRAPH_RUNNER_WORKER_H_
