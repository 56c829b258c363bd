// Emitter: see emitter.h.
//
// Thread-safety: see emitter.h; mu_ guards the queue, the stop flag and
// the start of the thread.
#include "worker/emitter.h"

#include <optional>

#include "util/thread_name.h"

namespace hflow {
namespace worker {

Emitter::~Emitter() {
  std::deque<Work> left;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Posted after the thread's last look (or with no thread at all).
  {
    std::lock_guard<std::mutex> l(mu_);
    left.swap(work_);
  }
  for (Work& w : left) w(true);
}

void Emitter::Post(Work work) {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!stopping_) {
      work_.push_back(std::move(work));
      if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
      cv_.notify_one();
      return;
    }
  }
  work(true);
}

void Emitter::Loop() {
  util::SetCurrentThreadName("wk-emit-" + tag_);
  // Bound before any delivery, as every hflow thread is before device
  // work; a delivery enqueues on the seat's device's queues.
  std::optional<rt::ScopedDevice> bound;
  if (contexts_) bound.emplace(contexts_.get(), device_);
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [&] { return stopping_ || !work_.empty(); });
    if (work_.empty()) return;  // stopping, and nothing left
    Work w = std::move(work_.front());
    work_.pop_front();
    const bool cancelled = stopping_;
    l.unlock();
    w(cancelled);
    if (bound && !cancelled) (void)bound->Reassert();
    l.lock();
  }
}

}  // namespace worker
}  // namespace hflow
