// Unit tests of ExecPool (exec/exec_pool.h), its threads: work a running item
// schedules, or more work than the threads looking for work can take, wakes
// parked threads (regression tests); no wake-up is lost when many threads
// (external and pool) schedule at once; Stop with work queued returns
// promptly and joins; threads carry the name prefix. Most tests let the
// pool's threads park first (Settle), so the wake-up paths are exercised.
//
// Thread-safety: each test owns its pool and items; items count with
// atomics, gates use a mutex and condition variable, so the tests may run
// under TSan.
#include <dirent.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
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
using exec_pool_test::kPrompt;
using exec_pool_test::Settle;
using std::chrono::milliseconds;
using testing::WaitFor;  // polls for up to kPrompt

// Work a pool thread schedules for another item must not be stranded while
// the scheduling item goes on running: the item may block (a UDF waiting
// in Proc) or keep its thread for a long run (GraphRunner runs up to 32
// messages per run). Here `a` schedules `b` and then waits (at most 1.5 s)
// for `b` to run, on a pool of two threads. Regression test: before
// a924240, Push did not wake a parked thread for the first item a pool
// thread scheduled itself.
TEST(ExecPoolTest, WorkScheduledByARunningItemDoesNotWaitForIt) {
  struct Waiter : ExecPool::Item {
    ExecPool* pool = nullptr;
    CountingItem* other = nullptr;
    std::atomic<bool> saw_other{false};
    std::atomic<int> runs{0};
    bool Run() override {
      pool->Schedule(other);
      auto deadline = Clock::now() + milliseconds(1500);
      while (other->runs() == 0 && Clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(1));
      }
      saw_other = other->runs() > 0;
      runs.fetch_add(1);
      return false;
    }
  };
  CountingItem b;
  Waiter a;
  ExecPool pool("ept-", 2);
  // Both threads go idle (they park after a few yields).
  std::this_thread::sleep_for(milliseconds(100));
  a.pool = &pool;
  a.other = &b;
  pool.Schedule(&a);
  ASSERT_TRUE(WaitFor([&] { return a.runs.load() == 1; }));
  EXPECT_TRUE(a.saw_other.load())
      << "`b` waited for `a` to return while the second thread was parked";
  ASSERT_TRUE(WaitFor([&] { return b.runs() == 1; }));
  pool.Stop();
}

// Work beyond what the threads still looking for work can take must wake
// parked threads. Here one thread has just finished an item and is
// yielding in Pop (looking for work) while the other two are parked; two
// items that can only finish together (each waits, at most 1 s, for the
// other to start) are then scheduled. The searching thread takes one; the
// other must wake a parked thread, or both wait. The window is a few
// microseconds, so the schedule is aimed just after the item returns, and
// tried 20 times.
//
// Regression: Push once woke nobody while any thread was searching
// (`searching_ == 0`), however many items were pushed, stranding the rest
// behind the one the searching thread took. It now wakes while the ready
// queue holds more than the searching threads will take. (Under TSan, where
// threads start slowly, the old rule also failed
// ThreadsAreNamedWithThePrefix.)
TEST(ExecPoolTest, WorkBeyondSearchingThreadsWakesParkedOnes) {
  struct Rendezvous : ExecPool::Item {
    std::atomic<int>* started = nullptr;
    std::atomic<int> result{0};  // 1: met the other, -1: timed out
    bool Run() override {
      started->fetch_add(1);
      auto deadline = Clock::now() + milliseconds(1000);
      while (started->load() < 2 && Clock::now() < deadline) {
        std::this_thread::yield();
      }
      result = started->load() >= 2 ? 1 : -1;
      return false;
    }
  };
  struct Flag : ExecPool::Item {
    std::atomic<bool> done{false};
    bool Run() override {
      done = true;
      return false;
    }
  };
  struct Trial {
    Flag flag;
    std::atomic<int> started{0};
    Rendezvous x, y;
  };
  constexpr int kTrials = 20;
  std::vector<std::unique_ptr<Trial>> trials;
  for (int i = 0; i < kTrials; ++i) {
    trials.push_back(std::make_unique<Trial>());
    trials.back()->x.started = trials.back()->y.started =
        &trials.back()->started;
  }
  ExecPool pool("ept-", 3);
  int stranded = 0;
  for (int i = 0; i < kTrials && stranded == 0; ++i) {
    Trial& t = *trials[i];
    Settle();
    pool.Schedule(&t.flag);
    auto deadline = Clock::now() + kPrompt;
    while (!t.flag.done.load()) {
      ASSERT_LT(Clock::now(), deadline) << "an item on an idle pool never ran";
    }
    // Just after the flag item returns, its thread is searching.
    auto aim = Clock::now() + std::chrono::microseconds(3);
    while (Clock::now() < aim) {
    }
    pool.Schedule(&t.x);
    pool.Schedule(&t.y);
    ASSERT_TRUE(WaitFor([&] { return t.x.result != 0 && t.y.result != 0; }));
    if (t.x.result < 0 || t.y.result < 0) ++stranded;
  }
  EXPECT_EQ(stranded, 0)
      << "an item waited in the queue while a thread was parked";
  pool.Stop();
}

// Lost wake-ups: "work available" tokens are added by 8 external threads
// and by pool threads (an item hands some of its tokens to the next item,
// which exercises the pool-thread schedule path that skips waking others);
// every token must be drained. A schedule that does not lead to a run
// leaves tokens behind. The schedules come in rounds, and each round must
// drain completely before the next starts: a wake-up lost at the end of
// any round (the only kind a stream of later schedules would not hide)
// fails the test. Between rounds the pool's threads go idle and park.
TEST(ExecPoolTest, NoLostWakeUpsUnderStress) {
  constexpr int kItems = 4;
  constexpr int kExternal = 8;
  constexpr int kRounds = 500;
  constexpr int kPerRound = 25;  // per external thread: 100k in all
  struct Tokens : ExecPool::Item {
    ExecPool* pool = nullptr;
    Tokens* next = nullptr;
    std::atomic<int64_t> available{0};
    std::atomic<int64_t> drained{0};
    std::atomic<int> in_run{0};
    std::atomic<int> overlaps{0};
    bool Run() override {
      if (in_run.fetch_add(1) != 0) overlaps.fetch_add(1);
      int64_t got = available.exchange(0);
      // Every third batch: pass one token on to the next item.
      if (got > 0 && got % 3 == 0) {
        --got;
        next->available.fetch_add(1);
        pool->Schedule(next);
      }
      drained.fetch_add(got);
      // Still running for a moment after taking the tokens: schedules
      // made now must lead to another run.
      std::this_thread::yield();
      in_run.fetch_sub(1);
      return false;
    }
  };
  for (int threads : {1, 2, 4}) {
    std::vector<Tokens> items(kItems);
    ExecPool pool("ept-", threads);
    for (int i = 0; i < kItems; ++i) {
      items[i].pool = &pool;
      items[i].next = &items[(i + 1) % kItems];
    }
    auto total = [&] {
      int64_t sum = 0;
      for (auto& it : items) sum += it.drained.load();
      return sum;
    };
    std::atomic<int> round{0};     // released rounds
    std::atomic<int> finished{0};  // external threads done with a round
    std::atomic<bool> abort{false};
    std::vector<std::thread> external;
    for (int t = 0; t < kExternal; ++t) {
      external.emplace_back([&, t] {
        for (int r = 1; r <= kRounds; ++r) {
          while (round.load() < r && !abort.load()) std::this_thread::yield();
          if (abort.load()) return;
          for (int i = 0; i < kPerRound; ++i) {
            Tokens& it = items[(t + i + r) % kItems];
            it.available.fetch_add(1);
            pool.Schedule(&it);
          }
          finished.fetch_add(1);
        }
      });
    }
    int64_t expected = 0;
    bool ok = true;
    for (int r = 1; r <= kRounds && ok; ++r) {
      // Per round: a lost wake-up strands tokens for ever, while a slow
      // (sanitized, loaded) build only takes longer over all rounds.
      const auto deadline = Clock::now() + milliseconds(2000);
      round.store(r);
      expected += int64_t{kExternal} * kPerRound;
      while (total() != expected || finished.load() != r * kExternal) {
        if (Clock::now() > deadline) {
          ok = false;
          break;
        }
        std::this_thread::yield();
      }
      if (!ok) {
        int64_t left = 0;
        for (auto& it : items) left += it.available.load();
        ADD_FAILURE() << threads << " threads, round " << r << ": " << total()
                      << " of " << expected << " tokens drained, " << left
                      << " left behind (a lost wake-up)";
      }
      if (r % 50 == 0) Settle();
    }
    abort = true;
    for (auto& t : external) t.join();
    pool.Stop();
    for (auto& it : items) EXPECT_EQ(it.overlaps.load(), 0);
    if (!ok) return;  // one failing pool size is enough
  }
}

// Stop with many items queued behind a running one: the running item
// finishes, queued ones are dropped, Stop returns promptly and joins, and
// later schedules are no-ops.
TEST(ExecPoolTest, StopWithItemsQueuedReturnsPromptlyAndJoins) {
  class Slow : public CountingItem {
   public:
    Gate gate;

   protected:
    bool Body() override {
      EXPECT_TRUE(gate.Pass());
      return true;  // would run forever if Stop did not drop it
    }
  };
  Slow running;
  std::vector<std::unique_ptr<CountingItem>> queued;
  CountingItem late;
  ExecPool pool("ept-", 1);
  pool.Schedule(&running);
  ASSERT_TRUE(running.gate.WaitArrived(1));
  for (int i = 0; i < 100; ++i) {
    queued.push_back(std::make_unique<CountingItem>());
    pool.Schedule(queued.back().get());
  }
  auto t0 = Clock::now();
  std::atomic<bool> stopping{false};
  auto stopped = std::async(std::launch::async, [&] {
    stopping = true;
    pool.Stop();
  });
  // Let Stop take the pool's lock before the running item returns.
  ASSERT_TRUE(WaitFor([&] { return stopping.load(); }));
  std::this_thread::sleep_for(milliseconds(50));
  running.gate.Open();
  ASSERT_EQ(stopped.wait_for(kPrompt), std::future_status::ready)
      << "Stop did not return";
  stopped.get();
  EXPECT_LT(Clock::now() - t0, kPrompt);
  EXPECT_EQ(running.runs(), 1);
  int ran = 0;
  for (auto& it : queued) ran += it->runs();
  EXPECT_EQ(ran, 0) << "queued items ran after Stop";
  // Stopped: later schedules are no-ops.
  pool.Schedule(&late);
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(late.runs(), 0);
  pool.Stop();  // idempotent
}

TEST(ExecPoolTest, StopOnAnIdlePoolJoinsEveryThread) {
  auto names_with = [](const std::string& prefix) {
    int n = 0;
    DIR* dir = opendir("/proc/self/task");
    if (dir == nullptr) return -1;
    while (dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      if (name.rfind(prefix, 0) == 0) ++n;
    }
    closedir(dir);
    return n;
  };
  auto pool = std::make_unique<ExecPool>("eptidle-", 3);
  ASSERT_TRUE(WaitFor([&] { return names_with("eptidle-") == 3; }))
      << names_with("eptidle-") << " named threads";
  auto t0 = Clock::now();
  pool->Stop();
  EXPECT_LT(Clock::now() - t0, kPrompt);
  // A joined thread can linger in /proc for a moment after pthread_join.
  EXPECT_TRUE(
      WaitFor([&] { return names_with("eptidle-") == 0; }, milliseconds(200)))
      << "Stop left " << names_with("eptidle-") << " threads running";
  pool.reset();
}

// Threads are named "<prefix><i>", seen from inside Run. The three items are
// scheduled while the new threads are still starting (some searching, some
// parked), so this also fails, now and then (always under TSan), with the
// KNOWN BUG of WorkBeyondSearchingThreadsWakesParkedOnes.
TEST(ExecPoolTest, ThreadsAreNamedWithThePrefix) {
  struct Namer : ExecPool::Item {
    std::mutex mu;
    std::set<std::string> names;
    Gate* gate = nullptr;
    bool Run() override {
      char buf[32] = {};
      pthread_getname_np(pthread_self(), buf, sizeof(buf));
      {
        std::lock_guard<std::mutex> l(mu);
        names.insert(buf);
      }
      if (gate != nullptr) (void)gate->Pass();
      return false;
    }
  };
  constexpr int kThreads = 3;
  // Three items that each hold their thread until all three run: every
  // thread of the pool runs one of them.
  Gate gate;
  std::vector<std::unique_ptr<Namer>> items;
  ExecPool pool("eptname-", kThreads);
  for (int i = 0; i < kThreads; ++i) {
    items.push_back(std::make_unique<Namer>());
    items.back()->gate = &gate;
    pool.Schedule(items.back().get());
  }
  bool all_at_once = gate.WaitArrived(kThreads);
  gate.Open();
  ASSERT_TRUE(all_at_once) << "the pool did not run " << kThreads
                           << " items at once";
  std::set<std::string> all;
  ASSERT_TRUE(WaitFor([&] {
    all.clear();
    for (auto& it : items) {
      std::lock_guard<std::mutex> l(it->mu);
      all.insert(it->names.begin(), it->names.end());
    }
    return all.size() == kThreads;
  }));
  EXPECT_EQ(all,
            (std::set<std::string>{"eptname-0", "eptname-1", "eptname-2"}));
  pool.Stop();
}

}  // namespace
}  // namespace exec
}  // namespace hflow
