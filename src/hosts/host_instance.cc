// The driver's handle on an instance in another host's hflowd
// (hosts/host_instance.h).
//
// Thread-safety: the executor serializes the calls; phase_ is atomic for
// InCall; link_'s client is thread-safe.
#include "hosts/host_instance.h"

#include <utility>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "worker/proto/worker.pb.h"
#include "worker/wire.h"

namespace hflow::hosts {

namespace v1 = worker::v1;
using FlowFunc::FLOW_FUNC_FAILED;

HostInstance::HostInstance(std::shared_ptr<HostLink> link, uint64_t id,
                           deploy::RemoteInstanceSpec spec)
    : link_(std::move(link)), id_(id), spec_(std::move(spec)) {}

HostInstance::~HostInstance() {
  if (!loaded_ || link_->closing) return;
  v1::HostMessage m;
  m.mutable_unload();
  std::string reply;
  std::vector<std::string> payloads;
  // A daemon that is gone unloaded it with the session already.
  (void)Send(m.SerializeAsString(), {}, 10000, &reply, &payloads);
}

std::string HostInstance::What() const {
  return "node '" + spec_.env.node + "' (replica " +
         std::to_string(spec_.env.instance_id) + ") on cluster node " +
         std::to_string(spec_.host) + " device " + std::to_string(spec_.device);
}

Status HostInstance::Send(std::string request,
                          std::vector<std::string> payloads, int32_t timeout_ms,
                          std::string* reply,
                          std::vector<std::string>* reply_payloads) {
  net::InstanceCall call;
  call.session = link_->session;
  call.instance = id_;
  call.request = std::move(request);
  call.payloads = std::move(payloads);
  net::InstanceReply r;
  HFLOW_RETURN_IF_ERROR(link_->client->Call(&call, &r, timeout_ms));
  *reply = std::move(r.reply);
  *reply_payloads = std::move(r.payloads);
  return Status::OK();
}

Status HostInstance::Done(const std::string& reply) const {
  v1::WorkerMessage m;
  if (!m.ParseFromString(reply) || !m.has_done()) {
    return Status::Internal(What() + ": the daemon's reply is no Done");
  }
  if (m.done().code() == 0) return Status::OK();
  return Status(static_cast<StatusCode>(m.done().code()), m.done().message());
}

Status HostInstance::MakeLoad(v1::HostMessage* m) {
  v1::Load* load = m->mutable_load();
  const flow_func::InstanceEnv& env = spec_.env;
  load->set_node(env.node);
  load->set_work_path(env.work_path);
  load->set_device(spec_.device);
  load->set_instance_id(env.instance_id);
  load->set_instance_num(env.instance_num);
  load->set_input_num(static_cast<uint32_t>(env.input_num));
  load->set_output_num(static_cast<uint32_t>(env.output_num));
  load->set_balance(static_cast<int32_t>(env.balance));
  load->set_error_tag(env.error_tag);
  load->set_max_message_bytes(spec_.max_message_bytes);
  load->set_alloc_timeout_ms(spec_.alloc_timeout_ms);
  load->set_hosted_instance(id_);
  HFLOW_RETURN_IF_ERROR(worker::AttrsToWire(env.attrs, load->mutable_attrs())
                            .WithContext(What() + ": "));
  for (const flow_func::FuncDesc& f : spec_.funcs) {
    v1::FuncDesc* w = load->add_funcs();
    w->set_name(f.name);
    for (int32_t i : f.inputs_index) w->add_inputs_index(i);
    for (int32_t o : f.outputs_index) w->add_outputs_index(o);
    w->set_library(f.library);
  }
  phase_ = 1;
  return Status::OK();
}

Status HostInstance::Loaded(const Status& sent, const std::string& reply) {
  phase_ = 0;
  Status s = sent.ok() ? Done(reply) : sent;
  HFLOW_RETURN_IF_ERROR(s.WithContext(What() + ": "));
  loaded_ = true;
  return Status::OK();
}

Status HostInstance::Init(const rt::ScopedDevice&) {
  v1::HostMessage m;
  HFLOW_RETURN_IF_ERROR(MakeLoad(&m));
  std::string reply;
  std::vector<std::string> payloads;
  Status s =
      Send(m.SerializeAsString(), {}, spec_.init_timeout_ms, &reply, &payloads);
  return Loaded(s, reply);
}

void HostInstance::AddProc(
    size_t index, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
    uint64_t trans, v1::Proc* p, std::vector<std::string>* payloads) const {
  p->set_func(static_cast<uint32_t>(index));
  p->set_trans(trans);
  int32_t code = 0;
  uint64_t ctx = 0;
  if (spec_.env.get_exception && spec_.env.get_exception(&code, &ctx)) {
    p->mutable_pending()->set_code(code);
    p->mutable_pending()->set_user_context_id(ctx);
  }
  for (const auto& in : inputs) {
    // Device memory is host memory on the backends that run this (sim).
    const auto& msg = static_cast<const flow_func::MbufFlowMsg&>(*in);
    const services::MbufPtr& mb = msg.mbuf();
    v1::Msg* w = p->add_inputs();
    worker::HeadToWire(mb->head(), w->mutable_head());
    w->set_offset(payloads->size());
    w->set_size(mb->size());
    payloads->emplace_back(static_cast<const char*>(mb->data()), mb->size());
  }
}

void HostInstance::Lost(const Status& s, uint64_t trans) const {
  // The graph cannot go on without this instance: fail it, naming the
  // host, the node and the transaction.
  if (link_->on_lost) {
    link_->on_lost(Status::DeviceLost(What() + ": transaction " +
                                      std::to_string(trans) + ": " +
                                      s.message()));
  }
}

int32_t HostInstance::Proc(
    const rt::ScopedDevice&, size_t index,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
    uint64_t trans) {
  v1::HostMessage m;
  std::vector<std::string> payloads;
  AddProc(index, inputs, trans, m.mutable_proc(), &payloads);
  phase_ = 2;
  std::string reply;
  std::vector<std::string> out;
  Status s = Send(m.SerializeAsString(), std::move(payloads), -1, &reply, &out);
  phase_ = 0;
  if (!s.ok()) {
    Lost(s, trans);
    return FLOW_FUNC_FAILED;
  }
  return Deliver(reply, out);
}

// Note [Batched calls to a host]
// A call to another host costs a round trip, and the executor calls one
// instance at a time: one message per round trip would bound a node on
// another host to a few thousand messages a second whatever its work.
// The executor hands the input sets waiting for it, up to BatchLimit, to
// ProcBatch, which sends them as one Batch of Procs in one Call; the
// daemon runs them in order on the instance's thread and answers one
// ProcDone each, delivered here in order, each inside its scope, as the
// same calls one by one would be. A failed Call fails every call of the
// batch (the graph fails with it).
void HostInstance::ProcBatch(const rt::ScopedDevice& bound, size_t index,
                             std::vector<flow_func::ProcCall>* calls,
                             const flow_func::DeliverScope& scope) {
  if (calls->size() == 1) {
    flow_func::ProcCall& c = (*calls)[0];
    scope(0, [&] { c.rc = Proc(bound, index, *c.inputs, c.trans); });
    return;
  }
  v1::HostMessage m;
  std::vector<std::string> payloads;
  for (flow_func::ProcCall& c : *calls) {
    AddProc(index, *c.inputs, c.trans,
            m.mutable_batch()->add_msgs()->mutable_proc(), &payloads);
  }
  phase_ = 2;
  net::InstanceCall call;
  call.session = link_->session;
  call.instance = id_;
  call.request = m.SerializeAsString();
  call.payloads = std::move(payloads);
  net::InstanceReply r;
  Status s = link_->client->Call(&call, &r, -1);
  phase_ = 0;
  if (s.ok() && r.replies.size() != calls->size()) {
    s = Status::Internal("the daemon answered " +
                         std::to_string(r.replies.size()) + " of a batch of " +
                         std::to_string(calls->size()) + " calls");
  }
  for (size_t i = 0; i < calls->size(); ++i) {
    flow_func::ProcCall& c = (*calls)[i];
    scope(i, [&] {
      if (!s.ok()) {
        if (i == 0) Lost(s, c.trans);
        c.rc = FLOW_FUNC_FAILED;
        return;
      }
      c.rc = Deliver(r.replies[i], r.payloads);
    });
  }
}

int32_t HostInstance::Deliver(const std::string& reply,
                              const std::vector<std::string>& payloads) {
  v1::WorkerMessage m;
  if (!m.ParseFromString(reply) || !m.has_proc_done()) {
    if (link_->on_lost) {
      link_->on_lost(
          Status::Internal(What() + ": the daemon's reply is no ProcDone"));
    }
    return FLOW_FUNC_FAILED;
  }
  const v1::ProcDone& done = m.proc_done();
  if (spec_.env.raise) {
    for (const v1::Raised& r : done.raised()) {
      spec_.env.raise(r.code(), r.user_context_id());
    }
  }
  for (int i = 0; i < done.outputs_size(); ++i) {
    const v1::Msg& w = done.outputs(i);
    Status s;
    services::MbufHead head;
    if (w.offset() >= payloads.size() ||
        payloads[w.offset()].size() != w.size() ||
        i >= done.output_index_size()) {
      s = Status::Internal("an output whose data part is missing");
    }
    if (s.ok()) s = worker::HeadFromWire(w.head(), &head);
    if (s.ok()) s = flow_func::CheckHeadFits(head, w.size());
    std::shared_ptr<flow_func::MbufFlowMsg> msg;
    if (s.ok()) {
      const std::string& data = payloads[w.offset()];
      s = spec_.env.allocator->FromHost(head, data.data(), data.size(), &msg);
    }
    if (!s.ok()) {
      if (link_->on_lost) link_->on_lost(s.WithContext(What() + ": "));
      return FLOW_FUNC_FAILED;
    }
    const int32_t rc = spec_.env.output(done.output_index(i), std::move(msg));
    if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
  }
  return done.rc();
}

int32_t HostInstance::ProcQueues(
    const rt::ScopedDevice&, size_t,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>&) {
  return FLOW_FUNC_FAILED;  // refused at deploy (deployment_hosts.cc)
}

Status HostInstance::ResetState(const rt::ScopedDevice&, bool* recreated) {
  v1::HostMessage m;
  m.mutable_reset();
  phase_ = 3;
  std::string reply;
  std::vector<std::string> payloads;
  Status s =
      Send(m.SerializeAsString(), {}, spec_.init_timeout_ms, &reply, &payloads);
  phase_ = 0;
  HFLOW_RETURN_IF_ERROR(s.WithContext(What() + ": "));
  v1::WorkerMessage w;
  if (w.ParseFromString(reply) && w.has_done()) {
    *recreated = w.done().recreated();
  }
  return Done(reply).WithContext(What() + ": ");
}

bool HostInstance::InCall(std::string* what) const {
  const int p = phase_.load();
  if (p == 0) return false;
  if (what != nullptr) {
    *what = What() + (p == 1   ? ": in Init"
                      : p == 2 ? ": in Proc"
                               : ": in reset");
  }
  return true;
}

}  // namespace hflow::hosts
