// StreamWorker: runs one stream function (func_list[].stream_input, a queue
// proc) of one deployed instance on a thread of its own. The proc gets the
// function's live input queues (StreamQueue, a FlowMsgQueue over the
// DeviceQueue) and dequeues from them as it likes, with timeouts; the
// thread calls it again each time it returns, for the life of the graph
// (Note [Stream functions] in stream_worker.cc). Its outputs go through the
// Router on this thread, which may wait on a full queue: it is not an
// executor pool thread.
//
// Thread-safety: Start and Join from the runner's thread (Start once, Join
// once); Notify from any thread (queue listeners); the queues are used by
// the worker's thread only, one Dequeue at a time per queue.
#ifndef HFLOW_EXEC_STREAM_WORKER_H_
#define HFLOW_EXEC_STREAM_WORKER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deploy/deployer.h"
#include "flow_func/flow_msg_queue.h"

namespace hflow {
namespace exec {

class StreamWorker {
 public:
  // `inputs`: the node input indexes of function `func` of `inst`, in the
  // function's order. `stopping` is the runner's stop flag; `failures`
  // counts failed calls. All outlive the worker (and its thread, when it
  // is abandoned).
  StreamWorker(deploy::Deployment* deployment, deploy::DeployedInstance* inst,
               size_t func, const std::vector<size_t>& inputs,
               const std::atomic<bool>* stopping,
               std::atomic<uint64_t>* failures);
  ~StreamWorker();
  StreamWorker(const StreamWorker&) = delete;
  StreamWorker& operator=(const StreamWorker&) = delete;

  void Start();
  // An input queue gained a message: a proc that returned without taking
  // anything is called again now rather than after its pause.
  void Notify();
  // Waits until `deadline` (or forever, `forever`) for the thread to end
  // and joins it; false (the thread detached, left running) when it did not
  // end in time. Call after the queues are closed and `stopping` is set.
  bool Join(std::chrono::steady_clock::time_point deadline, bool forever);

  const std::vector<services::DeviceQueue*>& in_queues() const {
    return in_queues_;
  }

 private:
  void Body();
  // Waits at most kIdlePause for Notify (or stop) after a call that took
  // nothing.
  void Pause();
  std::string Where() const;

  deploy::Deployment* const deployment_;
  deploy::DeployedInstance* const inst_;
  const size_t func_;
  const std::atomic<bool>* const stopping_;
  std::atomic<uint64_t>* const failures_;
  std::vector<services::DeviceQueue*> in_queues_;
  std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>> queues_;
  // Successful dequeues over all queues (the busy-loop guard reads it).
  std::atomic<uint64_t> dequeued_{0};

  std::mutex mu_;
  std::condition_variable cv_;
  bool notified_ = false;  // guarded by mu_
  bool finished_ = false;  // guarded by mu_: Body returned
  std::thread thread_;
};

}  // namespace exec
}  // namespace hflow

#endif  // HFLOW_EXEC_STREAM_WORKER_H_
