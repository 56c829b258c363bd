// WorkerServer's chains (worker_server.h): a request's Proc, and where the
// outputs of each call go: back to the host in the request's reply, or
// straight into the Proc of the instance the host linked them to, in this
// worker (Note [Chains in a worker]).
//
// Thread-safety: a chained call runs on the request's slot thread, under
// the target slot's call_mu. A thread holds the call locks of the slots
// along its chain, outermost first; a slot already on the chain is never
// entered again (the output goes back to the host instead), so no thread
// waits for a lock it holds. Two chains that cross (a -> b on one thread,
// b -> a on another) cannot: the host links an output only to a node with
// one input fed by nothing else.
#include <algorithm>
#include <cstdio>

#include "flow_func/flow_func_defines.h"
#include "worker/worker_server.h"

namespace hflow {
namespace worker {

// Note [Chains in a worker]
// Under udf_isolation the isolated instances of a device share a worker,
// and a chain x -> a -> b -> c -> out of them used to cost a round trip to
// the host per stage: the host took a's output from its reply, put it on
// b's queue, and sent it back to the same worker for b. The host now links
// an output (Links) whose one consumer is a one-input, one-function,
// one-replica node in the same worker (exec's Note [Islands]); the worker
// runs that consumer's Proc on the output as soon as the producer's Proc
// has returned, on the producer's thread, under the consumer's call lock,
// and only what leaves the island goes back, in the first call's reply,
// each output with the slot that set it (the host delivers it through
// that node's own output function).
//
// On a linked edge the worker does what the host's executor would:
//   - an output without a transaction gets the call's, a ret code set on
//     it names the node, and it inherits the input's flow info, unless it
//     is an input passed on (Router::OutputOf's rules);
//   - a failed call becomes an error message on each of its node's
//     outputs, after the outputs it set, and a chained input that carries
//     a failure is passed on the same way without a call
//     (GraphRunner::EmitError and ProcessOne). The first stage's own
//     failure too, when it is linked: the host then sees a success, so no
//     failure is passed on twice.
// A chain is depth first, in the order the outputs were set, so a linear
// chain keeps its order. What it gives up: the island's calls run one
// after the other on the first stage's thread (no pipelining inside an
// island; on a machine with fewer cores than stages the host's executor
// was not pipelining either), and a death loses the chain's calls on the
// request in flight, which the host reports under the first stage's
// transaction. Outputs set outside Proc (Emit) and those of a target not
// loaded (none after a restart: Note [A restarted island loads whole] in
// remote_restart.cc) go through the host as before.

namespace {

using FlowFunc::FLOW_FUNC_FAILED;

constexpr size_t kMaxChain = 64;  // calls deep on one thread
constexpr int32_t kErrorAllocMs = 1000;

bool IsInput(const services::MbufHead& h,
             const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs) {
  for (const auto& m : msgs) {
    if (m != nullptr &&
        &static_cast<const flow_func::MbufFlowMsg&>(*m).head() == &h) {
      return true;
    }
  }
  return false;
}

}  // namespace

WorkerServer::Slot* WorkerServer::FindSlot(uint32_t id) {
  std::lock_guard<std::mutex> l(slots_mu_);
  auto it = slots_.find(id);
  return it == slots_.end() ? nullptr : it->second.get();
}

v1::Done WorkerServer::SetLinks(
    Slot* slot, const google::protobuf::RepeatedPtrField<v1::Link>& links) {
  std::lock_guard<std::mutex> call(slot->call_mu);
  slot->links.assign(links.begin(), links.end());
  return v1::Done();
}

int32_t WorkerServer::RunProc(Slot* slot, size_t func, const Msgs& msgs,
                              uint64_t trans, ChainState* st) {
  // The request's thread binding: every slot of a worker is on its device.
  rt::ScopedDevice& bound = *st->top->bound;
  if (!bound.Current()) (void)bound.Reassert();  // a UDF switched it
  slot->has_pending = st->has_pending;
  slot->pending = st->pending;
  // A chained call is written on the request slot's call word (Note [The
  // call page] in segment.h) for the host's report of a death.
  CallWord* word =
      slot == st->top ? nullptr : CallWordOf(segment_->base(), st->top->id);
  if (word != nullptr) {
    __atomic_store_n(&word->trans, trans, __ATOMIC_RELAXED);
    __atomic_store_n(&word->slot, slot->id, __ATOMIC_RELEASE);
  }
  slot->caller.store(std::this_thread::get_id());
  slot->in_proc = true;
  const int32_t rc = slot->instance->Proc(bound, func, msgs, trans);
  slot->in_proc = false;
  slot->caller.store(std::thread::id());
  if (word != nullptr) __atomic_store_n(&word->slot, 0, __ATOMIC_RELEASE);
  for (v1::Raised& r : slot->raised) {
    // The stages after it see it, as the host's GetException would.
    st->has_pending = true;
    st->pending.set_code(r.code());
    st->pending.set_user_context_id(r.user_context_id());
    if (slot != st->top) r.set_slot(slot->id);
    *st->done->add_raised() = std::move(r);
  }
  slot->raised.clear();
  return rc;
}

bool WorkerServer::Route(Slot* slot, const Msgs& msgs, uint64_t trans,
                         int32_t rc, ChainState* st) {
  const services::MbufHead* input =
      msgs.empty() || msgs[0] == nullptr
          ? nullptr
          : &static_cast<const flow_func::MbufFlowMsg&>(*msgs[0]).head();
  std::vector<std::pair<uint32_t, services::MbufPtr>> outputs;
  outputs.swap(slot->outputs);
  for (auto& [index, m] : outputs) {
    services::MbufHead& h = m->head();
    // The host's rules for an output it delivers (Router::OutputOf) are
    // applied here where the host will not see the output as this slot's
    // call's: every output of a chained call, and a linked one.
    if (st->linked) {
      services::StampOutput(
          &h, [&] { return trans; }, [&] { return IsInput(h, msgs); },
          slot->error_tag, input);
    }
    Deliver(slot, index, std::move(m), st);
  }
  if (rc == FlowFunc::FLOW_FUNC_SUCCESS || !st->linked) return false;
  PassOn(slot, rc, slot->error_tag, trans, input, st);
  return true;
}

// Note [Failures into an island]
// A failure that reaches an island's first stage from outside (an input
// with a ret code) would, passed on by the host's executor, travel
// through the host's queues of the island's later stages, which no call
// empties otherwise, and reach the island's end behind, or ahead of, the
// transactions the worker chains meanwhile. The first stage takes it
// instead (flow_func::Instance::TakesFailures): the host sends it as a
// Proc, in order with the others, and the worker passes it on without
// calling the UDF, along the links as a failure in a chained call would
// be (PassOn), so it leaves the island in its place.
void WorkerServer::PassOn(Slot* slot, int32_t rc, uint32_t error_node,
                          uint64_t trans, const services::MbufHead* input,
                          ChainState* st) {
  uint64_t at = 0;
  Status s = arena_->Take(0, kErrorAllocMs, &at);
  if (!s.ok()) {
    std::fprintf(stderr, "hflow-worker: passing on a failure: %s\n",
                 s.ToString().c_str());
    st->done->set_rc(FLOW_FUNC_FAILED);  // the host fails the request
    st->failed = true;
    return;
  }
  services::MbufPtr m = BlockAt(slot->device, at, 0);
  services::MbufHead& h = m->head();
  h.ret_code = rc;
  h.error_node = error_node;
  h.trans_id = trans;
  h.msg_type = static_cast<uint16_t>(FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA);
  h.shape = {0};
  if (input != nullptr) {  // the failed cell travels as that cell
    h.route_label = input->route_label;
    h.data_label = input->data_label;
  }
  for (uint32_t j = 0; j < slot->output_num; ++j) Deliver(slot, j, m, st);
}

void WorkerServer::Deliver(Slot* from, uint32_t index, services::MbufPtr m,
                           ChainState* st) {
  auto link =
      std::find_if(from->links.begin(), from->links.end(),
                   [&](const v1::Link& l) { return l.output() == index; });
  Slot* to = link == from->links.end() ? nullptr : FindSlot(link->slot());
  if (to != nullptr && st->held.size() < kMaxChain &&
      std::find(st->held.begin(), st->held.end(), to) == st->held.end()) {
    std::unique_lock<std::mutex> call(to->call_mu);
    if (to->instance && to->device == from->device &&
        link->func() < to->instance->funcs().size()) {
      st->held.push_back(to);
      Chain(to, link->func(), std::move(m), st);
      st->held.pop_back();
      return;
    }
  }
  ToHost(from, index, m, st);
}

void WorkerServer::Chain(Slot* to, uint32_t func, services::MbufPtr m,
                         ChainState* st) {
  const uint64_t trans = m->head().trans_id;
  if (m->head().ret_code != 0) {  // a failure upstream travels on
    const services::MbufHead input = m->head();
    m.reset();
    PassOn(to, input.ret_code, input.error_node, trans, &input, st);
    return;
  }
  Msgs msgs;
  auto msg = flow_func::MbufFlowMsg::FromMbuf(std::move(m));
  msg->MarkShared();  // the host may read the same block
  msgs.push_back(std::move(msg));
  const int32_t rc = RunProc(to, func, msgs, trans, st);
  (void)Route(to, msgs, trans, rc, st);
}

void WorkerServer::ToHost(Slot* from, uint32_t index,
                          const services::MbufPtr& m, ChainState* st) {
  v1::ProcDone* done = st->done;
  Status s = Wire(m, done->add_outputs());
  if (!s.ok()) {
    std::fprintf(stderr, "hflow-worker: %s\n", s.ToString().c_str());
    done->mutable_outputs()->RemoveLast();
    done->set_rc(FLOW_FUNC_FAILED);
    st->failed = true;
    return;
  }
  done->add_output_index(index);
  if (st->linked) done->add_output_slot(from == st->top ? 0 : from->id);
}

}  // namespace worker
}  // namespace hflow
