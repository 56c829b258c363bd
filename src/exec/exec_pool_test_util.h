// Helpers shared by the ExecPool tests (exec_pool_*_test.cc): Settle lets a
// pool's threads park, Gate is a one-shot gate a Run can block on, and
// CountingItem counts its runs and detects two runs overlapping.
//
// Thread-safety: Gate and CountingItem may be used from any thread.
#ifndef HFLOW_EXEC_EXEC_POOL_TEST_UTIL_H_
#define HFLOW_EXEC_EXEC_POOL_TEST_UTIL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "exec/exec_pool.h"

namespace hflow {
namespace exec {
namespace exec_pool_test {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Generous bound for "promptly" (sanitizer builds, a loaded 2-core machine).
inline constexpr milliseconds kPrompt{3000};

// Lets a pool's threads go idle: they yield a few times, then park, and a
// parked thread is only woken by a schedule that notifies it. Without this
// the tests would only exercise threads still spinning in their yields.
inline void Settle() { std::this_thread::sleep_for(milliseconds(30)); }

// A one-shot gate a Run can block on (with a bound, so a failing test never
// hangs).
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> l(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Announces arrival, then waits for Open (at most `limit`).
  bool Pass(milliseconds limit = kPrompt) {
    std::unique_lock<std::mutex> l(mu_);
    ++arrived_;
    cv_.notify_all();
    return cv_.wait_for(l, limit, [&] { return open_; });
  }
  bool WaitArrived(int n, milliseconds limit = kPrompt) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, limit, [&] { return arrived_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  bool open_ = false;
};

// In every test the items (and what they use) are declared before the pool:
// the pool is destroyed first, joining its threads, so no thread touches
// an item after it is gone, even when an ASSERT returns early.

// Counts its runs and detects two runs overlapping.
class CountingItem : public ExecPool::Item {
 public:
  bool Run() override {
    if (in_run_.fetch_add(1) != 0) overlaps_.fetch_add(1);
    bool more = Body();
    runs_.fetch_add(1);
    in_run_.fetch_sub(1);
    return more;
  }
  int runs() const { return runs_.load(); }
  int overlaps() const { return overlaps_.load(); }

 protected:
  virtual bool Body() { return false; }

 private:
  std::atomic<int> in_run_{0};
  std::atomic<int> runs_{0};
  std::atomic<int> overlaps_{0};
};

}  // namespace exec_pool_test
}  // namespace exec
}  // namespace hflow

#endif  // HFLOW_EXEC_EXEC_POOL_TEST_UTIL_H_
