// RemoteInstance's restart of a dead worker (remote_instance.h):
// Note [Restarting a worker], the restart itself and the report of a
// death. The rest of the instance is in remote_instance.cc.
//
// Thread-safety: Restart runs on the thread calling the instance, under
// restart_mu_; Died on the dead worker's supervisor thread.
#include <unistd.h>

#include "worker/remote_instance.h"

namespace hflow {
namespace worker {

// Note [Restarting a worker]
// GE answers a recoverable fault by redeploying: fetches return
// FLOW_FUNC_STATUS_REDEPLOYING meanwhile and the model's UDFs are reset
// (ResetFlowFuncState). hflow restarts only the instance whose worker
// died, so less is lost:
//   - lost: the transaction in flight in the dead worker (the call
//     returns FLOW_FUNC_STATUS_REDEPLOYING, which travels to its fetch as
//     the transaction's ret_code with the node's name, like any failed
//     Proc), and whatever the UDF kept between calls (the new worker has
//     a new object, Init'ed, as ResetGraph makes for a UDF without
//     ResetFlowFuncState);
//   - kept: messages queued in front of the instance (host queues),
//     outputs the dead worker had delivered (their segment stays mapped in
//     the host while any of them lives), every other instance's state.
// The restart happens at the instance's next call, on the executor thread
// that makes it, with the device bound: the supervisor thread that sees
// the death is bound to nothing and must not block on a spawn. Restarts
// are counted per instance (a crash loop ends): with none left the death
// fails the graph as without the policy; a restarted worker whose Init
// fails fails it too. ResetState gives the restarts back.
Status RemoteInstance::Restart(const rt::ScopedDevice& bound, bool spend) {
  std::lock_guard<std::mutex> l(restart_mu_);
  std::shared_ptr<const Process> dead = Current();
  if (dead->worker->alive()) return Status::OK();
  if (spend) {  // here: of two calls finding it dead, one restarts it
    restarts_left_.fetch_sub(1);
    restarts_.fetch_add(1);
  }
  Retire(*dead);
  {
    std::lock_guard<std::mutex> lent(lent_mu_);
    lent_.clear();  // the dead worker reads none of them any more
  }
  HFLOW_RETURN_IF_ERROR(Launch());
  Status loaded = Load(bound);
  // A worker whose Init failed must not serve on (a later reset would run
  // ResetFlowFuncState on an object that never initialised): the next
  // reset starts another.
  if (!loaded.ok()) Current()->worker->Kill();
  return loaded;
}

void RemoteInstance::Died(const Status& death) {
  const int32_t left = restarts_left_.load();
  if (left > 0) {
    const std::string line =
        "hflow: " + death.message() +
        "; it is started again at its next call (" + std::to_string(left) +
        " restart(s) left, Options::max_worker_restarts)\n";
    (void)!write(STDERR_FILENO, line.data(), line.size());
    return;
  }
  const int32_t used = restarts_.load();
  if (config_.on_death) {
    config_.on_death(
        used == 0 ? death
                  : Status(death.code(),
                           death.message() + " (after " + std::to_string(used) +
                               " restart(s): Options::max_worker_restarts)"));
  }
}

}  // namespace worker
}  // namespace hflow
