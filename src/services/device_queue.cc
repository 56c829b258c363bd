// DeviceQueue (see device_queue.h).
// Thread-safety: items_ and the closed state are guarded by mu_ (size_ and
// is_closed_ are atomic mirrors, written under it). Notifies are issued
// only when someone is parked on that condition.
#include "services/device_queue.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "util/mutex.h"

namespace hflow {
namespace services {
namespace {
constexpr int kYieldsBeforePark = 16;
}  // namespace

DeviceQueue::DeviceQueue(uint32_t id, int32_t device, uint32_t depth,
                         std::string name, QueuePolicy policy)
    : id_(id),
      device_(device),
      depth_(depth),
      name_(std::move(name)),
      overwrite_(policy == QueuePolicy::kOverwrite) {}

std::string DeviceQueue::Where() const {
  return "queue " + std::to_string(id_) +
         (name_.empty() ? "" : " ('" + name_ + "')") + " on device " +
         std::to_string(device_);
}

template <typename Ready>
Status DeviceQueue::Wait(util::MutexLock& lock, std::condition_variable& cv,
                         int* parked, int32_t timeout_ms, const char* what,
                         Ready ready) {
  auto done = [&] { return is_closed_.load() || ready(); };
  if (!done()) {
    if (timeout_ms == 0) {
      return Status::Timeout(Where() + ": " + what + " (no wait requested)");
    }
    // Note [Yield before parking]
    // A pipeline stage usually finds its queue empty only for the moment
    // its producer needs to finish the next message. Parking on the condvar
    // costs a futex sleep here and a futex wake in the producer (several µs
    // each on a loaded machine); yielding the core a few times first lets
    // the producer run (on this core, when the machine has fewer cores than
    // stages) and usually finds the item without either syscall. The
    // yielding waiter reads only the atomic mirrors, so it does not contend
    // for the lock the producer needs; only parked waiters are counted, so
    // producers skip the notify meanwhile.
    lock.RunUnlockedThenLockSpinning([&] {
      for (int i = 0; i < kYieldsBeforePark && !done(); ++i) {
        std::this_thread::yield();
      }
    });
  }
  if (!done()) {
    ++*parked;
    bool in_time = true;
    // cv.wait(lock, done) and cv.wait_for(lock, timeout, done), spelled out
    // (util::MutexLock waits take no predicate; util/mutex.h).
    if (timeout_ms < 0) {
      while (!done()) lock.Wait(cv);
    } else {
      const auto deadline = std::chrono::steady_clock::now() +
                            std::chrono::milliseconds(timeout_ms);
      while (!done()) {
        if (lock.WaitUntil(cv, deadline) == std::cv_status::timeout) {
          in_time = done();
          break;
        }
      }
    }
    --*parked;
    if (!in_time) {
      return Status::Timeout(Where() + ": " + what + " after " +
                             std::to_string(timeout_ms) + " ms");
    }
  }
  return is_closed_.load() ? closed_ : Status::OK();
}

Status DeviceQueue::Enqueue(MbufPtr mbuf, int32_t timeout_ms) {
  if (!mbuf) return Status::InvalidArgument(Where() + ": null mbuf");
  if (overwrite_) return PushOverwrite(std::move(mbuf));
  util::MutexLock lock(mu_, util::kSpinFirst);
  Status s = Wait(lock, not_full_, &waiting_producers_, timeout_ms,
                  "still full", [&] { return size_.load() < depth_; });
  HFLOW_RETURN_IF_ERROR(s);
  items_.push_back(std::move(mbuf));
  size_.store(items_.size());
  bool wake = waiting_consumers_ > 0;
  bool call = BeginListener(on_item_);
  lock.Unlock();
  if (wake) not_empty_.notify_one();
  if (call) EndListener(on_item_);
  return Status::OK();
}

Status DeviceQueue::WaitForRoom(int32_t timeout_ms) {
  util::MutexLock lock(mu_, util::kSpinFirst);
  if (overwrite_) return is_closed_.load() ? closed_ : Status::OK();
  Status s = Wait(lock, not_full_, &waiting_producers_, timeout_ms,
                  "still full", [&] { return size_.load() < depth_; });
  // A take wakes one parked producer, and this one fills nothing: the wake
  // goes on to a producer that may be parked behind it.
  const bool pass_on = s.ok() && waiting_producers_ > 0;
  lock.Unlock();
  if (pass_on) not_full_.notify_one();
  return s;
}

Status DeviceQueue::PushOverDepth(MbufPtr mbuf) {
  if (!mbuf) return Status::InvalidArgument(Where() + ": null mbuf");
  if (overwrite_) return PushOverwrite(std::move(mbuf));
  util::MutexLock lock(mu_, util::kSpinFirst);
  if (is_closed_.load()) return closed_;
  items_.push_back(std::move(mbuf));
  size_.store(items_.size());
  bool wake = waiting_consumers_ > 0;
  bool call = BeginListener(on_item_);
  lock.Unlock();
  if (wake) not_empty_.notify_one();
  if (call) EndListener(on_item_);
  return Status::OK();
}

Status DeviceQueue::PushOverwrite(MbufPtr mbuf) {
  MbufPtr oldest;  // released after the lock (its memory returns to a group)
  util::MutexLock lock(mu_, util::kSpinFirst);
  if (is_closed_.load()) return closed_;
  // `while`: a Return may have put one back over the depth.
  while (items_.size() >= depth_) {
    oldest = std::move(items_.front());
    items_.pop_front();
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  items_.push_back(std::move(mbuf));
  size_.store(items_.size());
  bool wake = waiting_consumers_ > 0;
  bool call = BeginListener(on_item_);
  lock.Unlock();
  if (wake) not_empty_.notify_one();
  if (call) EndListener(on_item_);
  return Status::OK();
}

bool DeviceQueue::BeginListener(const Listener& l) {
  if (!listeners_on_ || !l) return false;
  listener_calls_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void DeviceQueue::EndListener(const Listener& l) {
  l();
  listener_calls_.fetch_sub(1, std::memory_order_release);
}

void DeviceQueue::SetListeners(Listener on_item, Listener on_space) {
  {
    util::MutexLock lock(mu_);
    listeners_on_ = false;  // no new call starts
  }
  // Calls already counted finish first: they read the old listeners.
  while (listener_calls_.load(std::memory_order_acquire) != 0) {
    std::this_thread::yield();
  }
  util::MutexLock lock(mu_);
  on_item_ = std::move(on_item);
  on_space_ = std::move(on_space);
  listeners_on_ = on_item_ || on_space_;
}

Status DeviceQueue::Dequeue(MbufPtr* out, int32_t timeout_ms) {
  util::MutexLock lock(mu_, util::kSpinFirst);
  Status s = Wait(lock, not_empty_, &waiting_consumers_, timeout_ms,
                  "still empty", [&] { return size_.load() > 0; });
  if (!s.ok() && !(keep_queued_ && !items_.empty())) return s;
  *out = std::move(items_.front());
  items_.pop_front();
  const TakeWakeups w = AfterTakeLocked(items_.size() + 1);
  lock.Unlock();
  FinishTake(w);
  return Status::OK();
}

size_t DeviceQueue::DequeueUpTo(size_t max, std::vector<MbufPtr>* out) {
  util::MutexLock lock(mu_, util::kSpinFirst);
  if ((is_closed_.load() && !keep_queued_) || items_.empty() || max == 0) {
    return 0;
  }
  const size_t before = items_.size();
  const size_t n = std::min(max, before);
  for (size_t i = 0; i < n; ++i) {
    out->push_back(std::move(items_.front()));
    items_.pop_front();
  }
  const TakeWakeups w = AfterTakeLocked(before);
  lock.Unlock();
  FinishTake(w);
  return n;
}

DeviceQueue::TakeWakeups DeviceQueue::AfterTakeLocked(size_t before) {
  size_.store(items_.size());
  TakeWakeups w;
  w.taken = before - items_.size();
  w.wake = waiting_producers_ > 0;
  w.call =
      before >= depth_ && items_.size() < depth_ && BeginListener(on_space_);
  return w;
}

void DeviceQueue::FinishTake(const TakeWakeups& w) {
  if (w.wake) {
    if (w.taken > 1) {
      not_full_.notify_all();  // room for several
    } else {
      not_full_.notify_one();
    }
  }
  if (w.call) EndListener(on_space_);
}

Status DeviceQueue::Return(MbufPtr mbuf) {
  util::MutexLock lock(mu_, util::kSpinFirst);
  if (is_closed_.load() && !keep_queued_) return closed_;
  items_.push_front(std::move(mbuf));
  size_.store(items_.size());
  bool wake = waiting_consumers_ > 0;
  bool call = BeginListener(on_item_);
  lock.Unlock();
  if (wake) not_empty_.notify_one();
  if (call) EndListener(on_item_);
  return Status::OK();
}

void DeviceQueue::Close(const Status& reason, bool keep_queued) {
  std::vector<MbufPtr> dropped;
  {
    util::MutexLock lock(mu_);
    if (is_closed_.load()) return;
    closed_ = reason.WithContext(Where() + ": ");
    is_closed_.store(true);
    keep_queued_ = keep_queued;
    if (!keep_queued) {
      items_.DrainTo(&dropped);
      size_.store(0);
    }
  }
  not_empty_.notify_all();
  not_full_.notify_all();
  // `dropped` releases its mbufs here, outside the lock.
}

void DeviceQueue::Reopen() {
  std::vector<MbufPtr> dropped;  // released after the lock
  util::MutexLock lock(mu_);
  if (!is_closed_.load()) return;
  closed_ = Status::OK();
  is_closed_.store(false);
  keep_queued_ = false;
  items_.DrainTo(&dropped);
  size_.store(0);
  lock.Unlock();
}

size_t DeviceQueue::Size() const { return size_.load(); }

bool DeviceQueue::closed() const { return is_closed_.load(); }

}  // namespace services
}  // namespace hflow
