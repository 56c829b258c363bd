// Deployment::Reset: brings a deployed graph back to its state right after
// Deploy without undeploying it. Every UDF instance is reset on the deploy
// pool with its device bound (UdfInstance::ResetState: ResetFlowFuncState,
// or a new object and Init), then the queues are opened again, empty, the
// memory groups' waits resumed and a failure forgotten.
//
// Thread-safety: the exec layer must have stopped every thread that runs
// the graph's UDFs or touches its queues (GraphRunner::Stop) and the
// session must keep feeds and fetches out for the whole call.
#include "deploy/deployer.h"

namespace hflow {
namespace deploy {

// Note [Resetting a graph]
// GE brings a deployed model back to its initial state after a fault
// (suspend, clear, recover): every processor drops its cached and queued
// data and every UDF instance gets ResetFlowFuncState, or is recreated.
// hflow does the same on Session::ResetGraph. A lost device is not
// recovered: its instances and queues are gone, so such a graph stays
// failed and must be removed. An instance whose reset (or Init after a
// recreate) does not return within init_timeout_ms abandons the deployment
// as a stuck Init does (Note [Abandoning a stuck deployment]).
Status Deployment::Reset(size_t* recreated) {
  if (recreated != nullptr) *recreated = 0;
  if (abandoned_ || !deployed_) {
    return Status::FailedPrecondition(
        "reset: the graph is not deployed (or was abandoned)");
  }
  const Status failed = failure();
  if (failed.IsDeviceLost()) {
    return Status::FailedPrecondition(
        "reset: " + failed.message() +
        "; a graph that lost a device cannot be reset: remove it and add it "
        "again");
  }
  std::vector<char> made(instances_.size(), 0);
  rt::ThreadPool::DeviceTasks tasks;
  for (size_t i = 0; i < instances_.size(); ++i) {
    DeployedInstance* raw = instances_[i].get();
    char* flag = &made[i];
    tasks.emplace_back(
        raw->plan.device, [this, raw, flag, i](const rt::ScopedDevice& bound) {
          if (!raw->udf) return Status::OK();
          bool again = false;
          Status s = raw->udf->ResetState(bound, &again);
          *flag = again ? 1 : 0;
          return s.WithContext("reset: " + InstanceName(i) + ": ");
        });
  }
  std::vector<size_t> late;
  Status s =
      pool_->RunAllWithin(std::move(tasks), opts_.init_timeout_ms, &late);
  if (!late.empty()) {
    std::string stuck;
    for (size_t i : late) {
      stuck += (stuck.empty() ? "" : ", ") + InstanceName(i);
    }
    return Abandon(Status::Timeout(
        "reset: " + stuck +
        ": ResetFlowFuncState (or Init after recreating it) did not return "
        "within " +
        std::to_string(opts_.init_timeout_ms) +
        " ms (Options::init_timeout_ms); its thread is left running, never "
        "joined, and the deployment is kept for the rest of the process"));
  }
  if (!s.ok()) {
    Fail(s);  // half reset: it must not run on as if nothing happened
    return s;
  }
  if (recreated != nullptr) {
    for (char m : made) *recreated += m != 0 ? 1 : 0;
  }
  // Under fail_mu_: a device lost meanwhile (Fail on the runtime's
  // listener thread) is either seen here, and the graph stays closed, or
  // comes after the queues are open again and closes them as usual. Fail
  // closes queues only after releasing fail_mu_, so the order is one way.
  std::lock_guard<std::mutex> lock(fail_mu_);
  if (failure_.IsDeviceLost()) {
    return Status::FailedPrecondition(
        "reset: " + failure_.message() +
        "; a graph that lost a device cannot be reset: remove it and add it "
        "again");
  }
  failure_ = Status::OK();
  for (const auto& q : queues_) {
    if (q) q->Reopen();
  }
  for (const auto& [d, g] : group_handles_) g->ResumeWaits();
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow
