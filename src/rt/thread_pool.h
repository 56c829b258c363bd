// ThreadPool: named worker threads for hflow's internal parallel work
// (deploy, undeploy, services). A task may carry a target device; the worker
// binds that device before running it, at this single point, so a task can
// never run on whatever binding the previous task left behind. A task
// without a device runs on an unbound thread: a device call it forgot to
// bind fails visibly instead of borrowing a stale context.
//
// Note [Pool bindings]: the first task for device d makes the pool take one
// SetDevice(d) reference (DeviceContexts) and keep it until the pool stops;
// workers bind with SetCurrentContext, never with SetDevice/ResetDevice
// pairs, so no default context is destroyed and recreated per task
// (LESSONS.md, invariant 5).
//
// A task that never returns (a UDF's Init) must not hang its caller:
// RunAllWithin waits a bounded time and names the late tasks; the owner then
// Abandon()s the pool, whose threads are detached, never joined, and keeps
// the pool object (and whatever the late tasks use) for the rest of the
// process.
//
// Thread-safety: Submit may be called from any thread; the destructor (and
// Shutdown, Abandon) must not race with Submit.
#ifndef HFLOW_RT_THREAD_POOL_H_
#define HFLOW_RT_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hflow/device_runtime.h"
#include "hflow/status.h"
#include "rt/device_binding.h"

namespace hflow {
namespace rt {

class ThreadPool {
 public:
  using Task = std::function<Status()>;

  // Threads are named "<name>-<i>". `runtime` defaults to the process-wide
  // runtime at construction.
  ThreadPool(std::string name, int num_threads,
             rt::DeviceRuntime* runtime = nullptr);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task`; the future yields its Status, the binding error if the
  // device could not be bound, or kInternal if the task threw.
  std::future<Status> Submit(Task task,
                             std::optional<int32_t> device = std::nullopt);

  // Runs every task, waits for all of them, and returns the first error in
  // submission order (all tasks run even when one fails).
  Status RunAll(std::vector<std::pair<std::optional<int32_t>, Task>> tasks);
  // RunAll, waiting at most `timeout_ms` in all (-1: forever). Tasks still
  // queued or running at the deadline go to `late` (their indexes, in
  // order); the first error of the others is returned.
  Status RunAllWithin(
      std::vector<std::pair<std::optional<int32_t>, Task>> tasks,
      int32_t timeout_ms, std::vector<size_t>* late);

  // Gives up on the workers without waiting: queued tasks are dropped,
  // idle workers exit, busy ones finish (or not) on their own; all are
  // detached. The pool must not be destroyed afterwards (its owner keeps
  // it: a late task may still return into it).
  void Abandon();

  // Runs queued tasks, then stops and joins the workers. Idempotent.
  void Shutdown();

  const std::string& name() const { return name_; }
  int size() const { return static_cast<int>(workers_.size()); }

 private:
  struct Item {
    Task task;
    std::optional<int32_t> device;
    std::promise<Status> done;
  };
  void WorkerLoop(int index);
  Status BindFor(const std::optional<int32_t>& device);

  const std::string name_;
  rt::DeviceRuntime* const runtime_;
  std::unique_ptr<DeviceContexts> contexts_;  // null without a runtime
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  bool abandoned_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_THREAD_POOL_H_
