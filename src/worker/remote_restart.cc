// RemoteInstance's side of a worker's restart (remote_instance.h):
// Note [Restarting a worker], the recovery at an instance's next call and
// ResetState. The seat's new life itself is SharedWorker::Revive.
//
// Thread-safety: Recover and ResetState run on the thread calling the
// instance; the seat serializes the restarts of its members.
#include "flow_func/flow_func_defines.h"
#include "util/crash_report.h"
#include "worker/remote_instance.h"

namespace hflow {
namespace worker {

// Note [Restarting a worker]
// GE answers a recoverable fault by redeploying: fetches return
// FLOW_FUNC_STATUS_REDEPLOYING meanwhile and the model's UDFs are reset
// (ResetFlowFuncState). hflow restarts only the worker that died, so less
// is lost:
//   - lost: the transactions in flight in the dead worker, one per member
//     that was in Proc (each such call returns FLOW_FUNC_STATUS_REDEPLOYING,
//     which travels to its fetch as the transaction's ret_code with the
//     node's name, like any failed Proc), and whatever its members' UDFs
//     kept between calls (each member Inits a new object in the new
//     worker, as ResetGraph makes for a UDF without ResetFlowFuncState);
//   - kept: messages queued in front of the instances (host queues),
//     outputs the dead worker had delivered (their segment stays mapped in
//     the host while any of them lives), the state of every instance in
//     other workers (other devices, heavy_load nodes).
// The restart happens at a member's next call, on the executor thread that
// makes it, with the device bound: the supervisor thread that sees the
// death is bound to nothing and must not block on a spawn. The restart is
// counted as the death is reported, once per death and per seat, against
// max_restarts (a crash loop ends), and marked on the dead life, so every
// member reads the same answer; the first member to call starts the new
// worker, and each loads itself into it at its own next call. With no restart
// left the death fails the graph as without the policy; a member whose Init
// fails in the new worker fails it too. ResetState gives the seat its restarts
// back.
int32_t RemoteInstance::Recover(const rt::ScopedDevice& bound, uint64_t trans,
                                std::shared_ptr<const Life>* life) {
  const auto fail = [&](const Status& s) {
    seat_->NoMoreRestarts();  // a worker that cannot start: no loop
    if (config().on_death) config().on_death(s);
    return FlowFunc::FLOW_FUNC_FAILED;
  };
  trans_.store(trans);
  // In Init from here: a stop that times out while the worker starts
  // ends the new one (SharedWorker::Cancel).
  phase_.store(uint32_t(util::UdfPhase::kInit));
  if (!(*life)->process->alive()) {
    // Dead between calls, or in the last one: without a restart reserved
    // for that death the graph has failed (the seat's report), or a stop
    // ended it.
    if (!(*life)->Restartable()) {
      phase_.store(0);
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    Status s = seat_->Revive(bound, (*life)->number);
    if (!s.ok()) {
      phase_.store(0);
      if (s.code() == StatusCode::kCancelled) return FlowFunc::FLOW_FUNC_FAILED;
      return fail(s.WithContext(What() + ": starting its worker again after a "
                                         "death: "));
    }
    *life = seat_->Current();
    if (!(*life)->process->alive()) {  // the new one died already
      phase_.store(0);
      return (*life)->Restartable() ? FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING
                                    : FlowFunc::FLOW_FUNC_FAILED;
    }
  }
  if (loaded_.load() != (*life)->number) {
    Status s = EnsureLoaded(bound, **life);  // in Init until it returns
    if (!s.ok()) {
      // A stop ended it (not a failure of the graph's).
      if (seat_->cancelled()) return FlowFunc::FLOW_FUNC_FAILED;
      // A worker where an Init failed must not serve on (a later reset
      // would run ResetFlowFuncState on an object that never
      // initialised): the next reset starts another.
      seat_->Discard();
      return fail(s.WithContext(What() + ": its Init in a restarted worker: "));
    }
  }
  phase_.store(0);
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

// Note [A restarted island loads whole]
// An island's later stages get no calls from the host: the first stage
// hands them its outputs in the worker. In a new worker they are not
// loaded until something loads them, and an output linked to a slot with
// nothing loaded goes back to the host, to that stage's queue, whose
// call then loads it; the next message, chained again, could overtake
// that one. So the first stage, loading itself into a new worker, loads
// every instance its links reach right after it, before its first call
// there, on its own thread (bound to the island's one device); an
// instance that its own caller is loading meanwhile waits for that Load
// (load_mu_) and finds itself loaded.
Status RemoteInstance::EnsureLoaded(const rt::ScopedDevice& bound,
                                    const Life& life, bool own) {
  {
    std::lock_guard<std::mutex> l(load_mu_);
    // Lives only grow; one newer than `life` is its own caller's to load.
    if (loaded_.load() < life.number &&
        seat_->Current()->number == life.number) {
      HFLOW_RETURN_IF_ERROR(Load(bound, life, own));
    }
  }
  for (const Link& k : links_) {
    HFLOW_RETURN_IF_ERROR(k.to->EnsureLoaded(bound, life, false)
                              .WithContext("loading " + k.to->Name() +
                                           ", which it feeds in the worker: "));
  }
  return Status::OK();
}

// A dead worker (the graph failed with it, or it died with restarts left)
// is started again, and an instance not loaded into the current worker is
// loaded: a new object, Init'ed, as GE recreates an instance whose reset it
// cannot do.
Status RemoteInstance::ResetState(const rt::ScopedDevice& bound,
                                  bool* recreated) {
  HFLOW_RETURN_IF_ERROR(bound.Require(env_.device));
  seat_->GiveBackRestarts();
  std::shared_ptr<const Life> p = seat_->Current();
  if (!p->process->alive() || loaded_.load() != p->number) {
    if (recreated != nullptr) *recreated = true;
    if (!p->process->alive()) {
      HFLOW_RETURN_IF_ERROR(
          seat_->Revive(bound, p->number)
              .WithContext(What() + ": starting its dead worker again: "));
      p = seat_->Current();
    }
    return Load(bound, *p).WithContext(What() + ": its Init in a new worker: ");
  }
  v1::HostMessage req = Request();
  req.mutable_reset();
  phase_.store(uint32_t(util::UdfPhase::kReset));
  v1::WorkerMessage reply;
  Status s = p->process->Call(&req, &reply, config().stop_timeout_ms,
                              "ResetFlowFuncState");
  phase_.store(0);
  HFLOW_RETURN_IF_ERROR(s);
  if (recreated != nullptr) *recreated = reply.done().recreated();
  if (reply.done().code() == 0) return Status::OK();
  return Status(static_cast<StatusCode>(reply.done().code()),
                reply.done().message());
}

}  // namespace worker
}  // namespace hflow
