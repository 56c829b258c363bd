// InstanceThread: the one thread a hosted instance runs on, bound to its
// device for the thread's whole life (as a worker's slot thread is). A
// UDF's Init, Proc, reset and destructors all run there: user code may
// keep thread-local state across its calls, and gRPC's server threads
// come and go, so they never run user code themselves; they hand each
// call over and wait.
//
// Thread-safety: Run from any thread, one call at a time (the caller
// serializes: InstanceHost holds the instance's call_mu over it).
#ifndef HFLOW_DAEMON_INSTANCE_THREAD_H_
#define HFLOW_DAEMON_INSTANCE_THREAD_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "hflow/status.h"
#include "rt/device_binding.h"
#include "util/thread_name.h"

namespace hflow::daemon {

class InstanceThread {
 public:
  using Task = std::function<Status(const rt::ScopedDevice& bound)>;

  // Starts the thread `name`, which binds `device` of `contexts` first.
  InstanceThread(rt::DeviceContexts* contexts, int32_t device, std::string name)
      : thread_([this, contexts, device, name] {
          util::SetCurrentThreadName(name);
          rt::ScopedDevice bound(contexts, device,
                                 rt::ScopedDevice::OnExit::kKeep);
          Serve(bound);
        }) {}
  ~InstanceThread() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  InstanceThread(const InstanceThread&) = delete;
  InstanceThread& operator=(const InstanceThread&) = delete;

  // Runs `task` on the thread, bound, and returns its status; the
  // binding's own failure instead, naming the device.
  Status Run(Task task) {
    std::unique_lock<std::mutex> l(mu_);
    task_ = std::move(task);
    done_ = false;
    cv_.notify_all();
    cv_.wait(l, [this] { return done_; });
    return result_;
  }

 private:
  void Serve(rt::ScopedDevice& bound) {
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
      cv_.wait(l, [this] { return stop_ || task_ != nullptr; });
      if (task_ == nullptr) return;  // stopping, nothing asked
      Task task = std::move(task_);
      task_ = nullptr;
      l.unlock();
      // A UDF may have switched the thread away: bind again first.
      Status s = bound.Current() ? Status::OK() : bound.Reassert();
      if (s.ok()) s = bound.status();
      if (s.ok()) s = task(bound);
      l.lock();
      result_ = s;
      done_ = true;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  Task task_;  // under mu_
  bool done_ = false;
  bool stop_ = false;
  Status result_;
  std::thread thread_;  // last: starts once the rest is made
};

}  // namespace hflow::daemon

#endif  // HFLOW_DAEMON_INSTANCE_THREAD_H_
