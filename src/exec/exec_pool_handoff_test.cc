// Unit tests of ExecPool's hand-off (Note [Hand-off] in exec_pool.cc): a
// claimed item handed off runs next on the same thread, after the handing
// run returned; claims are refused for items that are queued or running,
// off pool threads, and while the thread already holds one; a schedule that
// arrives during a claim makes the item run once more; a hand-off whose
// owner goes on (blocks) is run by the other thread, whether that thread
// is looking for work (steals it) or parked (the item is queued for it).
//
// Thread-safety: each test owns its pool and items; state is atomic, so the
// tests may run under TSan.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "exec/exec_pool.h"
#include "test_util.h"

namespace hflow {
namespace exec {
namespace {

using std::chrono::milliseconds;
using testing::WaitFor;

// Records the thread and order of its runs.
struct Target : ExecPool::Item {
  std::atomic<int> runs{0};
  std::atomic<bool> ran_after_producer{false};
  std::atomic<bool>* producer_done = nullptr;
  std::thread::id thread;
  bool Run() override {
    thread = std::this_thread::get_id();
    if (producer_done != nullptr) ran_after_producer = producer_done->load();
    runs.fetch_add(1);
    return false;
  }
};

// Claims `target` and hands it off, then optionally blocks until it ran.
struct Producer : ExecPool::Item {
  ExecPool* pool = nullptr;
  Target* target = nullptr;
  bool wait_for_target = false;
  std::atomic<int> claimed{-1};   // -1: not tried, 0: refused, 1: claimed
  std::atomic<bool> held{false};  // HandOff kept it for this thread
  std::atomic<bool> second_claim{true};
  std::atomic<bool> done{false};
  std::atomic<bool> saw_target_run{false};
  std::thread::id thread;
  bool Run() override {
    thread = std::this_thread::get_id();
    bool ok = pool->TryClaim(target);
    claimed = ok ? 1 : 0;
    if (ok) {
      held = pool->HandOff(target);
      // A thread holds at most one hand-off.
      Target other;
      second_claim = held && pool->TryClaim(&other);
    }
    if (wait_for_target) {
      saw_target_run =
          WaitFor([&] { return target->runs.load() > 0; }, milliseconds(1500));
    }
    done = true;
    return false;
  }
};

TEST(ExecPoolHandoffTest, HandedOffItemRunsNextOnTheSameThread) {
  Target target;
  Producer producer;
  ExecPool pool("eph-", 1);
  producer.pool = &pool;
  producer.target = &target;
  target.producer_done = &producer.done;
  pool.Schedule(&producer);
  ASSERT_TRUE(WaitFor([&] { return target.runs.load() == 1; }));
  EXPECT_EQ(producer.claimed.load(), 1);
  EXPECT_TRUE(producer.held.load()) << "no thread was parked to queue it for";
  EXPECT_FALSE(producer.second_claim.load())
      << "a thread holding a hand-off claimed a second item";
  EXPECT_TRUE(target.ran_after_producer.load())
      << "the handed item ran inside the producer's run";
  EXPECT_EQ(target.thread, producer.thread);
  pool.Stop();
  EXPECT_EQ(target.runs.load(), 1);
}

TEST(ExecPoolHandoffTest, ClaimsAreRefusedWhenTheItemIsBusyOrOffPool) {
  Target target;
  ExecPool pool("eph-", 1);
  EXPECT_FALSE(pool.TryClaim(&target)) << "claimed from a non-pool thread";
  // Running (forever until told): a claim from a pool thread is refused.
  struct Busy : ExecPool::Item {
    std::atomic<bool> stop{false};
    std::atomic<bool> running{false};
    bool Run() override {
      running = true;
      while (!stop.load()) std::this_thread::yield();
      return false;
    }
  } busy;
  Target probe_target;
  struct Probe : ExecPool::Item {
    ExecPool* pool = nullptr;
    ExecPool::Item* item = nullptr;
    std::atomic<int> claimed{-1};
    bool Run() override {
      claimed = pool->TryClaim(item) ? 1 : 0;
      return false;
    }
  } probe;
  ExecPool two("eph-", 2);
  two.Schedule(&busy);
  ASSERT_TRUE(WaitFor([&] { return busy.running.load(); }));
  probe.pool = &two;
  probe.item = &busy;
  two.Schedule(&probe);
  ASSERT_TRUE(WaitFor([&] { return probe.claimed.load() >= 0; }));
  EXPECT_EQ(probe.claimed.load(), 0) << "claimed an item that was running";
  busy.stop = true;
  two.Stop();
  pool.Stop();
}

// A schedule that arrives while an item is claimed is not lost: the item
// runs again after its handed-off run.
TEST(ExecPoolHandoffTest, ScheduleDuringAClaimRunsTheItemAgain) {
  Target target;
  struct Producer2 : ExecPool::Item {
    ExecPool* pool = nullptr;
    Target* target = nullptr;
    bool Run() override {
      if (pool->TryClaim(target)) {
        pool->Schedule(target);  // e.g. a message arrived in its queue
        pool->HandOff(target);
      }
      return false;
    }
  } producer;
  ExecPool pool("eph-", 1);
  producer.pool = &pool;
  producer.target = &target;
  pool.Schedule(&producer);
  ASSERT_TRUE(WaitFor([&] { return target.runs.load() == 2; }));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(target.runs.load(), 2);
  pool.Stop();
}

// The producer hands off, then blocks until the target ran: with two
// threads the other one must run it, both when it is still looking for
// work and when it has parked (Note [Hand-off]).
TEST(ExecPoolHandoffTest, HandOffIsNotStrandedBehindABlockedProducer) {
  for (int round = 0; round < 20; ++round) {
    Target target;
    Producer producer;
    ExecPool pool("eph-", 2);
    producer.pool = &pool;
    producer.target = &target;
    producer.wait_for_target = true;
    // Even rounds: both threads parked first; odd: schedule at once, while
    // the threads are still starting or looking for work.
    if (round % 2 == 0) std::this_thread::sleep_for(milliseconds(30));
    pool.Schedule(&producer);
    ASSERT_TRUE(WaitFor([&] { return producer.done.load(); }));
    EXPECT_EQ(producer.claimed.load(), 1);
    EXPECT_TRUE(producer.saw_target_run.load())
        << "round " << round << ": the handed item waited for its blocked "
        << "producer";
    pool.Stop();
    EXPECT_EQ(target.runs.load(), 1) << "round " << round;
  }
}

}  // namespace
}  // namespace exec
}  // namespace hflow
