// hflowd's hosted instances (daemon/instance_host.h).
//
// Thread-safety: hosted_ under mu_, never held over user code; each
// instance's calls under its call_mu, its per-call fields touched only
// there (and by the UDF's SetOutput on the calling thread).
#include "daemon/instance_host.h"

#include "daemon/hosted_instance.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "hflow/cluster.h"
#include "worker/wire.h"

namespace hflow::daemon {

namespace v1 = worker::v1;

InstanceHost::InstanceHost(std::shared_ptr<rt::DeviceRuntime> runtime,
                           std::vector<int32_t> devices,
                           std::function<void(const std::string&)> log)
    : log_(std::move(log)),
      devices_(std::move(devices)),
      contexts_(std::move(runtime)) {}

InstanceHost::~InstanceHost() {
  std::map<Key, std::shared_ptr<Hosted>> all;
  {
    std::lock_guard<std::mutex> l(mu_);
    all.swap(hosted_);
  }
  for (auto& [key, h] : all) Unload(h);
}

size_t InstanceHost::Loaded() const {
  std::lock_guard<std::mutex> l(mu_);
  return hosted_.size();
}

std::string InstanceHost::Devices() const { return FormatDeviceList(devices_); }

std::shared_ptr<InstanceHost::Hosted> InstanceHost::Find(const Key& k) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = hosted_.find(k);
  return it == hosted_.end() ? nullptr : it->second;
}

Status InstanceHost::Call(net::InstanceCall* call, net::InstanceReply* reply) {
  v1::HostMessage m;
  if (!m.ParseFromString(call->request)) {
    return Status::InvalidArgument(
        "hflowd: a Call whose request is no worker message (truncated or "
        "of another release); run the same hflow release on every host");
  }
  const Key key(call->session, call->instance);
  if (m.body_case() == v1::HostMessage::kLoad) {
    return Load(key, call->request, reply);
  }
  std::shared_ptr<Hosted> h = Find(key);
  if (h == nullptr) {
    return Status::NotFound("hflowd: instance " + std::to_string(key.second) +
                            " of session " + key.first +
                            " is not loaded here (unloaded, or the daemon "
                            "restarted); deploy the graph again");
  }
  v1::WorkerMessage out;
  out.set_id(m.id());
  switch (m.body_case()) {
    case v1::HostMessage::kProc: {
      std::lock_guard<std::mutex> l(h->call_mu);
      const v1::Proc& p = m.proc();
      if (p.func() >= h->udf->funcs().size()) {
        return Status::InvalidArgument(h->What() + ": Proc of function " +
                                       std::to_string(p.func()) +
                                       ", which it does not have");
      }
      std::vector<std::shared_ptr<FlowFunc::FlowMsg>> inputs;
      for (const v1::Msg& w : p.inputs()) {
        if (w.offset() >= call->payloads.size() ||
            call->payloads[w.offset()].size() != w.size()) {
          return Status::InvalidArgument(
              h->What() +
              ": a Proc input whose data part is missing or of "
              "another size than its head says (truncated)");
        }
        services::MbufHead head;
        HFLOW_RETURN_IF_ERROR(worker::HeadFromWire(w.head(), &head)
                                  .WithContext(h->What() + ": "));
        const std::string& data = call->payloads[w.offset()];
        std::shared_ptr<flow_func::MbufFlowMsg> in;
        HFLOW_RETURN_IF_ERROR(
            h->allocator->FromHost(head, data.data(), data.size(), &in)
                .WithContext(h->What() + ": an input: "));
        inputs.push_back(std::move(in));
      }
      h->outputs.clear();
      h->raised.clear();
      h->has_pending = p.has_pending();
      h->pending = p.pending();
      int32_t rc = FlowFunc::FLOW_FUNC_FAILED;
      Status s = h->thread->Run([&](const rt::ScopedDevice& bound) {
        h->caller = std::this_thread::get_id();
        h->in_proc = true;
        rc = h->udf->Proc(bound, p.func(), inputs, p.trans());
        h->in_proc = false;
        return Status::OK();
      });
      HFLOW_RETURN_IF_ERROR(s.WithContext(h->What() + ": "));
      v1::ProcDone* done = out.mutable_proc_done();
      done->set_rc(rc);
      for (auto& r : h->raised) *done->add_raised() = std::move(r);
      for (auto& [index, mb] : h->outputs) {
        done->add_output_index(index);
        v1::Msg* w = done->add_outputs();
        worker::HeadToWire(mb->head(), w->mutable_head());
        w->set_offset(reply->payloads.size());
        w->set_size(mb->size());
        reply->payloads.emplace_back(static_cast<const char*>(mb->data()),
                                     mb->size());
      }
      h->outputs.clear();
      h->raised.clear();
      break;
    }
    case v1::HostMessage::kReset: {
      std::lock_guard<std::mutex> l(h->call_mu);
      bool recreated = false;
      *out.mutable_done() =
          ToDone(h->thread->Run([&](const rt::ScopedDevice& bound) {
            return h->udf->ResetState(bound, &recreated);
          }));
      out.mutable_done()->set_recreated(recreated);
      break;
    }
    case v1::HostMessage::kUnload: {
      {
        std::lock_guard<std::mutex> l(mu_);
        hosted_.erase(key);
      }
      log_("unloading node '" + h->node + "' (instance " +
           std::to_string(key.second) + " of session " + key.first + ")");
      Unload(std::move(h));
      *out.mutable_done() = ToDone(Status::OK());
      break;
    }
    default:
      return Status::InvalidArgument(
          h->What() + ": a Call with a request hflowd does not serve (" +
          std::to_string(m.body_case()) + ")");
  }
  Reply(out, reply);
  return Status::OK();
}

void InstanceHost::EndSession(const std::string& session) {
  std::vector<std::shared_ptr<Hosted>> ended;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = hosted_.begin(); it != hosted_.end();) {
      if (it->first.first == session) {
        ended.push_back(std::move(it->second));
        it = hosted_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (!ended.empty()) {
    log_("unloading " + std::to_string(ended.size()) +
         " instance(s) of ended session " + session);
  }
  for (auto& h : ended) Unload(std::move(h));
}

// The user's destructors run on the instance's thread, bound, after any
// call in progress; then the thread ends.
void InstanceHost::Unload(std::shared_ptr<Hosted> h) {
  std::lock_guard<std::mutex> l(h->call_mu);
  if (h->thread == nullptr) return;
  (void)h->thread->Run([&](const rt::ScopedDevice&) {
    h->udf.reset();
    return Status::OK();
  });
  h->thread.reset();
}

}  // namespace hflow::daemon
