// DeviceAgent: the device-side agent of one device's event scheduler. It
// owns a named thread ("esched-<device>") that binds its device when it
// starts and then processes synchronously submitted events in order, calling
// the handler with its binding token.
//
// Thread-safety: Call may be made from any thread; a caller that times out
// leaves nothing dangling (the pending event is shared with the agent).
// mu_ guards the queue, the stop and failure flags and the running event
// (GUARDED_BY below).
#ifndef HFLOW_SERVICES_EVENT_SCHEDULER_H_
#define HFLOW_SERVICES_EVENT_SCHEDULER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <thread>

#include "rt/device_binding.h"
#include "services/events.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace services {

class DeviceAgent {
 public:
  using Handler = std::function<Status(const rt::ScopedDevice& bound,
                                       const EventRequest&, EventReply*)>;

  DeviceAgent(std::shared_ptr<rt::DeviceContexts> contexts, int32_t device,
              Handler handler);
  ~DeviceAgent();  // fails queued events with kCancelled, joins the thread
  DeviceAgent(const DeviceAgent&) = delete;
  DeviceAgent& operator=(const DeviceAgent&) = delete;

  // Queues `request` and waits for the handler's status (timeout in ms,
  // -1 forever). kTimeout if the agent did not answer in time.
  Status Call(const EventRequest& request, EventReply* reply,
              int32_t timeout_ms);

  // Fails the running, every queued and every future event with `reason`
  // (device loss). The running handler finishes on its own; its caller has
  // been answered already.
  void Fail(const Status& reason);

  int32_t device() const { return device_; }

 private:
  struct Pending {
    EventRequest request;
    EventReply reply;
    std::promise<Status> done;
    std::atomic<bool> completed{false};
  };
  // Completes `p` once: the handler and Fail (device loss) race for it.
  static void Complete(Pending* p, Status s);
  void Loop();

  const std::shared_ptr<rt::DeviceContexts> contexts_;
  const int32_t device_;
  const Handler handler_;
  util::Mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Pending>> queue_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  Status failed_ GUARDED_BY(mu_);  // set by Fail
  // The event being handled.
  std::shared_ptr<Pending> current_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_EVENT_SCHEDULER_H_
