// WorkerServer's data half (worker_server.h): a Proc's inputs wrapped over
// the shared segment, its outputs described back to the host, and the
// holds on blocks across the two processes. The control half is in
// worker_server.cc.
//
// Thread-safety: see worker_server.h. A slot's released_mu guards its
// released host blocks (input messages die on any thread a UDF keeps them
// on), lent_mu_ the blocks lent to the host (Release arrives on the main
// thread).
#include <cstdio>
#include <cstring>

#include "flow_func/flow_func_defines.h"
#include "worker/wire.h"
#include "worker/worker_server.h"

namespace hflow {
namespace worker {

namespace {

using FlowFunc::FLOW_FUNC_FAILED;

// Note [One end per hold]
// Each hold on a block (ArenaBlock in segment.h, HostHold here; Loan in
// remote_instance.cc) acts in its destructor: it gives the block back or
// tells the other side. So a hold is made in place by make_shared and
// never copied: a temporary moved into make_shared would act once as it
// dies, freeing a block still in use (a later message would overwrite
// it).

// The worker's hold on a host block: its end is reported to the host.
struct HostHold {
  HostHold(std::mutex* m, std::vector<uint64_t>* r, std::shared_ptr<Segment> s,
           uint64_t off)
      : mu(m), released(r), segment(std::move(s)), offset(off) {}
  HostHold(const HostHold&) = delete;
  HostHold& operator=(const HostHold&) = delete;
  std::mutex* mu;
  std::vector<uint64_t>* released;
  std::shared_ptr<Segment> segment;  // mapped while the message lives
  uint64_t offset;
  ~HostHold() {
    std::lock_guard<std::mutex> l(*mu);
    released->push_back(offset);
  }
};

// Note [Releases per slot]
// The host lends a block once per input it sends (a block passed from one
// instance to the next is lent again by the next), and takes an output
// over a host block by finding a lending of it. A worker that reported a
// release in any slot's reply could let the host drop the lending of an
// output before the host has read that output's report (the releasing
// slot's reply overtaking the reporting slot's): the output would be lost
// as "not lent". Each slot reports only the holds made for its own
// inputs, in its own replies, after (or with) the output that used them.

}  // namespace

services::MbufPtr WorkerServer::BlockAt(int32_t device, uint64_t at,
                                        uint64_t bytes) {
  auto block = std::make_shared<ArenaBlock>(arena_, at, bytes);
  return services::MakeHostMbuf(device, segment_->base() + at, bytes,
                                std::move(block));
}

// Note [Outputs outside Proc]
// A UDF may set an output from a thread of its own, or in Init, as it may
// in the host: nothing then waits for a Proc reply to carry it. It goes
// to the host at once as an Emit, and the UDF's SetOutput waits for the
// host's EmitDone: the host delivers it as it delivers such an output of
// a UDF in the host, waiting for room in the consumers' queues, so the
// depth bound holds across the processes too, and the code SetOutput
// returns is the delivery's. The message is held here until the answer,
// so that a host block it lies in (an input the UDF passes on) is not
// reported released before the host has taken its own hold. A host that
// goes away ends the worker, and the wait with it.
int32_t WorkerServer::EmitOutside(Slot* slot, uint32_t index,
                                  std::shared_ptr<flow_func::MbufFlowMsg> msg) {
  v1::WorkerMessage m;
  v1::Emit* e = m.mutable_emit();
  e->set_slot(slot->id);
  e->set_index(index);
  Status s = Wire(msg->mbuf(), e->mutable_msg());
  if (!s.ok()) {
    std::fprintf(stderr, "hflow-worker: an output outside Proc: %s\n",
                 s.ToString().c_str());
    return FLOW_FUNC_FAILED;
  }
  PendingEmit pending;
  std::unique_lock<std::mutex> l(emit_mu_);
  m.set_id(next_emit_++);
  emits_[m.id()] = &pending;
  l.unlock();
  AddCounters(&m);
  if (Status sent = channel_.Send(m); !sent.ok()) {
    l.lock();
    emits_.erase(m.id());
    l.unlock();
    Unlend(e->msg().offset());
    std::fprintf(stderr, "hflow-worker: an output outside Proc: %s\n",
                 sent.ToString().c_str());
    return FLOW_FUNC_FAILED;
  }
  l.lock();
  emit_cv_.wait(l, [&] { return pending.done; });
  return pending.rc;
}

void WorkerServer::OnEmitDone(uint64_t id, int32_t rc) {
  std::lock_guard<std::mutex> l(emit_mu_);
  auto it = emits_.find(id);
  if (it == emits_.end()) return;
  it->second->rc = rc;
  it->second->done = true;
  emits_.erase(it);
  emit_cv_.notify_all();
}

// One lending of a worker block ends without the host's Release (an
// Emit that never reached it).
void WorkerServer::Unlend(uint64_t offset) {
  if (offset < host_bytes_) return;
  services::MbufPtr last;  // released after the lock
  std::lock_guard<std::mutex> l(lent_mu_);
  auto it = lent_.find(offset);
  if (it == lent_.end()) return;
  last = std::move(it->second);
  lent_.erase(it);
}

services::MbufPtr WorkerServer::Over(Slot* slot, const v1::Msg& w, Status* s) {
  if (w.size() > segment_->bytes() ||
      w.offset() > segment_->bytes() - w.size()) {
    *s = Status::InvalidArgument("worker: an input outside the segment");
    return nullptr;
  }
  std::shared_ptr<const void> keep;
  if (w.offset() >= host_bytes_) {  // one of ours, lent to the host
    std::lock_guard<std::mutex> l(lent_mu_);
    auto it = lent_.find(w.offset());
    if (it == lent_.end()) {
      *s = Status::InvalidArgument("worker: an input in a block not lent");
      return nullptr;
    }
    keep = it->second;
  } else {
    keep = std::make_shared<HostHold>(&slot->released_mu, &slot->released,
                                      segment_, w.offset());
  }
  services::MbufPtr m = services::MakeHostMbuf(
      slot->device, segment_->base() + w.offset(), w.size(), std::move(keep));
  *s = HeadFromWire(w.head(), &m->head());
  return m;
}

Status WorkerServer::Wire(const services::MbufPtr& m, v1::Msg* out) {
  HeadToWire(m->head(), out->mutable_head());
  out->set_size(m->size());
  if (segment_->Contains(m->data(), m->size() == 0 ? 1 : m->size())) {
    out->set_offset(segment_->OffsetOf(m->data()));
    if (out->offset() >= host_bytes_) {
      std::lock_guard<std::mutex> l(lent_mu_);
      lent_.emplace(out->offset(), m);
    }
    return Status::OK();
  }
  // Not in the segment (a message the UDF got some other way): one copy.
  uint64_t at = 0;
  HFLOW_RETURN_IF_ERROR(arena_->Take(m->size(), 0, &at));
  if (m->size() > 0) std::memcpy(segment_->base() + at, m->data(), m->size());
  services::MbufPtr copy = BlockAt(m->device(), at, m->size());
  copy->head() = m->head();
  out->set_offset(at);
  std::lock_guard<std::mutex> l(lent_mu_);
  lent_.emplace(at, std::move(copy));
  return Status::OK();
}

// A reply's outputs, taken back before it goes: their blocks are not lent.
void WorkerServer::DropOutputs(v1::ProcDone* done) {
  {
    std::lock_guard<std::mutex> l(lent_mu_);
    for (const v1::Msg& o : done->outputs()) {
      auto it = lent_.find(o.offset());
      if (o.offset() >= host_bytes_ && it != lent_.end()) lent_.erase(it);
    }
  }
  done->clear_outputs();
  done->clear_output_index();
  done->clear_output_slot();
}

// The host lent every input: those from `from` on, not held here, go back
// at once.
void WorkerServer::ReleaseUnread(Slot* slot, const v1::Proc& proc, int from) {
  std::lock_guard<std::mutex> l(slot->released_mu);
  for (int j = from; j < proc.inputs_size(); ++j) {
    if (proc.inputs(j).offset() < host_bytes_) {
      slot->released.push_back(proc.inputs(j).offset());
    }
  }
}

namespace {

// The head of the first input that carries a failure from upstream.
const services::MbufHead* FailedInput(
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs) {
  for (const auto& m : msgs) {
    const services::MbufHead& h =
        static_cast<const flow_func::MbufFlowMsg&>(*m).head();
    if (h.ret_code != 0) return &h;
  }
  return nullptr;
}

}  // namespace

v1::ProcDone WorkerServer::Proc(Slot* slot, const v1::Proc& proc) {
  v1::ProcDone done;
  std::unique_lock<std::mutex> call(slot->call_mu);
  if (!slot->instance || proc.func() >= slot->instance->funcs().size()) {
    done.set_rc(FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
    ReleaseUnread(slot, proc, 0);
    return done;
  }
  std::vector<std::shared_ptr<FlowFunc::FlowMsg>> msgs;
  for (int i = 0; i < proc.inputs_size(); ++i) {
    Status s;
    services::MbufPtr m = Over(slot, proc.inputs(i), &s);
    if (!s.ok()) {
      std::fprintf(stderr, "hflow-worker: %s\n", s.ToString().c_str());
      done.set_rc(FLOW_FUNC_FAILED);
      msgs.clear();
      ReleaseUnread(slot, proc, i);
      break;
    }
    auto msg = flow_func::MbufFlowMsg::FromMbuf(std::move(m));
    msg->MarkShared();  // host consumers may read the same block
    msgs.push_back(std::move(msg));
  }
  const services::MbufHead* failed = FailedInput(msgs);
  if (done.rc() == 0 && failed != nullptr) {
    // Note [Failures into an island] in worker_chain.cc.
    ChainState st(&done, slot, proc);
    const services::MbufHead input = *failed;
    PassOn(slot, input.ret_code, input.error_node, proc.trans(), &input, &st);
    if (!st.failed) {
      done.set_rc(FlowFunc::FLOW_FUNC_SUCCESS);
    } else {
      // Passed on nowhere (every output of the chain comes back in this
      // reply): the host passes the failure on itself, once.
      DropOutputs(&done);
    }
  } else if (done.rc() == 0) {
    ChainState st(&done, slot, proc);
    const int32_t rc = RunProc(slot, proc.func(), msgs, proc.trans(), &st);
    done.set_rc(rc);
    // A failure the chain passed on itself is not the host's to pass on.
    if (Route(slot, msgs, proc.trans(), rc, &st) && !st.failed) {
      done.set_rc(FlowFunc::FLOW_FUNC_SUCCESS);
    }
  }
  msgs.clear();  // the inputs' holds end here unless the UDF kept them
  call.unlock();
  std::lock_guard<std::mutex> l(slot->released_mu);
  for (uint64_t off : slot->released) done.add_released(off);
  slot->released.clear();
  return done;
}

void WorkerServer::OnRelease(const v1::Release& r) {
  std::lock_guard<std::mutex> l(lent_mu_);
  for (uint64_t off : r.offsets()) {
    auto it = lent_.find(off);
    if (it != lent_.end()) lent_.erase(it);
  }
}

}  // namespace worker
}  // namespace hflow
