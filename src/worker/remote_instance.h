// RemoteInstance: a UDF instance whose code runs in an hflow-worker
// process (flow_func::Instance; docs/architecture.md, "Worker processes").
// The host keeps everything else: queues, routing, pairing, errors. Init
// sends the instance's description (Load) and waits for the worker's Init;
// Proc puts the inputs in the worker's shared segment (no copy when a
// message already lies there: an earlier output of this worker), sends
// their offsets, and hands each output the worker reports to the host's
// output function as a message over the segment (no copy), whose last
// release tells the worker to free it.
//
// A worker that dies fails the call in flight and is described by a
// status naming the node, replica, device, the signal or exit code, and
// the call (Init, or Proc of transaction t). With restarts left
// (RemoteConfig::max_restarts) the death is said on stderr, the call in
// flight returns FLOW_FUNC_STATUS_REDEPLOYING (its transaction is lost,
// and its fetch says so), and the next call starts a new worker and
// Inits a new object in it (Note [Restarting a worker]). Without, it
// tells `on_death` once, so the graph can fail with it, and the call in
// flight returns FLOW_FUNC_FAILED. ResetState starts a dead worker again
// either way (Session::ResetGraph recovers such a graph) and gives the
// instance its restarts back.
//
// Thread-safety: as flow_func::Instance. Cancel may be called from any
// thread. The worker in use (`proc_`) is replaced only by a restart, on
// the thread that calls the instance, under restart_mu_; calls take a
// snapshot of it.
#ifndef HFLOW_WORKER_REMOTE_INSTANCE_H_
#define HFLOW_WORKER_REMOTE_INSTANCE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flow_func/instance.h"
#include "flow_func/udf_context.h"
#include "worker/remote_config.h"
#include "worker/segment.h"
#include "worker/worker_process.h"

namespace hflow {
namespace worker {

class RemoteInstance final : public flow_func::Instance {
 public:
  // Starts the worker (Init loads the instance into it).
  static Status Create(std::vector<flow_func::FuncDesc> funcs,
                       flow_func::InstanceEnv env, RemoteConfig config,
                       std::unique_ptr<RemoteInstance>* out);
  ~RemoteInstance() override;  // stops the worker (user destructors run)

  Status Init(const rt::ScopedDevice& bound) override;
  int32_t Proc(const rt::ScopedDevice& bound, size_t index,
               const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
               uint64_t trans = 0) override;
  int32_t ProcQueues(const rt::ScopedDevice& bound, size_t index,
                     const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>&
                         queues) override;
  Status ResetState(const rt::ScopedDevice& bound, bool* recreated) override;
  bool InCall(std::string* what) const override;
  const std::vector<flow_func::FuncDesc>& funcs() const override {
    return funcs_;
  }
  void Cancel() override;

  pid_t pid() const;
  // Workers started again after a death (not counting the first).
  int32_t restarts() const { return restarts_.load(); }

 private:
  // One worker and the segment it shares with the host.
  struct Process {
    std::shared_ptr<Segment> segment;
    std::shared_ptr<SegmentArena> arena;  // the host's part
    std::shared_ptr<WorkerProcess> worker;
    int counters_id = 0;  // its source in config_.counters
  };

  RemoteInstance() = default;
  std::string What() const;   // "node 'n' (replica r) on device d"
  std::string Doing() const;  // "in Init", "in Proc of transaction t"
  std::shared_ptr<const Process> Current() const;
  // Makes a segment and starts a worker over it (no Load yet).
  Status Launch();
  // The worker's counters join the retired sum (it ended, or is replaced).
  void Retire(const Process& p);
  // A new worker for a dead one, loaded and Init'ed; OK when the worker
  // in use is alive (another call restarted it). `spend`: it counts
  // against max_restarts.
  Status Restart(const rt::ScopedDevice& bound, bool spend);
  Status Load(const rt::ScopedDevice& bound);
  // One Proc; `*delivered`: whether its request reached the worker.
  int32_t ProcOnce(
      const rt::ScopedDevice& bound, size_t index,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
      uint64_t trans, bool* delivered);
  // The supervisor's report of a death it was not asked for.
  void Died(const Status& death);
  Status PutInput(const Process& p, const FlowFunc::FlowMsg& in, v1::Msg* out);
  Status CheckOutputs(const Process& p, const v1::ProcDone& done) const;
  Status TakeOutputs(const Process& p, const v1::ProcDone& done);
  void Released(const v1::ProcDone& done);

  std::vector<flow_func::FuncDesc> funcs_;
  flow_func::InstanceEnv env_;
  RemoteConfig config_;
  uint64_t host_bytes_ = 0;  // [0, host_bytes_) of a segment: inputs
  mutable std::mutex proc_mu_;
  std::shared_ptr<const Process> proc_;  // under proc_mu_
  std::mutex restart_mu_;                // one restart at a time
  std::atomic<int32_t> restarts_left_{0};
  std::atomic<int32_t> restarts_{0};
  // Host blocks the worker in use may still read: offset -> block (one
  // entry per lending; a block also lives while host messages over it
  // do). Cleared when a dead worker is replaced.
  std::multimap<uint64_t, std::shared_ptr<void>> lent_;
  std::mutex lent_mu_;
  // The call in progress (InCall, the death report): util::UdfPhase and
  // its transaction.
  std::atomic<uint32_t> phase_{0};
  std::atomic<uint64_t> trans_{0};
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_REMOTE_INSTANCE_H_
