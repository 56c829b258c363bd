// GraphRunner's islands (Note [Islands]): which outputs of instances in a
// worker process go straight to their consumer in the same worker.
//
// Thread-safety: LinkIslands runs in Start, before the pool exists and
// any Proc runs; it touches the workers and the instances' links only.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "exec/graph_runner.h"
#include "exec/graph_runner_worker.h"

namespace hflow {
namespace exec {

// Note [Islands]
// Isolated instances that share a worker process (udf_isolation: one per
// device) and form a chain would each take a round trip through the host
// per message: the host takes a's output from a's reply, queues it for b
// and sends it back to the same worker. An output whose one consumer is
// a node with one input, one function and one replica, on the same
// device, is instead linked (flow_func::Instance::LinkOutput): the
// instance, if it can (a worker's instances can when both are in the same
// worker), hands such outputs to the consumer itself, and the consumer's
// outputs that leave the island come back through the first instance's
// call (worker/worker_chain.cc, Note [Chains in a worker]). The host then
// calls only the island's first stage, and the queue between linked
// stages stays empty. The first stage's worker counts as a producer of
// every queue the island's outputs reach, so it runs only while they
// have room and is woken as they drain: the depth bound holds for the
// island as for its stages. Edges with anything to pair, balance or
// overwrite, and edges that would close a cycle, keep their queues.
void GraphRunner::LinkIslands() {
  const deploy::Plan& plan = deployment_->plan();
  // Every reader of each queue (null: a stream function's).
  std::map<const services::DeviceQueue*, std::vector<Worker*>> readers;
  for (auto& w : workers_) {
    for (services::DeviceQueue* q : w->in_queues) readers[q].push_back(w.get());
  }
  for (auto& sw : streams_) {
    for (services::DeviceQueue* q : sw->in_queues())
      readers[q].push_back(nullptr);
  }
  // Instance -> the instances its links reach directly.
  std::map<const deploy::DeployedInstance*,
           std::vector<const deploy::DeployedInstance*>>
      linked;
  auto reaches = [&](const deploy::DeployedInstance* from,
                     const deploy::DeployedInstance* to) {
    std::vector<const deploy::DeployedInstance*> todo{from};
    std::set<const deploy::DeployedInstance*> seen;
    while (!todo.empty()) {
      const deploy::DeployedInstance* i = todo.back();
      todo.pop_back();
      if (i == to) return true;
      if (!seen.insert(i).second) continue;
      for (const auto* next : linked[i]) todo.push_back(next);
    }
    return false;
  };
  std::set<const deploy::DeployedInstance*> done;
  for (auto& w : workers_) {
    deploy::DeployedInstance* a = w->inst;
    if (!done.insert(a).second) continue;  // once per instance
    const deploy::NodeDef* n = plan.graph.FindNode(a->plan.node);
    if (n == nullptr || !n->output_map.empty()) continue;
    for (uint32_t j = 0; j < n->output_num; ++j) {
      const Router::RouteTargets* t =
          router_->RoutesOf(deploy::OutputRef{n->name, j});
      if (t == nullptr || t->size() != 1 || (*t)[0].size() != 1) continue;
      const services::DeviceQueue* q = deployment_->queue((*t)[0][0]).get();
      auto r = readers.find(q);
      if (q->overwrite() || r == readers.end() || r->second.size() != 1 ||
          r->second[0] == nullptr) {
        continue;
      }
      Worker* b = r->second[0];
      const deploy::NodeDef* nb = plan.graph.FindNode(b->inst->plan.node);
      if (b->inst == a || nb == nullptr || b->inputs.size() != 1 ||
          nb->inputs.size() != 1 || b->inst->funcs.size() != 1 ||
          !nb->output_map.empty() || b->inst->plan.device != a->plan.device ||
          reaches(b->inst, a)) {
        continue;
      }
      if (a->udf->LinkOutput(j, b->inst->udf.get(), b->func)) {
        linked[a].push_back(b->inst);
      }
    }
  }
  // Each worker produces what its instance's island reaches.
  for (auto& w : workers_) {
    std::vector<const deploy::DeployedInstance*> todo{w->inst};
    std::set<const deploy::DeployedInstance*> seen;
    while (!todo.empty()) {
      const deploy::DeployedInstance* i = todo.back();
      todo.pop_back();
      if (!seen.insert(i).second) continue;
      w->produces.push_back(i->plan.node);
      for (const auto* next : linked[i]) todo.push_back(next);
    }
  }
}

}  // namespace exec
}  // namespace hflow
