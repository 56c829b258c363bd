// InstanceThread: the one thread a hosted instance runs on, bound to its
// device for the thread's whole life (as a worker's slot thread is). A
// UDF's Init, Proc, reset and destructors all run there: user code may
// keep thread-local state across its calls, and gRPC's server threads
// come and go, so they never run user code themselves; they hand each
// call over and wait.
//
// Thread-safety: Run (or Post then Wait) from any thread, one task at a
// time (the caller serializes: InstanceHost holds the instance's call_mu
// over it, or owns the instance alone while it loads).
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
    Post(std::move(task));
    return Wait();
  }
  // Run in two halves, so that several threads' tasks run side by side:
  // Post hands `task` over and returns at once, Wait waits for it.
  void Post(Task task) {
    {
      std::lock_guard<std::mutex> l(mu_);
      task_ = std::move(task);
      done_ = false;
    }
    cv_.notify_all();
  }
  Status Wait() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return done_; });
    return result_;
  }

  // Hands `last` over as the thread's last task and returns at once; the
  // destructor waits for it. Several instances' destructors run side by
  // side this way (Note [Unloading side by side] in instance_host.cc).
  // Nothing may be Run after it.
  void Finish(Task last) {
    {
      std::lock_guard<std::mutex> l(mu_);
      task_ = std::move(last);
      done_ = false;
      stop_ = true;
    }
    cv_.notify_all();
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
