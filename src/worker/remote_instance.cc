// RemoteInstance: see remote_instance.h.
//
// Thread-safety: see remote_instance.h; lent_mu_ guards lent_, which
// Proc and the releases of output messages (any thread) both touch.
#include "worker/remote_instance.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

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
// worker_server.cc).
struct Loan {
  Loan(std::weak_ptr<WorkerProcess> w, std::shared_ptr<Segment> s, uint64_t off)
      : worker(std::move(w)), segment(std::move(s)), offset(off) {}
  Loan(const Loan&) = delete;
  Loan& operator=(const Loan&) = delete;
  std::weak_ptr<WorkerProcess> worker;
  std::shared_ptr<Segment> segment;  // mapped while the message lives
  uint64_t offset;
  ~Loan() {
    if (auto w = worker.lock()) {
      v1::HostMessage m;
      m.mutable_release()->add_offsets(offset);
      w->Send(m);
    }
  }
};

// A host block: back to the arena when the last holder goes.
struct HostBlock {
  HostBlock(std::shared_ptr<SegmentArena> a, uint64_t off, uint64_t n)
      : arena(std::move(a)), offset(off), bytes(n) {}
  HostBlock(const HostBlock&) = delete;
  HostBlock& operator=(const HostBlock&) = delete;
  std::shared_ptr<SegmentArena> arena;
  uint64_t offset;
  uint64_t bytes;
  ~HostBlock() { arena->Give(offset, bytes); }
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
                              flow_func::InstanceEnv env, RemoteConfig config,
                              std::unique_ptr<RemoteInstance>* out) {
  std::unique_ptr<RemoteInstance> r(new RemoteInstance());
  r->funcs_ = std::move(funcs);
  r->env_ = std::move(env);
  r->config_ = std::move(config);
  r->host_bytes_ = r->config_.segment_bytes / 2;
  r->restarts_left_.store(std::max(0, r->config_.max_restarts));
  for (const auto& f : r->funcs_) {
    if (f.stream_input) {
      return Status::NotSupported(
          "node '" + r->env_.node + "': function '" + f.name +
          "' is a stream function (stream_input), which runs in the host "
          "only; take it out of the worker (heavy_load, udf_isolation)");
    }
  }
  HFLOW_RETURN_IF_ERROR(r->Launch());
  *out = std::move(r);
  return Status::OK();
}

Status RemoteInstance::Launch() {
  auto p = std::make_shared<Process>();
  // The name labels the mapping in /proc/<pid>/maps (memfd: at most 249).
  const std::string name = "hflow-" + env_.node.substr(0, 200);
  HFLOW_RETURN_IF_ERROR(
      Segment::Create(name, config_.segment_bytes, &p->segment));
  if (config_.contexts) {
    rt::DeviceRuntime* rt = config_.contexts->runtime();
    HFLOW_RETURN_IF_ERROR(
        rt->HostRegister(p->segment->base(), p->segment->bytes())
            .WithContext("node '" + env_.node +
                         "': registering its worker's segment: "));
    p->segment->SetOnUnmap(
        [contexts = config_.contexts, base = p->segment->base()] {
          (void)contexts->runtime()->HostUnregister(base);
        });
  }
  p->arena = std::make_shared<SegmentArena>(p->segment, 0, host_bytes_);
  WorkerSpec spec;
  spec.binary = config_.binary;
  spec.what = What();
  spec.tag = env_.node.substr(0, 12);
  spec.heartbeat_ms = config_.heartbeat_ms;
  spec.prefix =
      "[worker " + env_.node + "@device" + std::to_string(env_.device) + "] ";
  spec.on_death = [this, arena = p->arena](const Status& death) {
    arena->Cancel();  // nothing will give host blocks back any more
    Died(Status(death.code(), death.message() + " " + Doing()));
  };
  HFLOW_RETURN_IF_ERROR(WorkerProcess::Start(std::move(spec), &p->worker));
  if (config_.counters) {
    p->counters_id =
        config_.counters->Add([w = std::weak_ptr<WorkerProcess>(p->worker)] {
          rt::ForeignCounters::PerDevice out;
          if (auto worker = w.lock()) {
            for (const auto& [d, c] : worker->counters()) {
              out[d] = {c.contexts_created(), c.implicit_bindings()};
            }
          }
          return out;
        });
  }
  std::lock_guard<std::mutex> l(proc_mu_);
  proc_ = std::move(p);
  return Status::OK();
}

void RemoteInstance::Retire(const Process& p) {
  if (config_.counters && p.counters_id != 0) {
    config_.counters->Retire(p.counters_id);
  }
}

// Half the stop timeout for the worker's own Stop (its destructors), so
// that killing it still fits in the undeploy's wait for this instance.
RemoteInstance::~RemoteInstance() {
  std::shared_ptr<const Process> p = Current();
  if (!p || !p->worker) return;
  const int32_t t = config_.stop_timeout_ms;
  (void)p->worker->Stop(t < 0 ? -1 : t / 2);
  Retire(*p);  // after Stop: its reply reports the destructors' work
}

std::shared_ptr<const RemoteInstance::Process> RemoteInstance::Current() const {
  std::lock_guard<std::mutex> l(proc_mu_);
  return proc_;
}

pid_t RemoteInstance::pid() const {
  std::shared_ptr<const Process> p = Current();
  return p && p->worker ? p->worker->pid() : -1;
}

std::string RemoteInstance::What() const {
  return "node '" + env_.node + "' (replica " +
         std::to_string(env_.instance_id) + ") on device " +
         std::to_string(env_.device);
}

std::string RemoteInstance::Doing() const {
  switch (static_cast<util::UdfPhase>(phase_.load())) {
    case util::UdfPhase::kInit:
      return "in Init";
    case util::UdfPhase::kProc:
      return "in Proc of transaction " + std::to_string(trans_.load());
    case util::UdfPhase::kReset:
      return "in ResetFlowFuncState";
    default:
      return "between calls";
  }
}

Status RemoteInstance::Init(const rt::ScopedDevice& bound) {
  return Load(bound);
}

Status RemoteInstance::Load(const rt::ScopedDevice& bound) {
  HFLOW_RETURN_IF_ERROR(bound.Require(env_.device));
  std::shared_ptr<const Process> p = Current();
  v1::HostMessage req;
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
  }
  for (int32_t d : config_.runtime_devices) load->add_runtime_devices(d);
  load->set_default_device(config_.default_device);
  load->set_segment_bytes(config_.segment_bytes);
  load->set_host_bytes(host_bytes_);
  load->set_max_message_bytes(config_.max_message_bytes);
  load->set_alloc_timeout_ms(config_.alloc_timeout_ms);
  phase_.store(uint32_t(util::UdfPhase::kInit));
  v1::WorkerMessage reply;
  Status s = p->worker->Call(&req, &reply, config_.init_timeout_ms, "Init",
                             p->segment->fd());
  phase_.store(0);
  HFLOW_RETURN_IF_ERROR(s);
  return FromDone(reply.done());
}

Status RemoteInstance::PutInput(const Process& p, const FlowFunc::FlowMsg& in,
                                v1::Msg* out) {
  const auto& msg = static_cast<const flow_func::MbufFlowMsg&>(in);
  const services::MbufPtr& m = msg.mbuf();
  HeadToWire(m->head(), out->mutable_head());
  out->set_size(m->size());
  std::shared_ptr<void> block;
  if (m->size() > 0 && p.segment->Contains(m->data(), m->size())) {
    out->set_offset(p.segment->OffsetOf(m->data()));  // already shared
    if (out->offset() >= host_bytes_) return Status::OK();
    block = std::shared_ptr<void>(m, nullptr);  // a host block: keep it
  } else {
    uint64_t at = 0;
    HFLOW_RETURN_IF_ERROR(
        p.arena->Take(m->size(), config_.alloc_timeout_ms, &at)
            .WithContext(What() + ": an input of " + std::to_string(m->size()) +
                         " bytes: "));
    if (m->size() > 0) {
      std::memcpy(p.segment->base() + at, m->data(), m->size());
    }
    out->set_offset(at);
    block = std::make_shared<HostBlock>(p.arena, at, m->size());
  }
  std::lock_guard<std::mutex> l(lent_mu_);
  lent_.emplace(out->offset(), std::move(block));
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

int32_t RemoteInstance::ProcOnce(
    const rt::ScopedDevice& bound, size_t index,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
    uint64_t trans, bool* delivered) {
  std::shared_ptr<const Process> p = Current();
  if (!p->worker->alive()) {
    // Dead between calls, or in the last one: with no restart left the
    // graph has failed (Died).
    if (restarts_left_.load() <= 0) return FLOW_FUNC_FAILED;
    trans_.store(trans);
    Status s = Restart(bound, /*spend=*/true);
    if (!s.ok()) {
      restarts_left_.store(0);  // a worker that cannot start: no loop
      if (config_.on_death) {
        config_.on_death(s.WithContext(What() + ": starting its worker again"
                                                " after a death: "));
      }
      return FLOW_FUNC_FAILED;
    }
    p = Current();
  }
  v1::HostMessage req;
  req.mutable_proc()->set_func(uint32_t(index));
  req.mutable_proc()->set_trans(trans);
  // In a call from here on: a stop that times out cancels a wait for
  // segment memory too.
  trans_.store(trans);
  phase_.store(uint32_t(util::UdfPhase::kProc));
  for (const auto& in : inputs) {
    Status s = PutInput(*p, *in, req.mutable_proc()->add_inputs());
    if (!s.ok()) {
      phase_.store(0);
      if (s.code() == StatusCode::kCancelled) {
        // The worker died (its arena is cancelled before its death is
        // marked): it never saw this request, so wait for the mark and let
        // Proc try again in a new worker.
        for (int i = 0; i < 2000 && p->worker->alive(); ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (!p->worker->alive() && restarts_left_.load() > 0) {
          *delivered = false;
          return FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING;
        }
      }
      Report(s);
      return FLOW_FUNC_FAILED;
    }
  }
  v1::WorkerMessage reply;
  Status s = p->worker->Call(&req, &reply, -1, "Proc", -1, delivered);
  phase_.store(0);
  if (!s.ok()) {
    // Dead (Died reports the cause, or a stop killed it): nothing will
    // give host blocks back any more.
    if (p->worker->alive()) return FLOW_FUNC_FAILED;
    p->arena->Cancel();
    return restarts_left_.load() > 0 ? FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING
                                     : FLOW_FUNC_FAILED;
  }
  if (!reply.has_proc_done()) {
    Report(Status::Internal(What() + ": the worker answered Proc with "
                                     "another reply"));
    return FLOW_FUNC_FAILED;
  }
  const v1::ProcDone& done = reply.proc_done();
  Status out = TakeOutputs(*p, done);
  Released(done);  // after TakeOutputs: an output may be a released input
  if (!out.ok()) {
    Report(out);
    return FLOW_FUNC_FAILED;
  }
  return done.rc();
}

// Every output is checked before any is taken: a bad report takes none,
// and the worker's blocks among them go back at once.
Status RemoteInstance::CheckOutputs(const Process& p,
                                    const v1::ProcDone& done) const {
  if (done.output_index_size() != done.outputs_size()) {
    return Status::Internal(What() +
                            ": the worker reported outputs "
                            "without their indexes");
  }
  for (const v1::Msg& w : done.outputs()) {
    if (w.size() > p.segment->bytes() ||
        w.offset() > p.segment->bytes() - w.size() ||
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

Status RemoteInstance::TakeOutputs(const Process& p, const v1::ProcDone& done) {
  if (Status bad = CheckOutputs(p, done); !bad.ok()) {
    v1::HostMessage back;
    for (const v1::Msg& w : done.outputs()) {
      if (w.offset() >= host_bytes_) {
        back.mutable_release()->add_offsets(w.offset());
      }
    }
    if (back.has_release()) p.worker->Send(back);
    return bad;
  }
  Status last;
  for (int i = 0; i < done.outputs_size(); ++i) {
    const v1::Msg& w = done.outputs(i);
    std::shared_ptr<const void> keep;
    if (w.offset() >= host_bytes_) {
      keep = std::make_shared<Loan>(p.worker, p.segment, w.offset());
    } else {
      std::lock_guard<std::mutex> l(lent_mu_);
      auto it = lent_.find(w.offset());
      if (it == lent_.end()) {
        last = Status::Internal(What() +
                                ": the worker reported an output "
                                "in a host block it was not lent");
        continue;
      }
      keep = it->second;
    }
    services::MbufPtr m = services::MakeHostMbuf(
        env_.device, p.segment->base() + w.offset(), w.size(), std::move(keep));
    (void)HeadFromWire(w.head(), &m->head());  // checked: cannot fail
    const int32_t rc = env_.output(
        done.output_index(i), flow_func::MbufFlowMsg::FromMbuf(std::move(m)));
    if (rc != FLOW_FUNC_SUCCESS) {
      last = Status::Internal(What() + ": output " +
                              std::to_string(done.output_index(i)) +
                              " failed with code " + std::to_string(rc));
    }
  }
  return last;
}

void RemoteInstance::Released(const v1::ProcDone& done) {
  std::lock_guard<std::mutex> l(lent_mu_);
  for (uint64_t off : done.released()) {
    auto it = lent_.find(off);
    if (it != lent_.end()) lent_.erase(it);
  }
}

int32_t RemoteInstance::ProcQueues(
    const rt::ScopedDevice&, size_t,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>&) {
  return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;  // refused at Create
}

// A dead worker (the graph failed with it, or died with restarts left)
// is started again: a new object, Init'ed, as GE recreates an instance
// whose reset it cannot do.
Status RemoteInstance::ResetState(const rt::ScopedDevice& bound,
                                  bool* recreated) {
  HFLOW_RETURN_IF_ERROR(bound.Require(env_.device));
  restarts_left_.store(std::max(0, config_.max_restarts));
  std::shared_ptr<const Process> p = Current();
  if (!p->worker->alive()) {
    if (recreated != nullptr) *recreated = true;
    return Restart(bound, /*spend=*/false)
        .WithContext(What() + ": starting its dead worker again: ");
  }
  v1::HostMessage req;
  req.mutable_reset();
  phase_.store(uint32_t(util::UdfPhase::kReset));
  v1::WorkerMessage reply;
  Status s = p->worker->Call(&req, &reply, config_.stop_timeout_ms,
                             "ResetFlowFuncState");
  phase_.store(0);
  HFLOW_RETURN_IF_ERROR(s);
  if (recreated != nullptr) *recreated = reply.done().recreated();
  return FromDone(reply.done());
}

bool RemoteInstance::InCall(std::string* what) const {
  if (phase_.load() == 0) return false;
  if (what != nullptr) *what = What() + " " + Doing() + " (in its worker)";
  return true;
}

void RemoteInstance::Cancel() {
  std::shared_ptr<const Process> p = Current();
  if (!p || phase_.load() == 0) return;
  p->arena->Cancel();  // a Proc waiting for segment memory
  p->worker->Kill();
}

}  // namespace worker
}  // namespace hflow
