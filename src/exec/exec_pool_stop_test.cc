// Unit tests of ExecPool's bounded Stop (exec/exec_pool.h): with every
// item returning, Stop(timeout) joins all threads and reports success; with
// an item that does not return, it gives up at the deadline, reports it,
// and the detached thread may later return into the (kept) pool safely.
//
// Thread-safety: the blocking item waits on a heap gate that is never
// freed, as a stuck item's thread may outlive the test.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "exec/exec_pool.h"
#include "test_util.h"

namespace hflow {
namespace exec {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct BlockingItem : ExecPool::Item {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool open = false;
  std::atomic<bool> returned{false};
  bool Run() override {
    std::unique_lock<std::mutex> lock(mu);
    entered = true;
    cv.notify_all();
    cv.wait(lock, [&] { return open; });
    returned = true;
    return false;
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu);
    open = true;
    cv.notify_all();
  }
  bool Entered() {
    std::lock_guard<std::mutex> lock(mu);
    return entered;
  }
};

struct CountingItem : ExecPool::Item {
  std::atomic<int> runs{0};
  bool Run() override {
    ++runs;
    return false;
  }
};

TEST(ExecPoolStopTest, BoundedStopJoinsWhenEveryItemReturns) {
  ExecPool pool("stop-", 3);
  CountingItem item;
  pool.Schedule(&item);
  ASSERT_TRUE(testing::WaitFor([&] { return item.runs.load() == 1; }));
  auto t0 = Clock::now();
  EXPECT_TRUE(pool.Stop(1000));
  EXPECT_LT(Clock::now() - t0, milliseconds(1000));
  EXPECT_FALSE(pool.abandoned());
  EXPECT_EQ(pool.threads(), 0);
}

TEST(ExecPoolStopTest, StopGivesUpOnAnItemThatDoesNotReturn) {
  // Kept for the rest of the process, as the owner of an abandoned pool
  // must (its detached thread returns into it).
  static ExecPool* pool;  // static: reachable, not a leak to LSan
  static BlockingItem* item;
  pool = new ExecPool("stuck-", 2);
  item = new BlockingItem();
  pool->Schedule(item);
  ASSERT_TRUE(testing::WaitFor([&] { return item->Entered(); }));
  auto t0 = Clock::now();
  EXPECT_FALSE(pool->Stop(100));
  auto spent = Clock::now() - t0;
  EXPECT_GE(spent, milliseconds(100));
  EXPECT_LT(spent, milliseconds(2000));
  EXPECT_TRUE(pool->abandoned());
  EXPECT_FALSE(pool->Stop(100));  // still abandoned, returns at once
  // The thread returns late: it finds the pool stopped and exits.
  item->Open();
  EXPECT_TRUE(testing::WaitFor([&] { return item->returned.load(); }));
  pool->Schedule(item);  // a no-op after Stop
}

}  // namespace
}  // namespace exec
}  // namespace hflow
