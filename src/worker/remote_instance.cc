// RemoteInstance: see remote_instance.h.
//
// Thread-safety: see remote_instance.h; lent_mu_ guards lent_, which
// Proc and the releases of output messages (any thread) both touch.
#include "worker/remote_instance.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "util/crash_report.h"
#include "worker/wire.h"

namespace hflow {
namespace worker {

namespace {

using FlowFunc::FLOW_FUNC_FAILED;
using FlowFunc::FLOW_FUNC_SUCCESS;

// Keeps a worker block alive in the worker while a host message reads it;
// its end tells the worker (Release). Made in place, never copied: a
// copy's end would release the block twice (Note [One end per hold] in
// worker_data.cc).
struct Loan {
  Loan(std::weak_ptr<WorkerProcess> w, std::shared_ptr<Segment> s, uint64_t off)
      : worker(std::move(w)), segment(std::move(s)), offset(off) {}
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;
  std::weak_ptr<WorkerProcess> worker;
  std::shared_ptr<Segment> segment;  // mapped while the message lives
  uint64_t offset;
  ~Loan() {
    if (GatheredReleases::Add(worker, offset)) return;
    if (auto w = worker.lock()) {
      v1::HostMessage m;
      m.mutable_release()->add_offsets(offset);
      w->Send(m);
    }
  }
};

// A failure that becomes the transaction's error code: its words go to
// stderr, as a UDF's own error log would.
void Report(const Status& s) {
  const std::string line = "hflow: " + s.ToString() + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

Status FromDone(const v1::Done& d) {
  if (d.code() == 0) return Status::OK();
  return Status(static_cast<StatusCode>(d.code()), d.message());
}

}  // namespace

Status RemoteInstance::Create(std::vector<flow_func::FuncDesc> funcs,
                              flow_func::InstanceEnv env,
                              std::shared_ptr<SharedWorker> seat,
                              std::unique_ptr<RemoteInstance>* out) {
  std::unique_ptr<RemoteInstance> r(new RemoteInstance());
  r->funcs_ = std::move(funcs);
  r->env_ = std::move(env);
  for (const auto& f : r->funcs_) {
    if (f.stream_input) {
      return Status::NotSupported(
          "node '" + r->env_.node + "': function '" + f.name +
          "' is a stream function (stream_input), which runs in the host "
          "only; take it out of the worker (heavy_load, udf_isolation)");
    }
  }
  r->max_batch_ = MaxBatchFromEnv(kMaxBatch);
  const char* chain = std::getenv("HFLOW_WORKER_CHAIN");
  r->chains_ = chain == nullptr || std::string(chain) != "0";
  r->seat_ = std::move(seat);
  r->slot_ = r->seat_->Join(r.get());
  // Joined first: a worker started here is named after this instance.
  HFLOW_RETURN_IF_ERROR(r->seat_->Start());
  *out = std::move(r);
  return Status::OK();
}

// The user's destructors run in the worker now, with half the stop
// timeout (the seat's own Stop has the other half).
RemoteInstance::~RemoteInstance() {
  if (!seat_) return;
  std::shared_ptr<const Life> p = seat_->Current();
  if (p && p->process->alive() && loaded_.load() == p->number) {
    v1::HostMessage req = Request();
    req.mutable_unload();
    v1::WorkerMessage reply;
    const int32_t t = config().stop_timeout_ms;
    (void)p->process->Call(&req, &reply, t < 0 ? -1 : t / 2,
                           "unloading " + What());
  }
  seat_->Leave(this);
}

v1::HostMessage RemoteInstance::Request() const {
  v1::HostMessage req;
  req.set_slot(slot_);
  return req;
}

pid_t RemoteInstance::pid() const {
  std::shared_ptr<const Life> p = seat_->Current();
  return p && p->process ? p->process->pid() : -1;
}

std::string RemoteInstance::Name() const {
  return "node '" + env_.node + "' (replica " +
         std::to_string(env_.instance_id) + ")";
}

std::string RemoteInstance::What() const {
  return Name() + " on device " + std::to_string(env_.device);
}

std::string RemoteInstance::Doing() const {
  switch (static_cast<util::UdfPhase>(phase_.load())) {
    case util::UdfPhase::kInit:
      return "in Init";
    case util::UdfPhase::kProc:
      return "in Proc of transaction " + std::to_string(trans_.load()) +
             (linked_nodes_.empty()
                  ? ""
                  : " (or in a node it feeds there: " + linked_nodes_ + ")");
    case util::UdfPhase::kReset:
      return "in ResetFlowFuncState";
    default:
      return "between calls";
  }
}

Status RemoteInstance::Init(const rt::ScopedDevice& bound) {
  std::shared_ptr<const Life> p = seat_->Current();
  return Load(bound, *p);
}

Status RemoteInstance::Load(const rt::ScopedDevice& bound, const Life& life,
                            bool own) {
  HFLOW_RETURN_IF_ERROR(bound.Require(env_.device));
  const RemoteConfig& cfg = config();
  v1::HostMessage req = Request();
  v1::Load* load = req.mutable_load();
  load->set_node(env_.node);
  load->set_work_path(env_.work_path);
  load->set_device(env_.device);
  load->set_instance_id(env_.instance_id);
  load->set_instance_num(env_.instance_num);
  load->set_input_num(uint32_t(env_.input_num));
  load->set_output_num(uint32_t(env_.output_num));
  load->set_balance(static_cast<int32_t>(env_.balance));
  HFLOW_RETURN_IF_ERROR(AttrsToWire(env_.attrs, load->mutable_attrs())
                            .WithContext("node '" + env_.node + "': "));
  for (const auto& f : funcs_) {
    v1::FuncDesc* w = load->add_funcs();
    w->set_name(f.name);
    for (int32_t i : f.inputs_index) w->add_inputs_index(i);
    for (int32_t i : f.outputs_index) w->add_outputs_index(i);
    w->set_library(f.library);
    w->set_python(f.remote.payload);
  }
  for (int32_t d : cfg.runtime_devices) load->add_runtime_devices(d);
  load->set_default_device(cfg.default_device);
  load->set_ctxcheck(cfg.ctxcheck);
  load->set_segment_bytes(cfg.segment_bytes);
  load->set_host_bytes(seat_->host_bytes());
  load->set_reply_ring_bytes(seat_->ring_bytes());
  load->set_max_message_bytes(cfg.max_message_bytes);
  load->set_alloc_timeout_ms(cfg.alloc_timeout_ms);
  load->set_error_tag(env_.error_tag);
  AddLinks(load);
  std::shared_ptr<ArenaBlock> ring;
  PlanRing(life, load, &ring);
  if (own) phase_.store(uint32_t(util::UdfPhase::kInit));
  v1::WorkerMessage reply;
  Status s = life.process->Call(&req, &reply, cfg.init_timeout_ms, "Init",
                                life.segment->fd());
  if (own) phase_.store(0);
  HFLOW_RETURN_IF_ERROR(s);
  HFLOW_RETURN_IF_ERROR(FromDone(reply.done()));
  if (ring) {
    auto made = std::make_shared<Ring>(life.segment->base(), *load,
                                       std::move(ring), life.number);
    std::lock_guard<std::mutex> l(ring_mu_);
    ring_ = std::move(made);
  }
  loaded_.store(life.number);
  return Status::OK();
}

Status RemoteInstance::PutInput(const Life& life, const FlowFunc::FlowMsg& in,
                                int32_t wait_ms, v1::Msg* out) {
  const auto& msg = static_cast<const flow_func::MbufFlowMsg&>(in);
  const services::MbufPtr& m = msg.mbuf();
  HeadToWire(m->head(), out->mutable_head());
  out->set_size(m->size());
  const uint64_t host_bytes = seat_->host_bytes();
  std::shared_ptr<void> block;
  if (m->size() > 0 && life.segment->Contains(m->data(), m->size())) {
    out->set_offset(life.segment->OffsetOf(m->data()));  // already shared
    if (out->offset() >= host_bytes) return Status::OK();
    block = std::shared_ptr<void>(m, nullptr);  // a host block: keep it
  } else {
    uint64_t at = 0;
    HFLOW_RETURN_IF_ERROR(life.arena->Take(m->size(), wait_ms, &at)
                              .WithContext(What() + ": an input of " +
                                           std::to_string(m->size()) +
                                           " bytes: "));
    if (m->size() > 0) {
      std::memcpy(life.segment->base() + at, m->data(), m->size());
    }
    out->set_offset(at);
    block = std::make_shared<ArenaBlock>(life.arena, at, m->size());
  }
  life.Lend(out->offset(), std::move(block));
  return Status::OK();
}

int32_t RemoteInstance::Proc(
    const rt::ScopedDevice& bound, size_t index,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
    uint64_t trans) {
  bool delivered = true;
  const int32_t rc = ProcOnce(bound, index, inputs, trans, &delivered);
  // A worker that died before this call (its death not yet seen when the
  // call began) never saw the request: with a restart left this is a
  // death between calls, which loses nothing; try once more.
  if (delivered || rc != FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING) return rc;
  return ProcOnce(bound, index, inputs, trans, &delivered);
}

// The arena is cancelled before the death is marked (the seat's OnDeath
// runs first), so a caller that found it cancelled waits for the mark.
bool RemoteInstance::AwaitDeath(const Life& life) {
  return life.process->WaitDead(2000);
}

int32_t RemoteInstance::ProcOnce(
    const rt::ScopedDevice& bound, size_t index,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
    uint64_t trans, bool* delivered) {
  std::shared_ptr<const Life> p = seat_->Current();
  if (!p->process->alive() || loaded_.load() != p->number) {
    const int32_t rc = Recover(bound, trans, &p);
    if (rc != FLOW_FUNC_SUCCESS) return rc;
  }
  // In a call from here on: a stop that times out cancels a wait for
  // segment memory too.
  trans_.store(trans);
  phase_.store(uint32_t(util::UdfPhase::kProc));
  v1::HostMessage req;
  Status put =
      Prepare(*p, index, inputs, trans, config().alloc_timeout_ms, &req);
  if (!put.ok()) {
    phase_.store(0);
    return PrepareFailed(*p, put, delivered);
  }
  CountRoundTrip(1);
  v1::WorkerMessage reply;
  const std::shared_ptr<Ring> ring = RingOf(*p);
  Status s = p->process->Call(&req, &reply, -1, "Proc", -1, delivered,
                              ring ? &ring->rings : nullptr);
  phase_.store(0);
  return Finish(*p, req, s, *delivered, reply);
}

Status RemoteInstance::Prepare(
    const Life& life, size_t index,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
    uint64_t trans, int32_t wait_ms, v1::HostMessage* req) {
  *req = Request();
  v1::Proc* proc = req->mutable_proc();
  proc->set_func(uint32_t(index));
  proc->set_trans(trans);
  int32_t code = 0;
  uint64_t user_context_id = 0;
  if (env_.get_exception && env_.get_exception(&code, &user_context_id)) {
    proc->mutable_pending()->set_code(code);
    proc->mutable_pending()->set_user_context_id(user_context_id);
  }
  for (const auto& in : inputs) {
    Status s = PutInput(life, *in, wait_ms, proc->add_inputs());
    if (!s.ok()) {
      proc->mutable_inputs()->RemoveLast();  // not lent
      Unlend(life, *proc);
      return s;
    }
  }
  return Status::OK();
}

int32_t RemoteInstance::PrepareFailed(const Life& life, const Status& s,
                                      bool* delivered) {
  // A dead worker (cancelled arena) never saw this request: let Proc
  // try again in a new one.
  if (s.code() == StatusCode::kCancelled && AwaitDeath(life) &&
      life.Restartable()) {
    *delivered = false;
    return FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING;
  }
  Report(s);
  return FLOW_FUNC_FAILED;
}

int32_t RemoteInstance::Finish(const Life& life, const v1::HostMessage& req,
                               const Status& s, bool delivered,
                               const v1::WorkerMessage& reply) {
  if (!s.ok()) {
    if (life.process->alive()) {
      // Not sent (a request too large for the socket), or a stop's
      // planned kill in progress: the worker never holds these inputs.
      if (!delivered) Unlend(life, req.proc());
      Report(s.WithContext(What() + ": "));
      return FLOW_FUNC_FAILED;
    }
    // Dead (the seat reports the cause, or a stop killed it): nothing
    // will give host blocks back any more.
    life.arena->Cancel();
    return life.Restartable() ? FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING
                              : FLOW_FUNC_FAILED;
  }
  if (!reply.has_proc_done()) {
    Unlend(life, req.proc());
    Report(Status::Internal(What() + ": the worker answered Proc with "
                                     "another reply"));
    return FLOW_FUNC_FAILED;
  }
  const v1::ProcDone& done = reply.proc_done();
  // Raised first: in the host a raise comes before the outputs after it,
  // and exception catch drops what follows (GE ignores it).
  for (const v1::Raised& r : done.raised()) {
    const RemoteInstance* by = r.slot() == 0 ? this : Downstream(r.slot());
    if (by == nullptr) {
      Report(Status::Internal(What() +
                              ": the worker reported a raise of "
                              "slot " +
                              std::to_string(r.slot()) +
                              ", which it feeds not; dropped"));
    } else if (by->env_.raise) {
      by->env_.raise(r.code(), r.user_context_id());
    }
  }
  Status out = TakeOutputs(life, done);
  life.Released(done);  // after TakeOutputs: an output may be a released input
  if (!out.ok()) {
    Report(out);
    return FLOW_FUNC_FAILED;
  }
  return done.rc();
}

// Every output is checked before any is taken: a bad report takes none,
// and the worker's blocks among them go back at once.
Status RemoteInstance::CheckOutputs(const Life& life,
                                    const v1::ProcDone& done) const {
  if (done.output_index_size() != done.outputs_size() ||
      (done.output_slot_size() != 0 &&
       done.output_slot_size() != done.outputs_size())) {
    return Status::Internal(What() +
                            ": the worker reported outputs "
                            "without their indexes");
  }
  for (uint32_t slot : done.output_slot()) {
    if (slot != 0 && Downstream(slot) == nullptr) {
      return Status::Internal(What() +
                              ": the worker reported an output of "
                              "slot " +
                              std::to_string(slot) + ", which it feeds not");
    }
  }
  const uint64_t bytes = life.segment->bytes();
  for (const v1::Msg& w : done.outputs()) {
    if (w.size() > bytes || w.offset() > bytes - w.size() ||
        w.head().data_offset() > w.size() ||
        w.head().user_data().size() > services::kMaxUserData) {
      return Status::Internal(What() +
                              ": the worker reported an output "
                              "outside its segment");
    }
    for (const v1::TensorDesc& t : w.head().tensor_list()) {
      if (t.bytes() > w.size() || t.offset() > w.size() - t.bytes()) {
        return Status::Internal(What() +
                                ": the worker reported a tensor "
                                "outside its message");
      }
    }
  }
  return Status::OK();
}

Status RemoteInstance::TakeOutputs(const Life& life, const v1::ProcDone& done,
                                   int32_t* last_rc) {
  const uint64_t host_bytes = seat_->host_bytes();
  if (Status bad = CheckOutputs(life, done); !bad.ok()) {
    v1::HostMessage back;
    for (const v1::Msg& w : done.outputs()) {
      if (w.offset() >= host_bytes) {
        back.mutable_release()->add_offsets(w.offset());
      }
    }
    if (back.has_release()) life.process->Send(back);
    return bad;
  }
  Status last;
  for (int i = 0; i < done.outputs_size(); ++i) {
    const v1::Msg& w = done.outputs(i);
    std::shared_ptr<const void> keep;
    if (w.offset() >= host_bytes) {
      keep = std::make_shared<Loan>(life.process, life.segment, w.offset());
    } else {
      if (!life.Lent(w.offset(), &keep)) {
        last = Status::Internal(What() +
                                ": the worker reported an output "
                                "in a host block it was not lent");
        continue;
      }
    }
    // Set by this instance's UDF, or by one it feeds in the worker.
    const uint32_t slot =
        done.output_slot_size() == 0 ? 0 : done.output_slot(i);
    const RemoteInstance* by = slot == 0 ? this : Downstream(slot);
    services::MbufPtr m = services::MakeHostMbuf(
        by->env_.device, life.segment->base() + w.offset(), w.size(),
        std::move(keep));
    (void)HeadFromWire(w.head(), &m->head());  // checked: cannot fail
    const int32_t rc = by->env_.output(
        done.output_index(i), flow_func::MbufFlowMsg::FromMbuf(std::move(m)));
    if (rc != FLOW_FUNC_SUCCESS) {
      if (last_rc != nullptr) *last_rc = rc;
      last = Status::Internal(What() + ": output " +
                              std::to_string(done.output_index(i)) +
                              " failed with code " + std::to_string(rc));
    }
  }
  return last;
}

// Taken as a one-output reply would be; the code goes back to the UDF's
// SetOutput. A structural fault (outside the segment) fails it, with
// words on stderr as a Proc's would have; a delivery's own code (a
// closed queue, a bad index) is the UDF's to handle, as in the host.
int32_t RemoteInstance::Emitted(const SharedWorker::Life& life,
                                const v1::Emit& emit) {
  v1::ProcDone one;
  one.add_output_index(emit.index());
  *one.add_outputs() = emit.msg();
  int32_t rc = FLOW_FUNC_SUCCESS;
  const Status s = TakeOutputs(life, one, &rc);
  if (s.ok()) return FLOW_FUNC_SUCCESS;
  if (rc != FLOW_FUNC_SUCCESS) return rc;
  Report(s);
  return FLOW_FUNC_FAILED;
}

// The request's host blocks the worker will never hold: their lendings
// end here (the blocks return once no host message uses them).
void RemoteInstance::Unlend(const Life& life, const v1::Proc& proc) const {
  for (const v1::Msg& in : proc.inputs()) {
    if (in.offset() < seat_->host_bytes()) life.Unlend(in.offset());
  }
}

int32_t RemoteInstance::ProcQueues(
    const rt::ScopedDevice&, size_t,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>&) {
  return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;  // refused at Create
}

bool RemoteInstance::InCall(std::string* what) const {
  if (phase_.load() == 0) return false;
  if (what != nullptr) *what = What() + " " + Doing() + " (in its worker)";
  return true;
}

// Ends the whole worker: its other members' calls fail too (a stop that
// timed out ends them all anyway).
void RemoteInstance::Cancel() {
  if (phase_.load() != 0) seat_->Cancel();
}

}  // namespace worker
}  // namespace hflow
