// InstanceHost::Procs: a driver's Proc calls of one hosted instance, one
// or a batch (daemon/instance_host.h).
//
// Thread-safety: the caller holds the instance's call_mu; the inputs are
// made on the calling (gRPC) thread, the calls run on the instance's own
// thread, in one hand-over for the whole batch.
#include <thread>

#include "daemon/hosted_instance.h"
#include "daemon/instance_host.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "worker/wire.h"

namespace hflow::daemon {

namespace v1 = worker::v1;

namespace {

using Inputs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;

// One Proc's inputs, each checked against the data that came with it
// (its head's word is the driver's) and copied into the instance's
// memory, re-aligned as its head asks.
Status MakeInputs(InstanceHost::Hosted* h, const v1::Proc& p,
                  const net::InstanceCall& call, Inputs* out) {
  if (p.func() >= h->inputs_of.size()) {
    return Status::InvalidArgument(h->What() + ": Proc of function " +
                                   std::to_string(p.func()) +
                                   ", which it does not have");
  }
  // Fewer inputs than the function takes would have its UDF read past
  // them (the driver's executor gives each of its inputs; a node's input
  // map may give one more than once).
  if (size_t(p.inputs_size()) < h->inputs_of[p.func()]) {
    return Status::InvalidArgument(h->What() + ": a Proc with " +
                                   std::to_string(p.inputs_size()) +
                                   " inputs for a function that takes " +
                                   std::to_string(h->inputs_of[p.func()]));
  }
  for (const v1::Msg& w : p.inputs()) {
    if (w.offset() >= call.payloads.size() ||
        call.payloads[w.offset()].size() != w.size()) {
      return Status::InvalidArgument(
          h->What() +
          ": a Proc input whose data part is missing or of another size "
          "than its head says (truncated)");
    }
    services::MbufHead head;
    HFLOW_RETURN_IF_ERROR(
        worker::HeadFromWire(w.head(), &head).WithContext(h->What() + ": "));
    const std::string& data = call.payloads[w.offset()];
    HFLOW_RETURN_IF_ERROR(flow_func::CheckHeadFits(head, data.size())
                              .WithContext(h->What() + ": a Proc input: "));
    std::shared_ptr<flow_func::MbufFlowMsg> in;
    HFLOW_RETURN_IF_ERROR(
        h->allocator->FromHost(head, data.data(), data.size(), &in)
            .WithContext(h->What() + ": an input: "));
    out->push_back(std::move(in));
  }
  return Status::OK();
}

// What one Proc left: its code, raises and outputs.
struct Result {
  int32_t rc = FlowFunc::FLOW_FUNC_FAILED;
  std::vector<v1::Raised> raised;
  std::vector<std::pair<uint32_t, services::MbufPtr>> outputs;
};

}  // namespace

Status InstanceHost::Procs(Hosted* h, const std::vector<const v1::Proc*>& procs,
                           net::InstanceCall* call, net::InstanceReply* reply,
                           std::vector<v1::WorkerMessage>* outs) {
  if (h->thread == nullptr) {  // unloaded while this call waited
    return Status::NotFound(h->What() + ": unloaded");
  }
  std::vector<Inputs> inputs(procs.size());
  for (size_t i = 0; i < procs.size(); ++i) {
    HFLOW_RETURN_IF_ERROR(MakeInputs(h, *procs[i], *call, &inputs[i]));
  }
  std::vector<Result> results(procs.size());
  Status s = h->thread->Run([&](const rt::ScopedDevice& bound) {
    for (size_t i = 0; i < procs.size(); ++i) {
      const v1::Proc& p = *procs[i];
      h->outputs.clear();
      h->raised.clear();
      h->has_pending = p.has_pending();
      h->pending = p.pending();
      h->in_proc = true;
      results[i].rc = h->udf->Proc(bound, p.func(), inputs[i], p.trans());
      h->in_proc = false;
      inputs[i].clear();  // the inputs go as they would after a local Proc
      results[i].raised.swap(h->raised);
      results[i].outputs.swap(h->outputs);
    }
    return Status::OK();
  });
  HFLOW_RETURN_IF_ERROR(s.WithContext(h->What() + ": "));
  for (size_t i = 0; i < procs.size(); ++i) {
    v1::ProcDone* done = (*outs)[i].mutable_proc_done();
    done->set_rc(results[i].rc);
    for (auto& r : results[i].raised) *done->add_raised() = std::move(r);
    for (auto& [index, mb] : results[i].outputs) {
      done->add_output_index(index);
      v1::Msg* w = done->add_outputs();
      worker::HeadToWire(mb->head(), w->mutable_head());
      w->set_offset(reply->payloads.size());
      w->set_size(mb->size());
      reply->payloads.emplace_back(static_cast<const char*>(mb->data()),
                                   mb->size());
    }
  }
  return Status::OK();
}

}  // namespace hflow::daemon
