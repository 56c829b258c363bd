// Deployment's instances on other hosts (Note [Instances on other hosts]
// in remote_hosts.cc): the hosts connected before the instances load, and
// each remote instance made through them.
//
// Thread-safety: OpenHosts runs once, before the load; CreateOnHost on
// deploy pool tasks, concurrently (RemoteHosts::Create is thread-safe);
// InitOnHosts once, after them.
#include <unistd.h>

#include <algorithm>

#include "deploy/deployer.h"

namespace hflow {
namespace deploy {

Status Deployment::OpenHosts() {
  RemoteHostsOptions o;
  for (const InstancePlan& p : plan_.instances) {
    if (!p.Remote()) continue;
    auto& devs = o.devices[p.host];
    if (std::find(devs.begin(), devs.end(), p.host_device) == devs.end()) {
      devs.push_back(p.host_device);
    }
  }
  if (o.devices.empty()) return Status::OK();
  o.cluster = plan_.cluster;
  o.stop_timeout_ms = opts_.stop_timeout_ms;
  char host[256] = {0};
  (void)gethostname(host, sizeof host - 1);
  o.session = std::string(host) + ":" + std::to_string(getpid()) + ":" +
              std::to_string(id_);
  std::shared_ptr<LossWatch> watch = Watch();
  o.on_lost = [watch](const Status& lost) {
    std::lock_guard<std::mutex> lock(watch->mu);
    if (watch->owner != nullptr) watch->owner->Fail(lost);
  };
  return OpenRemoteHosts(o, &hosts_).WithContext("deploy: ");
}

Status Deployment::CreateOnHost(const DeployedInstance& inst,
                                std::unique_ptr<flow_func::Instance>* out) {
  const NodeDef* n = plan_.graph.FindNode(inst.plan.node);
  const std::string on = "cluster node " + std::to_string(inst.plan.host);
  if (n != nullptr && !n->invoked.empty()) {
    return Status::NotSupported(n->invoked[0].what +
                                ": a UDF on another host (" + on +
                                ") cannot invoke models yet (RunFlowModel); "
                                "place the node on this host");
  }
  for (const auto& f : inst.funcs) {
    if (f.library.empty() || f.stream_input) {
      return Status::NotSupported(
          "function '" + f.name + "' is placed on " + on + ", but " +
          (f.stream_input ? "a stream function (stream_input)"
                          : "only functions of a UDF library (not hflow's "
                            "built-ins or Python UDFs)") +
          " can run on another host yet; place the node on this host");
    }
  }
  // The instance reads its inputs' data as host memory to send them.
  if (!svc_->runtime()->HostAccessible(inst.plan.device)) {
    return Status::NotSupported(
        "node '" + inst.plan.node + "' is placed on " + on +
        ", and the messages of this backend's devices are not host memory "
        "the call can carry yet; run the driver on simulated devices");
  }
  RemoteInstanceSpec spec;
  spec.host = inst.plan.host;
  spec.device = inst.plan.host_device;
  spec.funcs = inst.funcs;
  spec.env = MakeEnv(inst);
  spec.env.device = inst.plan.host_device;
  spec.max_message_bytes = plan_.options.max_alloc_bytes;
  spec.alloc_timeout_ms = opts_.alloc_timeout_ms;
  spec.init_timeout_ms = opts_.init_timeout_ms;
  return hosts_->Create(std::move(spec), out);
}

Status Deployment::RemoteReports(std::vector<DeviceReport>* out) const {
  if (!hosts_) return Status::OK();
  const size_t first = out->size();
  HFLOW_RETURN_IF_ERROR(hosts_->Reports(out).WithContext("device reports: "));
  for (size_t r = first; r < out->size(); ++r) {
    DeviceReport& row = (*out)[r];
    row.submodels = 0;  // the daemon's count is every session's
    for (const InstancePlan& p : plan_.instances) {
      row.submodels +=
          p.Remote() && p.host == row.node && p.host_device == row.id;
    }
  }
  return Status::OK();
}

// The instances on other hosts, made by LoadOne, loaded there: each
// host's at once (RemoteHosts::InitAll).
Status Deployment::InitOnHosts() {
  std::vector<flow_func::Instance*> made;
  for (const auto& inst : instances_) {
    if (inst->plan.Remote() && inst->udf != nullptr) {
      made.push_back(inst->udf.get());
    }
  }
  if (made.empty()) return Status::OK();
  return hosts_->InitAll(made).WithContext("deploy: ");
}

}  // namespace deploy
}  // namespace hflow
