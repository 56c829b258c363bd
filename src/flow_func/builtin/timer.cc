// TimerService (see timer.h).
// Thread-safety: all state is guarded by mu_.
#include "flow_func/builtin/timer.h"

#include <chrono>

#include "util/thread_name.h"

namespace hflow {
namespace flow_func {

TimerService& TimerService::Instance() {
  // Leaked on purpose: UDF destructors may cancel timers during exit.
  static TimerService* t = new TimerService();
  return *t;
}

uint64_t TimerService::NowMs() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

TimerService::TimerService() : thread_([this] { Loop(); }) {}

TimerService::~TimerService() {
  {
    util::MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

uint64_t TimerService::Schedule(uint64_t deadline_ms,
                                std::function<void()> fn) {
  uint64_t id;
  {
    util::MutexLock lock(mu_);
    id = next_id_++;
    timers_[id] = {deadline_ms, std::move(fn)};
    by_deadline_.emplace(deadline_ms, id);
  }
  cv_.notify_all();
  return id;
}

void TimerService::Cancel(uint64_t id, bool wait) {
  util::MutexLock lock(mu_);
  auto it = timers_.find(id);
  if (it != timers_.end()) {
    auto range = by_deadline_.equal_range(it->second.first);
    for (auto d = range.first; d != range.second; ++d) {
      if (d->second == id) {
        by_deadline_.erase(d);
        break;
      }
    }
    timers_.erase(it);
  }
  // A callback cancelling itself must not wait for itself.
  if (wait && std::this_thread::get_id() != thread_.get_id()) {
    while (running_ == id) lock.Wait(done_cv_);
  }
}

void TimerService::Loop() {
  util::SetCurrentThreadName("ff-timer");
  util::MutexLock lock(mu_);
  while (!stopping_) {
    if (by_deadline_.empty()) {
      lock.Wait(cv_);
      continue;
    }
    uint64_t deadline = by_deadline_.begin()->first;
    uint64_t now = NowMs();
    if (deadline > now) {
      lock.WaitFor(cv_, std::chrono::milliseconds(deadline - now));
      continue;
    }
    uint64_t id = by_deadline_.begin()->second;
    by_deadline_.erase(by_deadline_.begin());
    auto fn = std::move(timers_[id].second);
    timers_.erase(id);
    running_ = id;
    lock.Unlock();
    fn();
    lock.Lock();
    running_ = 0;
    done_cv_.notify_all();
  }
}

}  // namespace flow_func
}  // namespace hflow
