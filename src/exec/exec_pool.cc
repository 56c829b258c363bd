// ExecPool (see exec_pool.h).
// Thread-safety: ready_, parked_ and stop_ are guarded by mu_; an item's
// state is an atomic moved by compare-and-swap only.
#include "exec/exec_pool.h"

#include "rt/thread_util.h"

namespace hflow {
namespace exec {
namespace {

// The pool whose thread is running (null on other threads).
thread_local const ExecPool* t_pool = nullptr;

constexpr int kYieldsBeforePark = 32;

}  // namespace

ExecPool::ExecPool(std::string prefix, int threads)
    : prefix_(std::move(prefix)) {
  if (threads < 1) threads = 1;
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, i] { Loop(i); });
  }
}

ExecPool::~ExecPool() { Stop(); }

void ExecPool::Schedule(Item* item) {
  int s = item->state_.load(std::memory_order_acquire);
  for (;;) {
    if (s == kIdle) {
      if (item->state_.compare_exchange_weak(s, kQueued,
                                             std::memory_order_acq_rel)) {
        Push(item);
        return;
      }
    } else if (s == kRunning) {
      if (item->state_.compare_exchange_weak(s, kRerun,
                                             std::memory_order_acq_rel)) {
        return;  // the running thread queues it again when it finishes
      }
    } else {
      return;  // queued, or already marked to run again
    }
  }
}

void ExecPool::Push(Item* item) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_) return;
  ready_.push_back(item);
  // A pool thread takes what it schedules itself as soon as its current
  // item returns: wake another only when there is more than that.
  size_t spare = t_pool == this ? 1 : 0;
  bool wake = parked_ > 0 && ready_.size() > spare;
  lock.unlock();
  if (wake) cv_.notify_one();
}

ExecPool::Item* ExecPool::Pop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (int i = 0; i < kYieldsBeforePark && ready_.empty() && !stop_; ++i) {
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }
  if (ready_.empty() && !stop_) {
    ++parked_;
    cv_.wait(lock, [&] { return stop_ || !ready_.empty(); });
    --parked_;
  }
  if (stop_) return nullptr;
  Item* item = ready_.front();
  ready_.pop_front();
  return item;
}

void ExecPool::Loop(int index) {
  SetCurrentThreadName(prefix_ + std::to_string(index));
  t_pool = this;
  while (Item* item = Pop()) {
    item->state_.store(kRunning, std::memory_order_release);
    bool more = item->Run();
    int s = kRunning;
    if (!more && item->state_.compare_exchange_strong(
                     s, kIdle, std::memory_order_acq_rel)) {
      continue;
    }
    // Work left, or scheduled while running: run again after the others.
    item->state_.store(kQueued, std::memory_order_release);
    Push(item);
  }
  t_pool = nullptr;
}

void ExecPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
    ready_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace exec
}  // namespace hflow
