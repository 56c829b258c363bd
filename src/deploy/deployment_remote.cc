// Deployment's worker-process placement: which instances run in an
// hflow-worker (Note [heavy_load]), how such an instance is made
// (worker::RemoteInstance, whose death fails the deployment), and the
// watch through which device losses and worker deaths reach it.
//
// Thread-safety: Isolated and CreateRemote run on deploy pool tasks, one
// per instance, concurrently; Watch may be called from any of them.
#include "deploy/deployer.h"
#include "worker/remote_instance.h"

namespace hflow {
namespace deploy {

// Note [heavy_load]
// GE runs every UDF instance in an executor process of its own, and its
// compile-config field "heavy_load" asks for host CPU resources (the UDF
// runs on the host, its queues proxied to the NPU). hflow's devices are
// simulated on the host, so where the UDF runs is always the host; what
// it keeps of the field is the isolation GE's UDFs always have: an
// instance of a heavy_load node runs in an hflow-worker process of its
// own, as GE's executor would. Options::udf_isolation does the same for
// every node whose functions come from a UDF library. Built-ins stay in
// the host: they are hflow's own code, and the batchers emit outside Proc
// (their timers), which a worker does not deliver yet.
bool Deployment::Isolated(const DeployedInstance& inst) const {
  bool heavy = false;
  bool library = !inst.funcs.empty();
  for (const auto& f : inst.funcs) {
    heavy = heavy || f.heavy_load;
    library = library && !f.library.empty();
  }
  return heavy || (opts_.isolate_udfs && library);
}

Status Deployment::CreateRemote(const DeployedInstance& inst,
                                std::unique_ptr<flow_func::Instance>* out) {
  for (const auto& f : inst.funcs) {
    if (f.library.empty()) {
      return Status::InvalidArgument(
          "function '" + f.name +
          "' is registered by the host program, not by a UDF library, so "
          "a worker process cannot load it; build it as a UDF library "
          "(compile config), or drop heavy_load");
    }
  }
  worker::RemoteConfig cfg = opts_.worker;
  if (cfg.binary.empty()) {
    HFLOW_RETURN_IF_ERROR(worker::FindWorkerBinary(&cfg.binary));
  }
  cfg.init_timeout_ms = opts_.init_timeout_ms;
  cfg.stop_timeout_ms = opts_.stop_timeout_ms;
  cfg.alloc_timeout_ms = opts_.alloc_timeout_ms;
  cfg.max_message_bytes = plan_.options.max_alloc_bytes;
  cfg.contexts = svc_->shared_contexts();
  std::shared_ptr<LossWatch> watch = Watch();
  cfg.on_death = [watch](const Status& death) {
    std::lock_guard<std::mutex> lock(watch->mu);
    if (watch->owner != nullptr) watch->owner->Fail(death);
  };
  std::unique_ptr<worker::RemoteInstance> remote;
  HFLOW_RETURN_IF_ERROR(worker::RemoteInstance::Create(
      inst.funcs, MakeEnv(inst), std::move(cfg), &remote));
  *out = std::move(remote);
  return Status::OK();
}

std::shared_ptr<Deployment::LossWatch> Deployment::Watch() {
  std::lock_guard<std::mutex> lock(watch_mu_);
  if (!watch_) {
    watch_ = std::make_shared<LossWatch>();
    watch_->owner = this;
  }
  return watch_;
}

}  // namespace deploy
}  // namespace hflow
