// Unit tests of ExecPool (exec/exec_pool.h), running items: every scheduled
// item runs; an item scheduled while it runs runs exactly once more and never
// on two threads at once; an item returning true is rerun behind the others
// without starving them. Most tests let the pool's threads park first
// (Settle), so the wake-up paths are exercised, not only threads still
// spinning. Wake-ups, Stop and thread names: exec_pool_threads_test.cc.
//
// Thread-safety: each test owns its pool and items; items count with
// atomics, gates use a mutex and condition variable, so the tests may run
// under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "exec/exec_pool.h"
#include "exec/exec_pool_test_util.h"
#include "test_util.h"

namespace hflow {
namespace exec {
namespace {

using exec_pool_test::Clock;
using exec_pool_test::CountingItem;
using exec_pool_test::Gate;
using exec_pool_test::Settle;
using std::chrono::milliseconds;
using testing::WaitFor;  // polls for up to kPrompt

TEST(ExecPoolTest, EveryScheduledItemRuns) {
  for (int threads : {1, 2, 4}) {
    std::vector<std::unique_ptr<CountingItem>> items;
    items.reserve(68);
    ExecPool pool("ept-", threads);
    EXPECT_EQ(pool.threads(), threads);
    // One at a time onto an idle pool: each must wake a parked thread.
    for (int i = 0; i < 4; ++i) {
      Settle();
      items.push_back(std::make_unique<CountingItem>());
      pool.Schedule(items.back().get());
      ASSERT_TRUE(WaitFor([&] { return items.back()->runs() == 1; }))
          << "an item scheduled on an idle pool of " << threads
          << " threads never ran";
    }
    // Then a burst.
    Settle();
    for (int i = 0; i < 64; ++i) {
      items.push_back(std::make_unique<CountingItem>());
      pool.Schedule(items.back().get());
    }
    for (size_t i = 0; i < items.size(); ++i) {
      ASSERT_TRUE(WaitFor([&] { return items[i]->runs() >= 1; }))
          << "item " << i << " never ran with " << threads << " threads";
    }
    pool.Stop();
    for (auto& it : items) {
      EXPECT_EQ(it->runs(), 1);
      EXPECT_EQ(it->overlaps(), 0);
    }
  }
}

// Scheduling an item that is running (any number of times) makes it run
// exactly once more: no wake-up lost, none duplicated.
TEST(ExecPoolTest, SchedulingWhileRunningRunsExactlyOnceMore) {
  class Blocking : public CountingItem {
   public:
    Gate gate;
    std::atomic<int> entered{0};

   protected:
    bool Body() override {
      if (entered.fetch_add(1) == 0) {
        EXPECT_TRUE(gate.Pass());
      }
      return false;
    }
  };
  Blocking item;
  ExecPool pool("ept-", 4);
  Settle();
  pool.Schedule(&item);
  ASSERT_TRUE(item.gate.WaitArrived(1));
  // From this thread and from others, while the first run blocks.
  std::vector<std::thread> schedulers;
  for (int t = 0; t < 4; ++t) {
    schedulers.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) pool.Schedule(&item);
    });
  }
  for (auto& t : schedulers) t.join();
  EXPECT_EQ(item.runs(), 0);
  item.gate.Open();
  ASSERT_TRUE(WaitFor([&] { return item.runs() >= 2; }))
      << "the schedules made during the run were lost";
  std::this_thread::sleep_for(milliseconds(50));  // no further runs come
  EXPECT_EQ(item.runs(), 2);
  EXPECT_EQ(item.overlaps(), 0);
  pool.Stop();
}

// Heavily contended scheduling of one item on a pool of many threads: the
// item never runs on two threads at once.
TEST(ExecPoolTest, AnItemNeverRunsConcurrentlyWithItself) {
  class Spinner : public CountingItem {
   protected:
    bool Body() override {
      // Long enough for other threads to try to take it meanwhile.
      auto until = Clock::now() + std::chrono::microseconds(20);
      while (Clock::now() < until) std::this_thread::yield();
      return false;
    }
  };
  Spinner item;
  ExecPool pool("ept-", 8);
  std::atomic<bool> stop{false};
  std::vector<std::thread> schedulers;
  for (int t = 0; t < 4; ++t) {
    schedulers.emplace_back([&] {
      while (!stop.load()) pool.Schedule(&item);
    });
  }
  // A fixed time (the run count depends on the machine's load).
  WaitFor([&] { return item.runs() >= 2000; }, milliseconds(500));
  stop = true;
  for (auto& t : schedulers) t.join();
  pool.Stop();
  EXPECT_GT(item.runs(), 1);
  EXPECT_EQ(item.overlaps(), 0);
}

TEST(ExecPoolTest, ItemReturningTrueIsRerun) {
  class More : public CountingItem {
   public:
    std::atomic<int> left{5};

   protected:
    bool Body() override { return left.fetch_sub(1) > 1; }
  };
  More item;
  ExecPool pool("ept-", 2);
  Settle();
  pool.Schedule(&item);  // once only: the reruns come from returning true
  ASSERT_TRUE(WaitFor([&] { return item.runs() >= 5; }));
  std::this_thread::sleep_for(milliseconds(30));
  EXPECT_EQ(item.runs(), 5);
  EXPECT_EQ(item.overlaps(), 0);
  pool.Stop();
}

// A rerun goes behind the others: on one thread, an item that always has
// work left does not starve an item scheduled after it.
TEST(ExecPoolTest, RerunDoesNotStarveOtherItems) {
  class Forever : public CountingItem {
   public:
    std::atomic<bool> stop{false};

   protected:
    bool Body() override {
      // Mostly running (not queued) when the other item is scheduled.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      return !stop.load();
    }
  };
  Forever busy;
  CountingItem other;
  ExecPool pool("ept-", 1);
  pool.Schedule(&busy);
  ASSERT_TRUE(WaitFor([&] { return busy.runs() >= 10; }));
  pool.Schedule(&other);
  EXPECT_TRUE(WaitFor([&] { return other.runs() >= 1; }))
      << "an item returning true kept the only thread";
  busy.stop = true;
  pool.Stop();
}

}  // namespace
}  // namespace exec
}  // namespace hflow
