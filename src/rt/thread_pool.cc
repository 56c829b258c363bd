// ThreadPool implementation (see thread_pool.h).
// Thread-safety: the queue is guarded by mu_; per-worker state is private to
// its worker thread.
#include "rt/thread_pool.h"

#include <chrono>
#include <exception>

#include "hflow/rt.h"
#include "util/thread_name.h"

namespace hflow {
namespace rt {

ThreadPool::ThreadPool(std::string name, int num_threads,
                       DeviceContexts* contexts)
    : name_(std::move(name)),
      runtime_(contexts->runtime()),
      contexts_(contexts) {
  StartWorkers(num_threads);
}

ThreadPool::ThreadPool(std::string name, int num_threads,
                       rt::DeviceRuntime* runtime)
    : name_(std::move(name)),
      runtime_(runtime != nullptr ? runtime : rt::CurrentRuntime()),
      contexts_(nullptr) {
  if (runtime_ != nullptr) {
    own_contexts_ = std::make_unique<DeviceContexts>(runtime_);
    contexts_ = own_contexts_.get();
  }
  StartWorkers(num_threads);
}

void ThreadPool::StartWorkers(int num_threads) {
  if (num_threads < 1) num_threads = 1;
  for (int i = 0; i < num_threads; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
  }
}

ThreadPool::~ThreadPool() {
  if (!abandoned_) Shutdown();
}

void ThreadPool::Abandon() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    abandoned_ = true;
    stopping_ = true;
    for (Item& item : queue_) {
      item.done.set_value(
          Status::Cancelled("thread pool '" + name_ + "' was abandoned"));
    }
    queue_.clear();
  }
  cv_.notify_all();
  for (auto& t : workers_) {
    if (t.joinable()) t.detach();
  }
  workers_.clear();
}

void ThreadPool::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
  workers_.clear();
}

std::future<Status> ThreadPool::Submit(Task task,
                                       std::optional<int32_t> device) {
  if (device) {
    // The binding is the pool's either way; this task just does not use it.
    return Submit(*device, [task = std::move(task)](const ScopedDevice&) {
      return task();
    });
  }
  return Enqueue(Item{std::move(task), nullptr, std::nullopt, {}});
}

std::future<Status> ThreadPool::Submit(int32_t device, DeviceTask task) {
  return Enqueue(Item{nullptr, std::move(task), device, {}});
}

std::future<Status> ThreadPool::Enqueue(Item item) {
  std::future<Status> f = item.done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      item.done.set_value(Status::FailedPrecondition("thread pool '" + name_ +
                                                     "' is shut down"));
      return f;
    }
    queue_.push_back(std::move(item));
  }
  cv_.notify_one();
  return f;
}

Status ThreadPool::Collect(
    std::vector<std::future<Status>>* futures,
    const std::chrono::steady_clock::time_point* deadline,
    std::vector<size_t>* late) {
  Status first;
  for (size_t i = 0; i < futures->size(); ++i) {
    std::future<Status>& f = (*futures)[i];
    if (deadline != nullptr &&
        f.wait_until(*deadline) != std::future_status::ready) {
      late->push_back(i);
      continue;
    }
    Status s = f.get();
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

Status ThreadPool::RunAll(
    std::vector<std::pair<std::optional<int32_t>, Task>> tasks) {
  return RunAllWithin(std::move(tasks), -1, nullptr);
}

Status ThreadPool::RunAll(DeviceTasks tasks) {
  return RunAllWithin(std::move(tasks), -1, nullptr);
}

Status ThreadPool::RunAllWithin(
    std::vector<std::pair<std::optional<int32_t>, Task>> tasks,
    int32_t timeout_ms, std::vector<size_t>* late) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<std::future<Status>> futures;
  futures.reserve(tasks.size());
  for (auto& [device, task] : tasks) {
    futures.push_back(Submit(std::move(task), device));
  }
  return Collect(&futures, timeout_ms < 0 ? nullptr : &deadline, late);
}

Status ThreadPool::RunAllWithin(DeviceTasks tasks, int32_t timeout_ms,
                                std::vector<size_t>* late) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<std::future<Status>> futures;
  futures.reserve(tasks.size());
  for (auto& [device, task] : tasks) {
    futures.push_back(Submit(device, std::move(task)));
  }
  return Collect(&futures, timeout_ms < 0 ? nullptr : &deadline, late);
}

// The worker's one bind point (Note [Where hflow binds a device]): a device
// task runs inside a ScopedDevice it is handed, a device-less one unbound;
// both scopes leave the worker unbound again.
Status ThreadPool::RunBound(Item& item, const std::string& thread_name) {
  if (!item.device) {
    ContextGuard unbound_after(runtime_);
    return item.task();
  }
  const std::string where = "thread '" + thread_name + "' binding device " +
                            std::to_string(*item.device) + ": ";
  if (contexts_ == nullptr) {
    return Status::FailedPrecondition(where + "no device runtime is installed");
  }
  ScopedDevice bound(contexts_, *item.device);
  if (!bound.status().ok()) return bound.status().WithContext(where);
  return item.device_task(bound);
}

void ThreadPool::WorkerLoop(int index) {
  const std::string thread_name = name_ + "-" + std::to_string(index);
  util::SetCurrentThreadName(thread_name);
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) break;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    Status s;
    try {
      s = RunBound(item, thread_name);
    } catch (const std::exception& e) {
      s = Status::Internal("task on thread '" + thread_name +
                           "' threw: " + e.what());
    } catch (...) {
      s = Status::Internal("task on thread '" + thread_name +
                           "' threw a non-standard exception");
    }
    item.done.set_value(std::move(s));
  }
}

}  // namespace rt
}  // namespace hflow
