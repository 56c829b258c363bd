// ExecPool (see exec_pool.h).
// Thread-safety: ready_, searching_ and stop_ are guarded by mu_
// (ready_count_, stop_ and parked_ are atomic, so threads read them
// unlocked); an item's state is an atomic moved by compare-and-swap only; a
// slot is filled by its owner thread and emptied with exchange.
#include "exec/exec_pool.h"

#include <chrono>

#include "util/fast_tls.h"
#include "util/spin_lock.h"
#include "util/thread_name.h"

namespace hflow {
namespace exec {
namespace {

constexpr int kYieldsBeforePark = 32;

// The pool and slot of the calling pool thread, if any.
thread_local ExecPool* t_pool HFLOW_FAST_TLS = nullptr;
thread_local int t_index HFLOW_FAST_TLS = -1;

}  // namespace

ExecPool::ExecPool(std::string prefix, int threads)
    : prefix_(std::move(prefix)),
      num_slots_(threads < 1 ? 1 : threads),
      slots_(std::make_unique<Slot[]>(num_slots_)),
      exited_(num_slots_, false) {
  threads = num_slots_;
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, i] { Loop(i); });
  }
}

ExecPool::~ExecPool() {
  if (!abandoned_) Stop();
}

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

// Note [Hand-off]
// A stage's output usually makes the next stage ready. Queueing the message
// and scheduling that stage costs an enqueue and a dequeue (locks, driver
// calls), a trip through the ready queue and often a wake-up on another
// core, where the message is not in cache. When the consumer is idle, the
// producer's thread can instead claim it, hold the message for it and run
// it next (TBB's task bypass); the producer's run ends first and is settled
// like any run, queued again if it has more input.
//
// The producer's Proc may go on for long, or block, after it emitted, so
// the claimed consumer waits in the thread's slot, where any thread looking
// for work steals it. A parked thread cannot look, so with a thread parked
// the consumer is queued at once instead (which wakes one). The check is a
// Dekker pair with a parking thread: the owner fills its slot, then reads
// parked_; the parker raises parked_, then scans the slots; at least one
// sees the other, and an owner that sees a parker takes its item back out
// to the ready queue. The claim is the item's own running state: nobody
// else runs it meanwhile, and a schedule that comes in marks it to run
// again, as for any run.
bool ExecPool::TryClaim(Item* item) {
  if (t_pool != this ||
      slots_[t_index].item.load(std::memory_order_relaxed) != nullptr) {
    return false;
  }
  int s = kIdle;
  return item->state_.compare_exchange_strong(s, kRunning,
                                              std::memory_order_acq_rel);
}

bool ExecPool::HandOff(Item* claimed) {
  Slot& mine = slots_[t_index];
  if (parked_.load() == 0) {
    mine.item.store(claimed);
    if (parked_.load() == 0) return true;
    if (mine.item.exchange(nullptr) == nullptr) return false;  // stolen
  }
  claimed->state_.store(kQueued, std::memory_order_release);
  Push(claimed);
  return false;
}

void ExecPool::Release(Item* claimed) { Settle(claimed, false); }

void ExecPool::Settle(Item* item, bool more) {
  int s = kRunning;
  if (!more && item->state_.compare_exchange_strong(
                   s, kIdle, std::memory_order_acq_rel)) {
    return;
  }
  // Work left, or scheduled while running: run again after the others.
  item->state_.store(kQueued, std::memory_order_release);
  Push(item);
}

void ExecPool::Push(Item* item) {
  auto lock = util::LockSpinning(mu_);
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
  bool wake =
      parked_.load() > 0 && ready_.size() > static_cast<size_t>(searching_);
  lock.unlock();
  if (wake) cv_.notify_one();
}

ExecPool::Item* ExecPool::Steal(int index) {
  const int n = num_slots_;
  for (int k = 1; k < n; ++k) {
    Slot& other = slots_[(index + k) % n];
    if (other.item.load(std::memory_order_relaxed) != nullptr) {
      if (Item* item = other.item.exchange(nullptr)) return item;
    }
  }
  return nullptr;
}

// A stolen item is already claimed (running); a queued one is not yet.
ExecPool::Item* ExecPool::Pop(int index) {
  auto lock = util::LockSpinning(mu_);
  if (ready_.empty() && !stop_) {
    ++searching_;
    lock.unlock();
    Item* stolen = nullptr;
    for (int i = 0; i < kYieldsBeforePark && ready_count_.load() == 0 &&
                    !stop_.load() && (stolen = Steal(index)) == nullptr;
         ++i) {
      std::this_thread::yield();
    }
    util::RelockSpinning(lock);
    --searching_;
    if (stolen != nullptr) {
      if (!stop_) return stolen;
      lock.unlock();
      Release(stolen);  // dropped, as queued items are
      return nullptr;
    }
  }
  while (ready_.empty() && !stop_) {
    parked_.fetch_add(1);               // before the scan: Note [Hand-off]
    if (Item* stolen = Steal(index)) {  // stop_ is false here
      parked_.fetch_sub(1);
      return stolen;
    }
    cv_.wait(lock);
    parked_.fetch_sub(1);
  }
  if (stop_) return nullptr;
  Item* item = ready_.front();
  ready_.pop_front();
  ready_count_.store(ready_.size());
  item->state_.store(kRunning, std::memory_order_release);
  return item;
}

void ExecPool::Loop(int index) {
  util::SetCurrentThreadName(prefix_ + std::to_string(index));
  t_pool = this;
  t_index = index;
  Slot& mine = slots_[index];
  Item* item = Pop(index);
  while (item != nullptr) {
    Settle(item, item->Run());
    item = mine.item.exchange(nullptr);  // the hand-off, if not stolen
    if (item != nullptr && stop_.load()) {
      Release(item);  // dropped, as queued items are
      item = nullptr;
    }
    if (item == nullptr) item = Pop(index);
  }
  t_pool = nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  exited_[index] = true;
  exit_cv_.notify_all();
}

bool ExecPool::Stop(int32_t timeout_ms, const std::function<void()>& on_late) {
  std::unique_lock<std::mutex> lock(mu_);
  if (stop_ && threads_.empty()) return !abandoned_;
  stop_ = true;
  ready_.clear();
  ready_count_.store(0);
  cv_.notify_all();
  auto all_exited = [this] {
    for (size_t i = 0; i < threads_.size(); ++i) {
      if (!exited_[i]) return false;
    }
    return true;
  };
  if (timeout_ms < 0) {
    exit_cv_.wait(lock, all_exited);
  } else if (!exit_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                                all_exited) &&
             on_late) {
    // Calls that can be ended by force (a worker process) are: give their
    // threads a moment to come back.
    lock.unlock();
    on_late();
    lock.lock();
    exit_cv_.wait_for(lock, std::chrono::milliseconds(kLateGraceMs),
                      all_exited);
  }
  // A thread marked exited only returns from Loop: joining it is bounded.
  // One still running an item may never return: it keeps the pool.
  for (size_t i = 0; i < threads_.size(); ++i) {
    if (exited_[i]) {
      lock.unlock();
      threads_[i].join();
      lock.lock();
    } else {
      threads_[i].detach();
      abandoned_ = true;
    }
  }
  threads_.clear();
  return !abandoned_;
}

}  // namespace exec
}  // namespace hflow
