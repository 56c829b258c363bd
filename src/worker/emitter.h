// Emitter: the host thread that delivers the outputs isolated UDFs set
// outside Proc (from a thread of their own, or in Init). Such an output
// comes from the worker as an Emit message, on the worker's supervisor
// thread, which must never block (every reply of the worker passes
// there); delivering it may wait for room in a queue, as the same output
// of a UDF in the host does. So the supervisor posts it here, and this
// thread, `wk-emit-<tag>`, bound to the seat's device, delivers one at a
// time and answers the worker (EmitDone), whose UDF thread waits for
// that answer: the queue's depth holds for it as in the host.
//
// Thread-safety: Post may be called from any thread; the destructor
// runs what is still queued as cancelled and joins the thread (its work
// must not block for ever: the graph's queues are closed by then).
#ifndef HFLOW_WORKER_EMITTER_H_
#define HFLOW_WORKER_EMITTER_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "rt/device_binding.h"

namespace hflow {
namespace worker {

class Emitter {
 public:
  // One piece of work: run (`cancelled` false), or only answered
  // (`cancelled` true: the emitter is going away).
  using Work = std::function<void(bool cancelled)>;

  // The thread starts at the first Post (most workers never emit).
  Emitter(std::string tag, std::shared_ptr<rt::DeviceContexts> contexts,
          int32_t device)
      : tag_(std::move(tag)), contexts_(std::move(contexts)), device_(device) {}
  ~Emitter();
  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  void Post(Work work);

 private:
  void Loop();

  const std::string tag_;
  const std::shared_ptr<rt::DeviceContexts> contexts_;  // may be null
  const int32_t device_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Work> work_;  // under mu_
  bool stopping_ = false;  // under mu_
  std::thread thread_;     // started under mu_
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_EMITTER_H_
