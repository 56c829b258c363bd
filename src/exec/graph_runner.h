// GraphRunner: runs a deployed graph. One worker thread per (instance,
// function), named after its node and bound to the instance's device when it
// starts; it takes one message per input (aligned by transaction id), calls
// the UDF's Proc, and lets the deployment route the outputs. A failed Proc,
// or an input that already carries a failure, becomes an error message (its
// ret code set, no data) on every output, so the fetcher sees the code and
// nothing is silently lost. Workers block on their queues (no polling) and
// exit when Stop closes them.
//
// Thread-safety: Start/Stop from one thread; workers are internal.
#ifndef HFLOW_EXEC_GRAPH_RUNNER_H_
#define HFLOW_EXEC_GRAPH_RUNNER_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "deploy/deployer.h"

namespace hflow {
namespace exec {

class GraphRunner {
 public:
  explicit GraphRunner(deploy::Deployment* deployment);
  ~GraphRunner();

  void Start();
  // Closes every queue of the deployment (waking workers blocked on input
  // or output) and joins the workers. Call before undeploying.
  void Stop();

  uint64_t procs() const { return procs_.load(); }
  uint64_t failures() const { return failures_.load(); }

 private:
  struct Worker;
  void Run(Worker* w);
  Status Gather(Worker* w, std::vector<services::MbufPtr>* got);
  void EmitError(const deploy::DeployedInstance& inst, int32_t rc,
                 uint64_t trans_id);

  deploy::Deployment* const deployment_;
  std::vector<std::unique_ptr<Worker>> workers_;
  // One Proc at a time per instance (multi-function instances have several
  // workers).
  std::map<const deploy::DeployedInstance*, std::unique_ptr<std::mutex>> locks_;
  std::atomic<uint64_t> procs_{0};
  std::atomic<uint64_t> failures_{0};
  bool started_ = false;
};

}  // namespace exec
}  // namespace hflow

#endif  // HFLOW_EXEC_GRAPH_RUNNER_H_
