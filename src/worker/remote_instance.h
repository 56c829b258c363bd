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
// A worker that dies fails the call in flight (Proc returns
// FLOW_FUNC_FAILED) and tells `on_death` once, with a status naming the
// node, replica, device, the signal or exit code, and the call (Init, or
// Proc of transaction t), so the graph can fail with it.
//
// Thread-safety: as flow_func::Instance. Cancel may be called from any
// thread.
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

  pid_t pid() const { return worker_ ? worker_->pid() : -1; }

 private:
  RemoteInstance() = default;
  std::string What() const;   // "node 'n' (replica r) on device d"
  std::string Doing() const;  // "in Init", "in Proc of transaction t"
  Status PutInput(const FlowFunc::FlowMsg& in, v1::Msg* out);
  Status CheckOutputs(const v1::ProcDone& done) const;
  Status TakeOutputs(const v1::ProcDone& done);
  void Released(const v1::ProcDone& done);

  std::vector<flow_func::FuncDesc> funcs_;
  flow_func::InstanceEnv env_;
  RemoteConfig config_;
  std::shared_ptr<Segment> segment_;
  std::shared_ptr<SegmentArena> arena_;  // the host's part
  std::shared_ptr<WorkerProcess> worker_;
  // Host blocks the worker may still read: offset -> block (one entry per
  // lending; a block also lives while host messages over it do).
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
