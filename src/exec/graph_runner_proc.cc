// GraphRunner's calls into the UDF (see graph_runner.h): one input set
// (ProcessOne) or a batch of them (ProcessBatch, Note [Batches]), and the
// error messages failures become (EmitError).
//
// Thread-safety: as graph_runner.cc: a worker's state is touched only by
// the pool thread running it; Proc calls on one instance are serialised by
// its lock.
#include <algorithm>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "exec/graph_runner.h"
#include "exec/graph_runner_worker.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"

namespace hflow {
namespace exec {

void GraphRunner::EmitError(const deploy::DeployedInstance& inst, int32_t rc,
                            uint64_t trans_id, uint32_t error_node,
                            const services::MbufHead& input) {
  failures_.fetch_add(1);
  const deploy::NodeDef* n = deployment_->plan().graph.FindNode(inst.plan.node);
  services::MbufPtr m;
  Status s = deployment_->AllocErrorMbuf(inst.plan.device, rc, trans_id,
                                         error_node, &m);
  if (s.ok()) {
    // The failure of one cell (load balancing) travels as that cell: to its
    // replica, pairing with its partners (a new head: ours to write).
    m->head().route_label = input.route_label;
    m->head().data_label = input.data_label;
  }
  for (uint32_t j = 0; s.ok() && j < n->output_num; ++j) {
    s = router_->Route(deploy::OutputRef{n->name, j}, m, -1);
  }
  // An error message that cannot travel would leave the fetcher waiting.
  if (!s.ok()) {
    deployment_->Fail(s.WithContext(Where(inst) + "passing on a failure: "));
  }
}

void GraphRunner::ProcessOne(Worker* w, const rt::ScopedDevice& bound) {
  const deploy::DeployedInstance& inst = *w->inst;
  const uint64_t trans = w->trans;
  const auto [upstream_rc, upstream_node] = Upstream(*w);
  // A failure travels on, naming where it began: passed on here, or by an
  // instance that takes it in a call (TakesFailures).
  if (upstream_rc != 0 && !inst.udf->TakesFailures()) {
    const services::MbufPtr first = w->got[0];
    for (auto& m : w->got) m.reset();
    EmitError(inst, upstream_rc, trans, upstream_node, first->head());
    return;
  }
  services::MbufPtr first = w->got[0];  // its head outlives the Proc call
  for (auto& m : w->got) {
    auto msg = flow_func::MbufFlowMsg::FromMbuf(std::move(m));
    msg->MarkShared();  // other consumers may hold the same mbuf
    w->msgs.push_back(std::move(msg));
  }
  int32_t rc;
  {
    std::unique_lock<std::mutex> l;
    if (w->lock != nullptr) l = std::unique_lock<std::mutex>(*w->lock);
    Router::CurrentTransaction current(trans, &first->head(), &w->msgs);
    rc = inst.udf->Proc(bound, w->func, w->msgs, trans);
  }
  w->msgs.clear();  // the inputs' memory returns as soon as Proc is done
  if (upstream_rc != 0) {
    if (rc == FlowFunc::FLOW_FUNC_SUCCESS) {
      failures_.fetch_add(1);  // the instance passed it on
    } else {
      // Not passed on (its worker died in the call, say): still the
      // upstream failure, not the call's.
      EmitError(inst, upstream_rc, trans, upstream_node, first->head());
    }
  } else if (rc != FlowFunc::FLOW_FUNC_SUCCESS) {
    EmitError(inst, rc, trans, deployment_->ErrorNodeTag(inst.plan.node),
              first->head());
  }
}

// Note [Batches]
// An instance that gains from taking several calls at once (one in a
// worker process: Note [Batched calls] in worker/remote_batch.cc) gets
// the input sets that are there, up to its BatchLimit, the run's budget
// and the room its output queues have left (so the depth bound holds as
// for one Proc per output message), in one ProcBatch. An input set that
// carries a failure ends the batch: its error message follows the calls
// before it, in order. Each call's outputs are routed under its own
// transaction, as ProcessOne's, and each failed call becomes its error
// message at once, before the next call's outputs.
size_t GraphRunner::ProcessBatch(Worker* w, const rt::ScopedDevice& bound,
                                 size_t budget) {
  const deploy::DeployedInstance& inst = *w->inst;
  if (Upstream(*w).first != 0) {
    ProcessOne(w, bound);
    return 1;
  }
  const size_t limit = std::min({w->batch, std::max<size_t>(budget, 1),
                                 std::max<size_t>(OutputRoom(*w), 1)});
  struct Set {
    uint64_t trans;
    services::MbufPtr first;  // its head outlives the call
    std::vector<std::shared_ptr<FlowFunc::FlowMsg>> msgs;
  };
  std::vector<Set> sets;
  bool failed_next = false;  // w->got holds an input set carrying a failure
  for (;;) {
    Set set{w->trans, w->got[0], {}};
    for (auto& m : w->got) {
      auto msg = flow_func::MbufFlowMsg::FromMbuf(std::move(m));
      msg->MarkShared();  // other consumers may hold the same mbuf
      set.msgs.push_back(std::move(msg));
    }
    sets.push_back(std::move(set));
    if (sets.size() >= limit || !TryGather(w, bound)) break;
    if (Upstream(*w).first != 0) {
      failed_next = true;
      break;
    }
  }
  std::vector<flow_func::ProcCall> calls(sets.size());
  for (size_t i = 0; i < sets.size(); ++i) {
    calls[i].inputs = &sets[i].msgs;
    calls[i].trans = sets[i].trans;
  }
  {
    std::unique_lock<std::mutex> l;
    if (w->lock != nullptr) l = std::unique_lock<std::mutex>(*w->lock);
    inst.udf->ProcBatch(
        bound, w->func, &calls,
        [&](size_t i, const std::function<void()>& deliver) {
          Set& set = sets[i];
          {
            Router::CurrentTransaction current(set.trans, &set.first->head(),
                                               &set.msgs);
            deliver();
          }
          set.msgs.clear();  // the inputs' memory returns at once
          if (calls[i].rc != FlowFunc::FLOW_FUNC_SUCCESS) {
            EmitError(inst, calls[i].rc, set.trans,
                      deployment_->ErrorNodeTag(inst.plan.node),
                      set.first->head());
          }
          set.first.reset();  // inside the call's scope too
        });
  }
  if (!failed_next) return sets.size();
  ProcessOne(w, bound);  // the failure, after the calls before it
  return sets.size() + 1;
}

// The first failure the gathered input set carries: (ret code, node tag).
std::pair<int32_t, uint32_t> GraphRunner::Upstream(const Worker& w) const {
  for (const auto& m : w.got) {
    if (m->head().ret_code != 0) {
      return {m->head().ret_code, m->head().error_node};
    }
  }
  return {0, 0};
}

// Messages the fullest output queue still takes below its depth.
size_t GraphRunner::OutputRoom(const Worker& w) const {
  size_t room = SIZE_MAX;
  for (services::DeviceQueue* q : w.out_queues) {
    if (q->overwrite()) continue;
    const size_t size = q->Size();
    room = std::min(room, size >= q->depth() ? 0 : q->depth() - size);
  }
  return room;
}

}  // namespace exec
}  // namespace hflow
