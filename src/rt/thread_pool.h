// ThreadPool: named worker threads for hflow's internal parallel work
// (deploy, undeploy). A device task (DeviceTask) names its device; the
// worker binds it with a rt::ScopedDevice before running the task and hands
// the task that ScopedDevice, the proof that it runs bound, so the task
// never binds again and can never run on whatever binding the previous
// task left behind (the scope restores the worker's unbound state at exit).
// A task without a device (Task) runs on an unbound thread, under a
// ContextGuard: a device call it forgot to bind fails visibly instead of
// borrowing a stale context, and a binding it makes does not outlive it.
// Note [Where hflow binds a device] in device_binding.h lists this among
// hflow's bind points.
//
// Note [Pool bindings]: the pool binds through a DeviceContexts registry,
// which takes one SetDevice(d) reference for device d on first use and
// keeps it; workers switch with SetCurrentContext, never with
// SetDevice/ResetDevice pairs, so no default context is destroyed and
// recreated per task (invariant 5). A deployment's pool uses the session's
// registry (passed down through the exchange service); a pool made without
// one (tests) owns its own, released when the pool stops.
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

#include <chrono>
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
#include <utility>
#include <vector>

#include "hflow/device_runtime.h"
#include "hflow/status.h"
#include "rt/device_binding.h"

namespace hflow {
namespace rt {

class ThreadPool {
 public:
  // A task that needs no device (or that ignores the binding).
  using Task = std::function<Status()>;
  // A task run bound to its device: `bound` is the worker's binding.
  using DeviceTask = std::function<Status(const ScopedDevice& bound)>;
  using DeviceTasks = std::vector<std::pair<int32_t, DeviceTask>>;

  // Threads are named "<name>-<i>"; tasks bind through `contexts` (not
  // owned; it must outlive the pool).
  ThreadPool(std::string name, int num_threads, DeviceContexts* contexts);
  // The same with a registry of its own on `runtime` (default: the
  // process-wide runtime at construction), for standalone use.
  ThreadPool(std::string name, int num_threads,
             rt::DeviceRuntime* runtime = nullptr);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task`; the future yields its Status, the binding error if the
  // device could not be bound, or kInternal if the task threw.
  std::future<Status> Submit(Task task,
                             std::optional<int32_t> device = std::nullopt);
  std::future<Status> Submit(int32_t device, DeviceTask task);

  // Runs every task, waits for all of them, and returns the first error in
  // submission order (all tasks run even when one fails).
  Status RunAll(std::vector<std::pair<std::optional<int32_t>, Task>> tasks);
  Status RunAll(DeviceTasks tasks);
  // RunAll, waiting at most `timeout_ms` in all (-1: forever). Tasks still
  // queued or running at the deadline go to `late` (their indexes, in
  // order); the first error of the others is returned.
  Status RunAllWithin(
      std::vector<std::pair<std::optional<int32_t>, Task>> tasks,
      int32_t timeout_ms, std::vector<size_t>* late);
  Status RunAllWithin(DeviceTasks tasks, int32_t timeout_ms,
                      std::vector<size_t>* late);

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
  // One of `task` (no device) and `device_task` (with `device`) is set.
  struct Item {
    Task task;
    DeviceTask device_task;
    std::optional<int32_t> device;
    std::promise<Status> done;
  };
  std::future<Status> Enqueue(Item item);
  // Waits for `futures` (within `deadline` when set); see RunAllWithin.
  static Status Collect(std::vector<std::future<Status>>* futures,
                        const std::chrono::steady_clock::time_point* deadline,
                        std::vector<size_t>* late);
  void StartWorkers(int num_threads);
  void WorkerLoop(int index);
  // Runs `item` bound as it asks (Note [Where hflow binds a device]).
  Status RunBound(Item& item, const std::string& thread_name);

  const std::string name_;
  rt::DeviceRuntime* const runtime_;
  std::unique_ptr<DeviceContexts> own_contexts_;  // standalone pools only
  DeviceContexts* contexts_;                      // null without a runtime
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
