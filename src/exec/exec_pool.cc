// ExecPool (see exec_pool.h).
// Thread-safety: ready_, parked_ and stop_ are guarded by mu_ (ready_count_
// and stop_ are atomic mirrors, so yielding threads read them unlocked); an
// item's state is an atomic moved by compare-and-swap only.
#include "exec/exec_pool.h"
#include <cstdlib>

#include "rt/spin_lock.h"
#include "rt/thread_util.h"

namespace hflow {
namespace exec {
namespace {

static const int kYieldsBeforePark = getenv("HF_PY") ? atoi(getenv("HF_PY")) : 32;

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
  auto lock = LockSpinning(mu_);
  if (stop_) return;
  ready_.push_back(item);
  ready_count_.store(ready_.size());
  // Note [Waking for scheduled work]
  // Even work a pool thread schedules from inside a run wakes a parked
  // thread: the running item may go on for a whole budget of messages, or
  // block in a UDF, and work must not wait behind it while a thread sleeps.
  // A thread still yielding in Pop takes new work without any wake-up, so
  // a parked one is woken only for work beyond what the searching threads
  // will take.
  bool wake = parked_ > 0 && ready_.size() > static_cast<size_t>(searching_);
  lock.unlock();
  if (wake) cv_.notify_one();
}

ExecPool::Item* ExecPool::Pop() {
  auto lock = LockSpinning(mu_);
  if (ready_.empty() && !stop_) {
    ++searching_;
    lock.unlock();
    for (int i = 0; i < kYieldsBeforePark && ready_count_.load() == 0 &&
                    !stop_.load();
         ++i) {
      std::this_thread::yield();
    }
    RelockSpinning(lock);
    --searching_;
  }
  if (ready_.empty() && !stop_) {
    ++parked_;
    cv_.wait(lock, [&] { return stop_ || !ready_.empty(); });
    --parked_;
  }
  if (stop_) return nullptr;
  Item* item = ready_.front();
  ready_.pop_front();
  ready_count_.store(ready_.size());
  return item;
}

void ExecPool::Loop(int index) {
  SetCurrentThreadName(prefix_ + std::to_string(index));
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
}

void ExecPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ && threads_.empty()) return;
    stop_ = true;
    ready_.clear();
    ready_count_.store(0);
  }
  cv_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

}  // namespace exec
}  // namespace hflow
