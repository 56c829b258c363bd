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
                       rt::DeviceRuntime* runtime)
    : name_(std::move(name)),
      runtime_(runtime != nullptr ? runtime : rt::CurrentRuntime()) {
  if (runtime_ != nullptr) {
    contexts_ = std::make_unique<DeviceContexts>(runtime_);
  }
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
  Item item{std::move(task), device, {}};
  std::future<Status> f = item.done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      item.done.set_value(Status::FailedPrecondition(
          "thread pool '" + name_ + "' is shut down"));
      return f;
    }
    queue_.push_back(std::move(item));
  }
  cv_.notify_one();
  return f;
}

Status ThreadPool::RunAll(
    std::vector<std::pair<std::optional<int32_t>, Task>> tasks) {
  std::vector<std::future<Status>> futures;
  futures.reserve(tasks.size());
  for (auto& [device, task] : tasks) {
    futures.push_back(Submit(std::move(task), device));
  }
  Status first;
  for (auto& f : futures) {
    Status s = f.get();
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

Status ThreadPool::RunAllWithin(
    std::vector<std::pair<std::optional<int32_t>, Task>> tasks,
    int32_t timeout_ms, std::vector<size_t>* late) {
  if (timeout_ms < 0) return RunAll(std::move(tasks));
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<std::future<Status>> futures;
  futures.reserve(tasks.size());
  for (auto& [device, task] : tasks) {
    futures.push_back(Submit(std::move(task), device));
  }
  Status first;
  for (size_t i = 0; i < futures.size(); ++i) {
    if (futures[i].wait_until(deadline) != std::future_status::ready) {
      late->push_back(i);
      continue;
    }
    Status s = futures[i].get();
    if (first.ok() && !s.ok()) first = s;
  }
  return first;
}

Status ThreadPool::BindFor(const std::optional<int32_t>& device) {
  if (runtime_ == nullptr) {
    return device ? Status::FailedPrecondition("no device runtime is installed")
                  : Status::OK();
  }
  rt::Context* ctx = nullptr;
  if (device) HFLOW_RETURN_IF_ERROR(contexts_->Get(*device, &ctx));
  if (runtime_->CurrentContextFast() == ctx) return Status::OK();
  return runtime_->SetCurrentContext(ctx);
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
    Status s = BindFor(item.device);
    if (!s.ok()) {
      s = s.WithContext("thread '" + thread_name + "' binding device " +
                        std::to_string(item.device.value_or(-1)) + ": ");
    } else {
      try {
        s = item.task();
      } catch (const std::exception& e) {
        s = Status::Internal("task on thread '" + thread_name +
                             "' threw: " + e.what());
      } catch (...) {
        s = Status::Internal("task on thread '" + thread_name +
                             "' threw a non-standard exception");
      }
    }
    item.done.set_value(std::move(s));
  }
  if (runtime_ != nullptr) (void)runtime_->SetCurrentContext(nullptr);
}

}  // namespace rt
}  // namespace hflow
