// ThreadPool implementation (see thread_pool.h).
// Thread-safety: the queue is guarded by mu_; per-worker state is private to
// its worker thread.
#include "rt/thread_pool.h"

#include <exception>

#include "hflow/rt.h"
#include "rt/thread_util.h"

namespace hflow {

ThreadPool::ThreadPool(std::string name, int num_threads,
                       rt::DeviceRuntime* runtime)
    : name_(std::move(name)),
      runtime_(runtime != nullptr ? runtime : rt::CurrentRuntime()) {
  if (num_threads < 1) num_threads = 1;
  for (int i = 0; i < num_threads; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
  }
}

ThreadPool::~ThreadPool() { Shutdown(); }

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

Status ThreadPool::BindFor(WorkerState* w,
                           const std::optional<int32_t>& device) {
  if (!device) {
    if (runtime_ != nullptr && runtime_->GetCurrentContext() != nullptr) {
      return runtime_->SetCurrentContext(nullptr);
    }
    return Status::OK();
  }
  if (runtime_ == nullptr) {
    return Status::FailedPrecondition("no device runtime is installed");
  }
  auto it = w->held.find(*device);
  if (it != w->held.end() && runtime_->SetCurrentContext(it->second).ok()) {
    return Status::OK();
  }
  HFLOW_RETURN_IF_ERROR(runtime_->SetDevice(*device));
  rt::Context* ctx = runtime_->GetCurrentContext();
  if (it != w->held.end()) {
    // The cached context died (cannot happen while we hold a reference,
    // unless someone reset the device behind our back): drop the extra ref.
    (void)runtime_->ResetDevice(*device);
    it->second = ctx;
  } else {
    w->held.emplace(*device, ctx);
  }
  return Status::OK();
}

void ThreadPool::ReleaseAll(WorkerState* w) {
  if (runtime_ == nullptr) return;
  (void)runtime_->SetCurrentContext(nullptr);
  for (auto& [device, ctx] : w->held) (void)runtime_->ResetDevice(device);
  w->held.clear();
}

void ThreadPool::WorkerLoop(int index) {
  WorkerState w;
  w.thread_name = name_ + "-" + std::to_string(index);
  SetCurrentThreadName(w.thread_name);
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) break;
      item = std::move(queue_.front());
      queue_.pop_front();
    }
    Status s = BindFor(&w, item.device);
    if (!s.ok()) {
      s = s.WithContext("thread '" + w.thread_name + "' binding device " +
                        std::to_string(item.device.value_or(-1)) + ": ");
    } else {
      try {
        s = item.task();
      } catch (const std::exception& e) {
        s = Status::Internal("task on thread '" + w.thread_name +
                             "' threw: " + e.what());
      } catch (...) {
        s = Status::Internal("task on thread '" + w.thread_name +
                             "' threw a non-standard exception");
      }
    }
    item.done.set_value(std::move(s));
  }
  ReleaseAll(&w);
}

}  // namespace hflow
