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
  std::vector<std::shared_ptr<Hosted>> hs;
  for (auto& [key, h] : all) hs.push_back(std::move(h));
  Unload(std::move(hs));
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
  if (m.body_case() == v1::HostMessage::kLoad) return Load(key, m, reply);
  if (m.body_case() == v1::HostMessage::kBatch && m.batch().msgs_size() > 0 &&
      m.batch().msgs(0).has_load()) {
    for (const v1::HostMessage& one : m.batch().msgs()) {
      if (!one.has_load()) {
        return Status::InvalidArgument(
            "hflowd: a Batch mixes Loads with other requests");
      }
    }
    return LoadBatch(call->session, m.batch(), reply);
  }
  if (m.body_case() == v1::HostMessage::kStop) {
    // The driver's deployment ends as a whole: everything of the session
    // unloads before the answer.
    EndSession(call->session);
    v1::WorkerMessage out;
    out.set_id(m.id());
    *out.mutable_done() = ToDone(Status::OK());
    Reply(out, reply);
    return Status::OK();
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
      std::vector<const v1::Proc*> procs = {&m.proc()};
      std::vector<v1::WorkerMessage> outs(1);
      HFLOW_RETURN_IF_ERROR(Procs(h.get(), procs, call, reply, &outs));
      outs[0].set_id(m.id());
      out = std::move(outs[0]);
      break;
    }
    case v1::HostMessage::kBatch: {
      // A driver's batched calls (its executor's ProcBatch): Procs only,
      // run in order on one hand-over to the instance's thread.
      std::lock_guard<std::mutex> l(h->call_mu);
      std::vector<const v1::Proc*> procs;
      for (const v1::HostMessage& one : m.batch().msgs()) {
        if (!one.has_proc()) {
          return Status::InvalidArgument(h->What() +
                                         ": a Batch holds only Procs here");
        }
        procs.push_back(&one.proc());
      }
      std::vector<v1::WorkerMessage> outs(procs.size());
      HFLOW_RETURN_IF_ERROR(Procs(h.get(), procs, call, reply, &outs));
      for (int i = 0; i < m.batch().msgs_size(); ++i) {
        outs[i].set_id(m.batch().msgs(i).id());
        reply->replies.push_back(outs[i].SerializeAsString());
      }
      return Status::OK();
    }
    case v1::HostMessage::kReset: {
      std::lock_guard<std::mutex> l(h->call_mu);
      if (h->thread == nullptr) {
        return Status::NotFound(h->What() + ": unloaded");
      }
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
      Unload({std::move(h)});
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

void InstanceHost::LoadEnded(const std::string& session) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = loading_.find(session);
  if (it != loading_.end() && --it->second == 0) loading_.erase(it);
  loads_done_.notify_all();
}

// Note [A session's end waits for its loads]
// A Stop answers once nothing of the session is left, and a driver that
// rolls a failed build back (its batch of loads timed out, say) may build
// again on the same devices at once. Loads of the session still running
// when it ends are not in the table yet: marking the session ended makes
// each of them unload itself when its Init returns (EndLoad), and
// EndSession waits until every one has (loading_ counts them), so the
// answer comes after their destructors too. A load stuck in user code
// holds the Stop as long as it is stuck; the driver's stop_timeout_ms
// bounds its wait.
void InstanceHost::EndSession(const std::string& session) {
  std::vector<std::shared_ptr<Hosted>> ended;
  {
    std::lock_guard<std::mutex> l(mu_);
    // A Load of the session still in progress must not outlive it.
    if (ended_.insert(session).second) ended_order_.push_back(session);
    if (ended_order_.size() > kEndedKept) {
      ended_.erase(ended_order_.front());
      ended_order_.pop_front();
    }
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
  for (auto& h : ended) {
    log_("unloading node '" + h->node + "' (instance " +
         std::to_string(h->key.second) + " of session " + session + ")");
  }
  Unload(std::move(ended));
  std::unique_lock<std::mutex> l(mu_);
  loads_done_.wait(l, [&] { return loading_.count(session) == 0; });
}
// Note [Unloading side by side]
// A session's end unloads all its instances on this daemon, and the
// driver's undeploy waits for it: one destructor after the other would
// make undeploy as slow as the sum of them. Each instance's destructor is
// handed to its own thread as its last task (after any call in progress,
// which holds call_mu), all of them first, and only then are the threads
// joined, so they run side by side, each bound to its device. A call that
// comes later finds the instance unloaded (thread == nullptr).
void InstanceHost::Unload(std::vector<std::shared_ptr<Hosted>> hs) {
  std::vector<std::unique_ptr<InstanceThread>> ending;
  for (auto& h : hs) {
    std::lock_guard<std::mutex> l(h->call_mu);
    if (h->thread == nullptr) continue;
    h->thread->Finish([h](const rt::ScopedDevice&) {
      h->udf.reset();
      return Status::OK();
    });
    ending.push_back(std::move(h->thread));
  }
  ending.clear();  // joins each after its destructor ran
}

}  // namespace hflow::daemon
