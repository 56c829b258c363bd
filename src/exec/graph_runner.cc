// GraphRunner (see graph_runner.h).
// Thread-safety: a worker's gather state is touched only by the pool thread
// running it (ExecPool runs an item on one thread at a time); Proc calls on
// one instance are serialised by locks_; counters are atomic.
#include "exec/graph_runner.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "exec/graph_runner_worker.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "util/fast_tls.h"

namespace hflow {
namespace exec {

// Note [Executor design]
// A thread per (instance, function) is simple, but every message then
// crosses one thread per stage: on a machine with fewer cores than stages
// each hop is a context switch, and a chain of light nodes spends its time
// in the scheduler. Instead a pool of about one thread per core runs the
// stages as work items, each run taking up to a budget of messages while
// its inputs last (so a stage's messages are handled back to back on a warm
// thread). New work goes to a thread that is still looking for work (no
// wake-up) or wakes a parked one: it never waits behind a long or blocked
// run while a thread sleeps. The device binding moves with the work: each
// run binds the instance's device for its duration.
//
// A pool thread must never wait on a queue (it could be the thread the
// consumer needs), so outputs are pushed over the depth and an item whose
// output queues are full is simply not run; the consumer's dequeue that
// makes room schedules it again. Feeders and UDF timer threads still wait
// on full queues as before. A UDF that blocks in Proc holds a pool thread:
// size the pool (Options::exec_threads) for such graphs.

namespace {

constexpr int kBudget = 32;  // messages per run before others get a turn

// The consumer the current Proc handed a message to (TryTake), if any.
thread_local ExecPool::Item* t_handed_to HFLOW_FAST_TLS = nullptr;

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

int DefaultThreads() {
  return std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
}

}  // namespace

GraphRunner::GraphRunner(deploy::Deployment* deployment, Router* router,
                         int threads, bool handoff)
    : deployment_(deployment),
      router_(router),
      threads_(threads > 0 ? threads : DefaultThreads()),
      handoff_(handoff) {}

GraphRunner::~GraphRunner() { (void)Stop(); }

void GraphRunner::Start() {
  if (started_) return;
  started_ = true;
  for (const auto& inst : deployment_->instances()) {
    locks_[inst.get()] = std::make_unique<std::mutex>();
    for (size_t f = 0; f < inst->funcs.size(); ++f) {
      if (inst->funcs[f].stream_input) {
        streams_.push_back(std::make_unique<StreamWorker>(
            deployment_, inst.get(), f, InputsOf(*deployment_, *inst, f),
            &stopping_, &failures_));
        continue;
      }
      auto w = std::make_unique<Worker>();
      w->runner = this;
      w->inst = inst.get();
      w->lock = locks_[inst.get()].get();
      w->func = f;
      w->inputs = InputsOf(*deployment_, *inst, f);
      for (size_t i : w->inputs) w->in_queues.push_back(inst->inputs[i].get());
      w->pending.resize(w->inputs.size());
      w->got.resize(w->inputs.size());
      w->batch = std::max<size_t>(1, inst->udf->BatchLimit());
      workers_.push_back(std::move(w));
    }
  }
  // Note [Proc locks]: the pool runs an item on one thread at a time, so an
  // instance with one pool function (and no stream function, which takes
  // no instance lock anyway) has nothing to serialise its Proc calls with:
  // its worker skips the lock (four lock pairs a message through a chain
  // of four).
  std::map<const deploy::DeployedInstance*, int> pooled;
  for (const auto& w : workers_) ++pooled[w->inst];
  for (auto& w : workers_) {
    if (pooled[w->inst] == 1) w->lock = nullptr;
  }
  LinkIslands();
  LeaveInputsUncopied();
  pool_ = std::make_unique<ExecPool>("exec-", threads_);
  Wire();
  for (auto& sw : streams_) sw->Start();
}

// Note [One copy into a worker] in router.cc: the queues of instances
// that copy their inputs themselves.
void GraphRunner::LeaveInputsUncopied() {
  std::set<std::pair<std::string, int32_t>> copying;
  for (const auto& inst : deployment_->instances()) {
    if (inst->udf->CopiesInputs()) {
      copying.emplace(inst->plan.node, inst->plan.replica);
    }
  }
  if (copying.empty()) return;
  const std::vector<deploy::QueuePlan>& queues = deployment_->plan().queues;
  for (size_t qi = 0; qi < queues.size(); ++qi) {
    const deploy::QueuePlan& q = queues[qi];
    if (!q.graph_output && copying.count({q.node, q.replica}) != 0) {
      router_->LeaveUncopied(qi);
    }
  }
}

// Listeners: a queue schedules its consumer when it gains a message and its
// producers when it drains below its depth.
void GraphRunner::Wire() {
  const deploy::Plan& plan = deployment_->plan();
  for (size_t qi = 0; qi < plan.queues.size(); ++qi) {
    services::DeviceQueue* q = deployment_->queue(qi).get();
    std::vector<Worker*> consumers, producers;
    std::vector<StreamWorker*> streams;  // stream functions reading q
    for (auto& sw : streams_) {
      const auto& in = sw->in_queues();
      if (std::find(in.begin(), in.end(), q) != in.end()) {
        streams.push_back(sw.get());
      }
    }
    for (auto& w : workers_) {
      if (std::find(w->in_queues.begin(), w->in_queues.end(), q) !=
          w->in_queues.end()) {
        consumers.push_back(w.get());
      }
      if (std::find(w->produces.begin(), w->produces.end(),
                    plan.queues[qi].producer.op) != w->produces.end()) {
        producers.push_back(w.get());
        w->out_queues.push_back(q);
      }
    }
    // A message can skip the queue only to its one consumer, and only when
    // that consumer has nothing to pair it with (one input).
    handoff_to_.resize(plan.queues.size(), nullptr);
    if (handoff_ && consumers.size() == 1 && consumers[0]->inputs.size() == 1) {
      handoff_to_[qi] = consumers[0];
    }
    ExecPool* pool = pool_.get();
    q->SetListeners(
        [pool, consumers, streams] {
          for (Worker* w : consumers) pool->Schedule(w);
          for (StreamWorker* sw : streams) sw->Notify();
        },
        [pool, producers] {
          for (Worker* w : producers) pool->Schedule(w);
        });
  }
}

// Note [Abandoning a stuck graph]
// A UDF may block forever in Proc (a deadlock, a wait on something that
// never comes). Joining its thread would hang RemoveGraph, Finalize and
// the process exit with them, so Stop waits a bounded time
// (Options::stop_timeout_ms) and then gives up on the threads still
// running: they are detached, never joined. Such a thread may still return
// one day and go on: it releases its inputs, routes outputs, reads the
// worker, the pool, this runner and the deployment (its queues, its UDF
// instance, the memory groups, the exchange service and the runtime). None
// of them may be freed under it, so the runner and the deployment are
// kept, whole, for the rest of the process (the session layer holds them
// with the environment, whose exchange service and runtime are then not
// torn down either), and UDF libraries are never unloaded anyway. What the
// stuck graph holds on its devices stays allocated; everything else (the
// executor threads that did stop, other graphs) is released as usual. A
// returning thread finds stopping_ set and runs no further Proc.
Status GraphRunner::Stop(int32_t timeout_ms, const std::string& why) {
  if (!started_) return stop_status_;
  stopping_.store(true);
  // Every queue: feeders and fetchers wake with the reason. Listeners go
  // after the close, so no late enqueue reaches the pool.
  for (size_t i = 0; i < deployment_->plan().queues.size(); ++i) {
    const auto& q = deployment_->queue(i);
    q->Close(Status::Cancelled(why));
    q->SetListeners(nullptr, nullptr);
  }
  // Executors and feeders waiting for pool memory leave too.
  deployment_->CancelAllocWaits(Status::Cancelled(why));
  started_ = false;
  // One deadline for the pool and the stream threads together.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::max(timeout_ms, 0));
  // A Proc still running in a worker process past the deadline is ended
  // by killing the worker; code on the pool's own threads cannot be.
  bool joined = pool_->Stop(timeout_ms, [this] {
    for (const auto& inst : deployment_->instances()) {
      if (inst->udf) inst->udf->Cancel();
    }
  });
  for (auto& sw : streams_) {
    sw->Notify();  // out of its pause
    joined = sw->Join(deadline, timeout_ms < 0) && joined;
  }
  if (!joined) {
    abandoned_ = true;
    stop_status_ = Status::Timeout(StuckReport(timeout_ms));
    return stop_status_;
  }
  pool_.reset();
  workers_.clear();
  streams_.clear();
  return Status::OK();
}

std::string GraphRunner::StuckReport(int32_t timeout_ms) const {
  std::string stuck;
  for (const auto& inst : deployment_->instances()) {
    std::string what;
    if (inst->udf && inst->udf->InCall(&what)) {
      stuck += (stuck.empty() ? "" : "; ") + what;
    }
  }
  if (stuck.empty()) stuck = "an executor thread";
  return "stopping the graph: " + stuck + " did not return within " +
         std::to_string(timeout_ms) +
         " ms (Options::stop_timeout_ms); its thread is left running, never "
         "joined, and the graph's deployment is kept for the rest of the "
         "process";
}

// An OVERWRITE queue is never full to its producers: it drops its oldest.
bool GraphRunner::OutputsFull(const Worker& w) const {
  for (services::DeviceQueue* q : w.out_queues) {
    if (!q->overwrite() && q->Size() >= q->depth()) return true;
  }
  return false;
}

// One message per input with the same transaction id and data label: the
// first input's next message sets them; other inputs are read (buffering
// messages of other transactions) until their partner arrives. Only queues that
// hold something are read, so an empty try costs no runtime call.
bool GraphRunner::TryGather(Worker* w, const rt::ScopedDevice& bound) {
  services::ExchangeService* svc = deployment_->exchange();
  while (w->next < w->inputs.size()) {
    const size_t k = w->next;
    const bool any = k == 0;
    auto& pend = w->pending[k];
    auto it = any ? pend.begin() : pend.find(PairKey{w->trans, w->label});
    if (it != pend.end()) {
      w->got[k] = std::move(it->second.front());
      it->second.pop_front();
      if (it->second.empty()) pend.erase(it);
    } else {
      for (;;) {
        services::DeviceQueue& q = *w->in_queues[k];
        if (q.Size() == 0) return false;
        services::MbufPtr m;
        // Inputs live on the instance's device, the run's binding.
        Status s = q.device() == bound.device() ? svc->Dequeue(bound, q, &m, 0)
                                                : svc->Dequeue(q, &m, 0);
        if (!s.ok()) {
          // This input is unreadable: the stage cannot go on, and must not
          // go quiet (Note [Failing a graph] in deployer.cc).
          w->dead = true;
          deployment_->Fail(
              s.WithContext(Where(*w->inst) + "reading an input: "));
          return false;
        }
        const PairKey key = KeyOf(m->head());
        if (any || key == PairKey{w->trans, w->label}) {
          w->got[k] = std::move(m);
          break;
        }
        pend[key].push_back(std::move(m));
      }
    }
    w->trans = w->got[k]->head().trans_id;
    w->label = w->got[k]->head().data_label;
    ++w->next;
  }
  w->next = 0;
  return true;
}

bool GraphRunner::RunWorker(Worker* w) {
  if (w->dead || w->inputs.empty()) {
    w->handed.reset();
    return false;
  }
  // Bind at the start of every run (invariant 1). The pool thread keeps
  // the binding afterwards, so the next run on this device binds for free
  // (Note [Pool threads keep their binding] in device_binding.cc).
  rt::ScopedDevice bound(deployment_->contexts(), w->inst->plan.device,
                         rt::ScopedDevice::OnExit::kKeep);
  if (!bound.status().ok()) {
    w->dead = true;
    deployment_->Fail(
        bound.status().WithContext(Where(*w->inst) + "binding: "));
    return false;
  }
  // Deliveries of this run never wait and may hand off (Router::PoolRun).
  Router::PoolRun pool_run(handoff_ ? this : nullptr, &bound);
  bool more = true;
  for (int n = 0; n < kBudget && more; ++n) {
    if (stopping_.load(std::memory_order_relaxed)) {
      more = false;
      break;
    }
    // A UDF may have left the thread on another device (Note [Pool threads
    // keep their binding]): each Proc, and the dequeues gathering its
    // inputs on the run's binding, start on its own.
    Status rebound = n == 0 ? Status::OK() : bound.Reassert();
    if (!rebound.ok()) {  // the graph fails as a whole: its queues close
      w->handed.reset();
      w->dead = true;
      deployment_->Fail(rebound.WithContext(Where(*w->inst) + "binding: "));
      more = false;
      break;
    }
    more = NextInput(w, bound);
    if (!more) break;
    if (w->batch > 1) {
      n += int(ProcessBatch(w, bound, size_t(kBudget - n))) - 1;
    } else {
      ProcessOne(w, bound);
    }
    if (t_handed_to != nullptr) {
      // This thread runs the consumer next (unless another steals it); this
      // item goes back to the pool if it has more to do (Note [Hand-off] in
      // exec_pool.cc).
      t_handed_to = nullptr;
      more = HasInput(*w);
      break;
    }
  }
  return more;
}

bool GraphRunner::NextInput(Worker* w, const rt::ScopedDevice& bound) {
  if (w->handed) {
    w->trans = w->handed->head().trans_id;
    w->label = w->handed->head().data_label;
    w->got[0] = std::move(w->handed);
    w->handed.reset();
    return true;
  }
  return !OutputsFull(*w) && TryGather(w, bound);
}

// Runs inside a Proc's delivery on a pool thread. The consumer must be idle
// with an empty input queue (so nothing older is overtaken) and room in its
// outputs (so the depth bound holds); one hand-off per Proc.
bool GraphRunner::TryTake(size_t qi, services::MbufPtr* mbuf) {
  Worker* c = qi < handoff_to_.size() ? handoff_to_[qi] : nullptr;
  if (c == nullptr || t_handed_to != nullptr || c->in_queues[0]->Size() != 0 ||
      OutputsFull(*c) || !pool_->TryClaim(c)) {
    return false;
  }
  // Claimed: c's own state (dead) is ours to read now. A concurrent
  // producer may have queued meanwhile; then the queue keeps the order.
  if (c->dead || c->in_queues[0]->Size() != 0) {
    pool_->Release(c);
    return false;
  }
  c->handed = std::move(*mbuf);
  // Held for this thread, or already queued for any (a thread is parked).
  if (pool_->HandOff(c)) t_handed_to = c;
  return true;
}

bool GraphRunner::HasInput(const Worker& w) const {
  for (const auto& pend : w.pending) {
    if (!pend.empty()) return true;
  }
  for (services::DeviceQueue* q : w.in_queues) {
    if (q->Size() != 0) return true;
  }
  return false;
}

}  // namespace exec
}  // namespace hflow
