// StreamWorker (see stream_worker.h) and StreamQueue, the FlowMsgQueue a
// stream function reads.
// Thread-safety: a StreamQueue serialises its Dequeues with a mutex; the
// worker's wake-up flags are guarded by mu_; counters are atomic.
#include "exec/stream_worker.h"

#include "exec/router.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "util/thread_name.h"

namespace hflow {
namespace exec {

// Note [Stream functions]
// A stream function (GE's "stream input", a proc registered with
// FlowMsgQueue inputs and marked stream_input in func_list) is not called
// per transaction: it gets the function's input queues themselves and
// dequeues from them, usually in a loop that blocks in Dequeue. Such a
// call may last the whole life of the graph, so it cannot run on the
// executor pool, whose threads must never block (Note [Executor design] in
// graph_runner.cc): each (instance, stream function) has a thread of its
// own, bound to the instance's device, that calls the proc again whenever
// it returns (GE reschedules a stream processor at once after each call).
//
// - A call that returns success without having dequeued anything is
//   followed by a pause of at most kIdlePause, cut short when one of its
//   inputs gains a message (GE calls again at once, a busy loop).
// - A call that returns an error fails the graph (Deployment::Fail) with a
//   status naming the node, replica and function, so feeders and fetchers
//   wake with it (GE stops the whole UDF process; nothing reaches the
//   fetcher there).
// - Stop closes the queues: a Dequeue in progress or to come returns
//   FLOW_FUNC_STATUS_EXIT, a delivery waiting on a full queue returns a
//   queue error, and the thread ends when the call returns. A graph that
//   failed closes them with its reason: Dequeue then returns
//   FLOW_FUNC_ERR_QUEUE_ERROR.
// - The proc takes no instance lock: it runs alongside the instance's
//   other functions, as in GE; the UDF guards what they share.
// - Outputs with no transaction id get a per-output counter (1, 2, 3, ...;
//   Router::StreamRun) as in GE, and inherit nothing (no current input).

namespace {

constexpr auto kIdlePause = std::chrono::milliseconds(100);

// One input of a stream function: Dequeue waits on the DeviceQueue itself,
// with the caller's exact timeout.
class StreamQueue final : public FlowFunc::FlowMsgQueue {
 public:
  StreamQueue(services::ExchangeService* svc, services::DeviceQueue* q,
              const std::atomic<bool>* stopping, std::atomic<uint64_t>* count)
      : svc_(svc), q_(q), stopping_(stopping), count_(count) {}

  int32_t Dequeue(std::shared_ptr<FlowFunc::FlowMsg>& out,
                  int32_t timeout) override {
    std::lock_guard<std::mutex> one_at_a_time(mu_);
    services::MbufPtr m;
    // -1 waits forever; another negative timeout ends at once, as a poll
    // (GE waits one 1 s slice, then times out).
    Status s = svc_->Dequeue(*q_, &m, timeout < -1 ? 0 : timeout);
    if (s.IsTimeout()) return FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR;
    if (!s.ok()) {
      return stopping_->load() ? FlowFunc::FLOW_FUNC_STATUS_EXIT
                               : FlowFunc::FLOW_FUNC_ERR_QUEUE_ERROR;
    }
    count_->fetch_add(1, std::memory_order_relaxed);
    const int32_t ret_code = m->head().ret_code;
    auto msg = flow_func::MbufFlowMsg::FromMbuf(std::move(m));
    msg->MarkShared();  // other consumers may hold the same mbuf
    out = std::move(msg);
    // A message carrying a failure is returned with its code (as GE).
    return ret_code != 0 ? ret_code : FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Depth() const override { return static_cast<int32_t>(q_->depth()); }
  int32_t Size() const override { return static_cast<int32_t>(q_->Size()); }

 private:
  services::ExchangeService* const svc_;
  services::DeviceQueue* const q_;
  const std::atomic<bool>* const stopping_;
  std::atomic<uint64_t>* const count_;
  std::mutex mu_;
};

}  // namespace

StreamWorker::StreamWorker(deploy::Deployment* deployment,
                           deploy::DeployedInstance* inst, size_t func,
                           const std::vector<size_t>& inputs,
                           const std::atomic<bool>* stopping,
                           std::atomic<uint64_t>* failures)
    : deployment_(deployment),
      inst_(inst),
      func_(func),
      stopping_(stopping),
      failures_(failures) {
  for (size_t i : inputs) {
    services::DeviceQueue* q = inst->inputs[i].get();
    in_queues_.push_back(q);
    queues_.push_back(std::make_shared<StreamQueue>(deployment->exchange(), q,
                                                    stopping, &dequeued_));
  }
}

StreamWorker::~StreamWorker() {
  if (thread_.joinable()) thread_.join();  // the runner Joins first
}

void StreamWorker::Start() {
  thread_ = std::thread([this] { Body(); });
}

void StreamWorker::Notify() {
  {
    std::lock_guard<std::mutex> l(mu_);
    notified_ = true;
  }
  cv_.notify_all();
}

std::string StreamWorker::Where() const {
  return "node '" + inst_->plan.node + "' replica " +
         std::to_string(inst_->plan.replica) + " on device " +
         std::to_string(inst_->plan.device) + ": stream function '" +
         inst_->funcs[func_].name + "'";
}

void StreamWorker::Pause() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait_for(l, kIdlePause,
               [this] { return notified_ || stopping_->load(); });
}

void StreamWorker::Body() {
  util::SetCurrentThreadName("sf-" + inst_->funcs[func_].name + "#" +
                             std::to_string(inst_->plan.replica));
  {
    rt::ScopedDevice bound(deployment_->contexts(), inst_->plan.device);
    Router::StreamRun outputs;
    Status s = bound.status();
    while (s.ok() && !stopping_->load()) {
      s = bound.Reassert();  // the proc may have left the thread elsewhere
      if (!s.ok()) break;
      {
        std::lock_guard<std::mutex> l(mu_);
        notified_ = false;
      }
      const uint64_t before = dequeued_.load(std::memory_order_relaxed);
      const int32_t rc = inst_->udf->ProcQueues(bound, func_, queues_);
      if (stopping_->load()) break;
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) {
        failures_->fetch_add(1);
        deployment_->Fail(Status::FailedPrecondition(
            Where() + " returned " + std::to_string(rc) +
            "; a failing stream function stops its graph (see the UDF's "
            "log)"));
        break;
      }
      // Its queues are closed: nothing more can arrive.
      if (!deployment_->failure().ok()) break;
      if (dequeued_.load(std::memory_order_relaxed) == before) Pause();
    }
    if (!s.ok() && !stopping_->load()) {
      deployment_->Fail(s.WithContext(Where() + ": binding: "));
    }
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    finished_ = true;
  }
  cv_.notify_all();
}

bool StreamWorker::Join(std::chrono::steady_clock::time_point deadline,
                        bool forever) {
  if (!thread_.joinable()) return true;
  std::unique_lock<std::mutex> l(mu_);
  auto done = [this] { return finished_; };
  if (forever) {
    cv_.wait(l, done);
  } else if (!cv_.wait_until(l, deadline, done)) {
    l.unlock();
    thread_.detach();  // abandoned (Note [Abandoning a stuck graph])
    return false;
  }
  l.unlock();
  thread_.join();
  return true;
}

}  // namespace exec
}  // namespace hflow
