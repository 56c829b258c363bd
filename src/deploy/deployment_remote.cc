// Deployment's worker-process placement: which instances run in an
// hflow-worker (Note [heavy_load]), how such an instance is made
// (worker::RemoteInstance, whose death fails the deployment), and the
// watch through which device losses and worker deaths reach it.
//
// Thread-safety: Isolated and CreateRemote run on deploy pool tasks, one
// per instance, concurrently; SeatFor and Watch may be called from any of
// them (seats_mu_, watch_mu_).
#include "deploy/deployer.h"
#include "worker/remote_instance.h"
#include "worker/shared_worker.h"

namespace hflow {
namespace deploy {

// Note [heavy_load]
// GE runs UDF instances in executor processes its deployer starts per
// device, and its compile-config field "heavy_load" asks for host CPU
// resources (the UDF runs on the host, its queues proxied to the NPU).
// hflow's devices are simulated on the host, so where the UDF runs is
// always the host; what it keeps of the field is isolation: an instance of
// a heavy_load node runs in an hflow-worker process of its own, so that
// nothing else shares its fate or its CPU. Options::udf_isolation puts
// every node whose functions come from a UDF library in a worker too, one
// per device shared by that device's isolated instances (each on a thread
// of its own there), as GE's executors are: fewer processes and segments,
// and a message between two of them never leaves the segment. Python UDFs
// count as library UDFs when the package left a recipe for them
// (flow_func::RemoteRecipe): they run in a Python worker, a seat of its
// own kind per device (SeatFor's launcher). Built-ins
// stay in the host: they are hflow's own code, and the batchers emit
// outside Proc (their timers), which a worker does not deliver yet.
bool Deployment::Isolated(const DeployedInstance& inst, bool* own) const {
  bool heavy = false;
  bool library = !inst.funcs.empty();
  for (const auto& f : inst.funcs) {
    heavy = heavy || f.heavy_load;
    // A worker runs no stream function yet: udf_isolation leaves such a
    // node in the host (heavy_load, asked for by name, is refused).
    library = library && !f.stream_input;
    // A Python UDF's recipe counts (its error, if any, is said at
    // CreateRemote).
    const bool recipe = !f.remote.launcher.empty() || !f.remote.error.empty();
    library = library && (!f.library.empty() || recipe);
  }
  if (own != nullptr) *own = heavy;
  return heavy || (opts_.isolate_udfs && library);
}

Status Deployment::CreateRemote(const DeployedInstance& inst, bool own,
                                std::unique_ptr<flow_func::Instance>* out) {
  const NodeDef* n = plan_.graph.FindNode(inst.plan.node);
  if (n != nullptr && !n->invoked.empty()) {
    return Status::NotSupported(
        n->invoked[0].what +
        ": a UDF in a worker process cannot invoke models yet "
        "(RunFlowModel); run the node in the host (no heavy_load, "
        "udf_isolation off)");
  }
  std::vector<std::string> launcher;
  for (const auto& f : inst.funcs) {
    if (!f.library.empty()) continue;
    if (!f.remote.error.empty()) {
      return Status::InvalidArgument(
          "function '" + f.name + "' cannot run in a worker process: " +
          f.remote.error + "; make it picklable, or turn udf_isolation off");
    }
    if (f.remote.launcher.empty()) {
      return Status::InvalidArgument(
          "function '" + f.name +
          "' is registered by the host program, not by a UDF library, so "
          "a worker process cannot load it; build it as a UDF library "
          "(compile config), or drop heavy_load");
    }
    launcher = f.remote.launcher;
  }
  for (const auto& f : inst.funcs) {
    if (!launcher.empty() && f.remote.launcher != launcher) {
      return Status::InvalidArgument(
          "function '" + f.name +
          "' runs in another kind of worker than the node's other functions "
          "(a C++ library's and a Python UDF's in one node)");
    }
  }
  std::shared_ptr<worker::SharedWorker> seat;
  HFLOW_RETURN_IF_ERROR(SeatFor(inst.plan.device, own, launcher, &seat));
  std::unique_ptr<worker::RemoteInstance> remote;
  HFLOW_RETURN_IF_ERROR(worker::RemoteInstance::Create(
      inst.funcs, MakeEnv(inst), std::move(seat), &remote));
  *out = std::move(remote);
  return Status::OK();
}

Status Deployment::SeatFor(int32_t device, bool own,
                           const std::vector<std::string>& launcher,
                           std::shared_ptr<worker::SharedWorker>* out) {
  std::unique_lock<std::mutex> lock(seats_mu_, std::defer_lock);
  const auto key = std::make_pair(device, launcher);
  if (!own) {
    lock.lock();
    if ((*out = seats_[key].lock())) return Status::OK();
  }
  worker::RemoteConfig cfg = opts_.worker;
  cfg.launcher = launcher;
  if (cfg.binary.empty() && launcher.empty()) {
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
  HFLOW_RETURN_IF_ERROR(
      worker::SharedWorker::Create(std::move(cfg), device, out));
  if (!own) seats_[key] = *out;
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
