// GraphRunner (see graph_runner.h).
// Thread-safety: each worker owns its pending buffers; Proc calls on one
// instance are serialised by locks_; counters are atomic.
#include "exec/graph_runner.h"

#include <algorithm>
#include <deque>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "rt/thread_util.h"

namespace hflow {
namespace exec {

struct GraphRunner::Worker {
  deploy::DeployedInstance* inst = nullptr;
  size_t func = 0;
  std::vector<size_t> inputs;  // node input indexes, in the function's order
  // Messages that arrived ahead of their partners, by input then trans id.
  std::vector<std::map<uint64_t, std::deque<services::MbufPtr>>> pending;
  std::thread thread;
};

namespace {

// Node inputs feeding function `f` of `inst`, in the function's input order.
std::vector<size_t> InputsOf(const deploy::Deployment& dep,
                             const deploy::DeployedInstance& inst, size_t f) {
  const deploy::NodeDef* n = dep.plan().graph.FindNode(inst.plan.node);
  auto pp_of = [&](size_t i) {
    return n->input_map.empty() ? static_cast<uint32_t>(i) : n->input_map[i];
  };
  std::vector<uint32_t> wanted(inst.funcs[f].inputs_index.begin(),
                               inst.funcs[f].inputs_index.end());
  if (wanted.empty()) {
    for (size_t i = 0; i < n->inputs.size(); ++i) wanted.push_back(pp_of(i));
    std::sort(wanted.begin(), wanted.end());
  }
  std::vector<size_t> out;
  for (uint32_t pp : wanted) {
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      if (pp_of(i) == pp) out.push_back(i);
    }
  }
  return out;
}

}  // namespace

GraphRunner::GraphRunner(deploy::Deployment* deployment)
    : deployment_(deployment) {}

GraphRunner::~GraphRunner() { Stop(); }

void GraphRunner::Start() {
  if (started_) return;
  started_ = true;
  for (const auto& inst : deployment_->instances()) {
    locks_[inst.get()] = std::make_unique<std::mutex>();
    for (size_t f = 0; f < inst->funcs.size(); ++f) {
      auto w = std::make_unique<Worker>();
      w->inst = inst.get();
      w->func = f;
      w->inputs = InputsOf(*deployment_, *inst, f);
      w->pending.resize(w->inputs.size());
      workers_.push_back(std::move(w));
    }
  }
  for (auto& w : workers_) {
    Worker* raw = w.get();
    raw->thread = std::thread([this, raw] { Run(raw); });
  }
}

void GraphRunner::Stop() {
  if (!started_) return;
  // Every queue, not only the inputs: a worker may be blocked enqueueing
  // into a full downstream or graph-output queue.
  for (size_t i = 0; i < deployment_->plan().queues.size(); ++i) {
    deployment_->queue(i)->Close(Status::Cancelled("the graph is stopping"));
  }
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  workers_.clear();
  started_ = false;
}

// One message per input with the same transaction id: the first input's
// next message sets the id; other inputs are read (buffering messages of
// other transactions) until their partner arrives.
Status GraphRunner::Gather(Worker* w, std::vector<services::MbufPtr>* got) {
  services::ExchangeService* svc = deployment_->exchange();
  got->assign(w->inputs.size(), nullptr);
  auto take = [&](size_t k, uint64_t* trans, bool any) -> Status {
    auto& pend = w->pending[k];
    auto it = any ? pend.begin() : pend.find(*trans);
    if (it != pend.end()) {
      (*got)[k] = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) pend.erase(it);
      *trans = (*got)[k]->head().trans_id;
      return Status::OK();
    }
    for (;;) {
      services::MbufPtr m;
      HFLOW_RETURN_IF_ERROR(svc->Dequeue(*w->inst->inputs[w->inputs[k]], &m, -1));
      if (any || m->head().trans_id == *trans) {
        *trans = m->head().trans_id;
        (*got)[k] = std::move(m);
        return Status::OK();
      }
      pend[m->head().trans_id].push_back(std::move(m));
    }
  };
  uint64_t trans = 0;
  for (size_t k = 0; k < w->inputs.size(); ++k) {
    HFLOW_RETURN_IF_ERROR(take(k, &trans, /*any=*/k == 0));
  }
  return Status::OK();
}

void GraphRunner::EmitError(const deploy::DeployedInstance& inst, int32_t rc,
                            uint64_t trans_id) {
  failures_.fetch_add(1);
  const deploy::NodeDef* n = deployment_->plan().graph.FindNode(inst.plan.node);
  services::MbufPtr m;
  if (!deployment_->AllocErrorMbuf(inst.plan.device, rc, trans_id, &m).ok()) {
    return;  // the pool is gone: the graph is shutting down
  }
  for (uint32_t j = 0; j < n->output_num; ++j) {
    (void)deployment_->Route(deploy::OutputRef{n->name, j}, m, -1);
  }
}

void GraphRunner::Run(Worker* w) {
  const deploy::DeployedInstance& inst = *w->inst;
  SetCurrentThreadName("exec-" + inst.plan.node + "#" +
                       std::to_string(inst.plan.replica));
  // Bind once, at thread start (invariant 1): every Proc runs on this token.
  ScopedDevice bound(deployment_->contexts(), inst.plan.device);
  if (!bound.status().ok()) return;
  std::mutex& lock = *locks_[w->inst];
  std::vector<services::MbufPtr> got;
  while (Gather(w, &got).ok()) {
    uint64_t trans = got[0]->head().trans_id;
    int32_t upstream_rc = 0;
    for (const auto& m : got) {
      if (m->head().ret_code != 0 && upstream_rc == 0) upstream_rc = m->head().ret_code;
    }
    if (upstream_rc != 0) {  // a failure travels on, Proc is not called
      EmitError(inst, upstream_rc, trans);
      continue;
    }
    services::MbufPtr first = got[0];  // its head outlives the Proc call
    std::vector<std::shared_ptr<FlowFunc::FlowMsg>> msgs;
    for (auto& m : got) msgs.push_back(flow_func::MbufFlowMsg::FromMbuf(std::move(m)));
    int32_t rc;
    {
      std::lock_guard<std::mutex> l(lock);
      deploy::SetCurrentTransaction(trans, &first->head());
      rc = inst.udf->Proc(bound, w->func, msgs);
      deploy::SetCurrentTransaction(0);
    }
    procs_.fetch_add(1);
    if (rc != FlowFunc::FLOW_FUNC_SUCCESS) EmitError(inst, rc, trans);
  }
}

}  // namespace exec
}  // namespace hflow
