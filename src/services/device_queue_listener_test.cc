// Unit tests of device queues (docs/architecture.md "Device-side services"),
// the executor's side: PushOverDepth and the listeners (on_item per added
// item, on_space per full -> not-full transition, none once cleared), also
// under concurrency.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "hflow/rt.h"
#include "services/device_queue.h"
#include "services/device_queue_test_util.h"
#include "services/exchange_service.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace {

using device_queue_test::kPrompt;
using device_queue_test::kSettle;
using device_queue_test::Token;
using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::HasSubstr;

// --- PushOverDepth and listeners (the executor's side of the queue) ---------

TEST(DeviceQueueTest, PushOverDepthExceedsTheDepthInFifoOrder) {
  DeviceQueue q(20, 3, 2, "over");
  for (uint64_t i = 1; i <= 5; ++i) {
    ASSERT_TRUE(q.PushOverDepth(Token(i)).ok()) << i;
  }
  EXPECT_EQ(q.Size(), 5u);
  // A blocking producer still sees the queue as full.
  EXPECT_EQ(q.Enqueue(Token(6), 0).code(), StatusCode::kTimeout);
  for (uint64_t i = 1; i <= 5; ++i) {
    MbufPtr m;
    ASSERT_TRUE(q.Dequeue(&m, 0).ok());
    EXPECT_EQ(m->head().trans_id, i);
  }
  EXPECT_EQ(q.Size(), 0u);
  EXPECT_EQ(q.PushOverDepth(nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(q.Size(), 0u);
}

TEST(DeviceQueueTest, PushOverDepthWakesABlockedConsumer) {
  DeviceQueue q(21, 3, 1, "wake");
  auto consumer = std::async(std::launch::async, [&] {
    MbufPtr m;
    Status s = q.Dequeue(&m, -1);
    return s.ok() ? m->head().trans_id : uint64_t{0};
  });
  EXPECT_EQ(consumer.wait_for(kSettle), std::future_status::timeout);
  ASSERT_TRUE(q.PushOverDepth(Token(42)).ok());
  ASSERT_EQ(consumer.wait_for(kPrompt), std::future_status::ready)
      << "PushOverDepth did not wake the waiting consumer";
  EXPECT_EQ(consumer.get(), 42u);
  // And when the queue is already over its depth.
  ASSERT_TRUE(q.PushOverDepth(Token(1)).ok());
  ASSERT_TRUE(q.PushOverDepth(Token(2)).ok());
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  auto second = std::async(std::launch::async, [&] {
    MbufPtr got;
    return q.Dequeue(&got, 1500).ok() ? got->head().trans_id : uint64_t{0};
  });
  std::this_thread::sleep_for(kSettle);
  ASSERT_TRUE(q.PushOverDepth(Token(43)).ok());
  EXPECT_EQ(second.get(), 43u);
}

TEST(DeviceQueueTest, PushOverDepthFailsWithTheCloseReason) {
  DeviceQueue q(22, 4, 2, "shut");
  std::atomic<int> items{0};
  q.SetListeners([&] { ++items; }, nullptr);
  q.Close(Status::DeviceLost("pulled"));
  Status s = q.PushOverDepth(Token(1));
  EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("queue 22 ('shut') on device 4"),
                                 HasSubstr("pulled")));
  EXPECT_EQ(q.Size(), 0u);
  EXPECT_EQ(items.load(), 0) << "a refused push must not announce an item";
  EXPECT_EQ(q.Return(Token(2)).code(), StatusCode::kDeviceLost);
  EXPECT_EQ(items.load(), 0);
}

TEST(DeviceQueueTest, OnItemFiresOncePerAddedItem) {
  DeviceQueue q(23, 3, 2, "items");
  std::atomic<int> items{0};
  std::atomic<int> spaces{0};
  q.SetListeners([&] { ++items; }, [&] { ++spaces; });
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  EXPECT_EQ(items.load(), 1);
  ASSERT_TRUE(q.Enqueue(Token(2), 0).ok());
  EXPECT_EQ(items.load(), 2);
  // A refused enqueue (full) adds nothing and announces nothing.
  EXPECT_EQ(q.Enqueue(Token(3), 0).code(), StatusCode::kTimeout);
  EXPECT_EQ(q.Enqueue(Token(3), 10).code(), StatusCode::kTimeout);
  EXPECT_EQ(items.load(), 2);
  ASSERT_TRUE(q.PushOverDepth(Token(4)).ok());
  EXPECT_EQ(items.load(), 3);
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(items.load(), 3) << "a dequeue is not an item";
  ASSERT_TRUE(q.Return(std::move(m)).ok());
  EXPECT_EQ(items.load(), 4);
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 1u) << "Return puts the item back in front";
  // A producer that waited for room announces its item once it lands.
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  ASSERT_TRUE(q.Enqueue(Token(5), 0).ok());
  EXPECT_EQ(items.load(), 5);
  auto producer =
      std::async(std::launch::async, [&] { return q.Enqueue(Token(6), -1); });
  EXPECT_EQ(producer.wait_for(kSettle), std::future_status::timeout);
  EXPECT_EQ(items.load(), 5);
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  ASSERT_TRUE(producer.get().ok());
  EXPECT_EQ(items.load(), 6);
}

TEST(DeviceQueueTest, OnItemFiresOncePerItemUnderConcurrency) {
  DeviceQueue q(24, 3, 8, "mpmc");
  std::atomic<int> items{0};
  q.SetListeners([&] { ++items; }, nullptr);
  constexpr int kPerThread = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        ASSERT_TRUE(q.Enqueue(Token(1), -1).ok());
      }
    });
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        ASSERT_TRUE(q.PushOverDepth(Token(2)).ok());
      }
    });
  }
  std::thread consumer([&] {
    MbufPtr m;
    for (int i = 0; i < 4 * kPerThread; ++i) {
      ASSERT_TRUE(q.Dequeue(&m, 5000).ok()) << i;
    }
  });
  for (auto& t : threads) t.join();
  consumer.join();
  EXPECT_EQ(items.load(), 4 * kPerThread);
  EXPECT_EQ(q.Size(), 0u);
}

// on_space marks the full -> not-full transition only: a dequeue that takes
// the size from >= depth to < depth.
TEST(DeviceQueueTest, OnSpaceFiresExactlyWhenTheQueueStopsBeingFull) {
  DeviceQueue q(25, 3, 3, "space");
  std::atomic<int> items{0};
  std::atomic<int> spaces{0};
  q.SetListeners([&] { ++items; }, [&] { ++spaces; });
  MbufPtr m;
  // Dequeues below the depth never fire.
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  ASSERT_TRUE(q.Enqueue(Token(2), 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());  // 2 -> 1
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());  // 1 -> 0
  EXPECT_EQ(spaces.load(), 0);
  // A failed dequeue (empty) does not fire.
  EXPECT_EQ(q.Dequeue(&m, 0).code(), StatusCode::kTimeout);
  EXPECT_EQ(spaces.load(), 0);
  // Full (3 of 3) -> 2: fires once; 2 -> 1 -> 0: no more.
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(q.Enqueue(Token(i), 0).ok());
  EXPECT_EQ(spaces.load(), 0) << "enqueues never fire on_space";
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(spaces.load(), 1);
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(spaces.load(), 1);
  // Over the depth (5 of 3): 5 -> 4 and 4 -> 3 stay full; 3 -> 2 fires.
  for (uint64_t i = 0; i < 5; ++i) ASSERT_TRUE(q.PushOverDepth(Token(i)).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(spaces.load(), 1) << "still at or over the depth";
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(spaces.load(), 2);
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(spaces.load(), 2);
  // Refilled by Return (front, over the depth for that slot): full again.
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(q.Enqueue(Token(i), 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());  // 3 -> 2: fires
  EXPECT_EQ(spaces.load(), 3);
  ASSERT_TRUE(q.Return(std::move(m)).ok());  // back to 3
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());        // 3 -> 2: fires again
  EXPECT_EQ(spaces.load(), 4);
  // Close drops the items without a dequeue: no on_space.
  q.Close(Status::Cancelled("done"));
  EXPECT_EQ(spaces.load(), 4);
  EXPECT_EQ(q.Dequeue(&m, 0).code(), StatusCode::kCancelled);
  EXPECT_EQ(spaces.load(), 4);
  EXPECT_EQ(items.load(), 2 + 3 + 5 + 3 + 1);
}

TEST(DeviceQueueTest, OnSpaceWithDepthOne) {
  DeviceQueue q(26, 3, 1, "one");
  std::atomic<int> spaces{0};
  q.SetListeners(nullptr, [&] { ++spaces; });
  MbufPtr m;
  for (int i = 1; i <= 3; ++i) {
    ASSERT_TRUE(q.Enqueue(Token(i), 0).ok());
    ASSERT_TRUE(q.Dequeue(&m, 0).ok());
    EXPECT_EQ(spaces.load(), i);
  }
  // Only on_space set: items announce nothing and do not crash.
  ASSERT_TRUE(q.PushOverDepth(Token(9)).ok());
  ASSERT_TRUE(q.Return(Token(8)).ok());
}

// Exactly one on_space per full -> not-full transition, with a blocked
// producer refilling the queue as a consumer drains it.
TEST(DeviceQueueTest, OnSpaceCountsTransitionsUnderConcurrency) {
  DeviceQueue q(27, 3, 2, "flip");
  std::atomic<int> spaces{0};
  // Counted under the queue's lock: a transition is seen by the listener
  // in order with the queue's own state.
  q.SetListeners(nullptr, [&] { ++spaces; });
  constexpr int kItems = 3000;
  std::thread producer([&] {
    for (int i = 0; i < kItems; ++i) {
      ASSERT_TRUE(q.Enqueue(Token(i), -1).ok());
    }
  });
  int transitions = 0;  // counted by the only consumer, before each dequeue
  MbufPtr m;
  for (int i = 0; i < kItems; ++i) {
    // The consumer is alone: the size can only grow between its Size() and
    // its Dequeue, and a producer cannot push past the depth, so a size of
    // >= depth now is still exactly depth at the dequeue.
    bool full = q.Size() >= q.depth();
    ASSERT_TRUE(q.Dequeue(&m, 5000).ok());
    if (full) ++transitions;
  }
  producer.join();
  // Full seen by the consumer implies a fire; a full queue the consumer did
  // not see as full (it filled after the Size call) also fires, so the
  // count is at least the consumer's and never more than one per item.
  EXPECT_GE(spaces.load(), transitions);
  EXPECT_LE(spaces.load(), kItems);
}

TEST(DeviceQueueTest, ClearedListenersNeverFire) {
  DeviceQueue q(28, 3, 1, "quiet");
  std::atomic<int> items{0};
  std::atomic<int> spaces{0};
  q.SetListeners([&] { ++items; }, [&] { ++spaces; });
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  ASSERT_EQ(items.load(), 1);
  ASSERT_EQ(spaces.load(), 1);
  q.SetListeners(nullptr, nullptr);
  ASSERT_TRUE(q.Enqueue(Token(2), 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  ASSERT_TRUE(q.PushOverDepth(Token(3)).ok());
  ASSERT_TRUE(q.PushOverDepth(Token(4)).ok());
  ASSERT_TRUE(q.Return(Token(5)).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(items.load(), 1);
  EXPECT_EQ(spaces.load(), 1);
  // Replacing listeners: only the new ones fire.
  std::atomic<int> items2{0};
  q.SetListeners([&] { ++items2; }, nullptr);
  ASSERT_TRUE(q.Enqueue(Token(6), 0).ok());
  EXPECT_EQ(items.load(), 1);
  EXPECT_EQ(items2.load(), 1);
}

// Clearing listeners is final: once SetListeners(nullptr,
// nullptr) returns, no listener call is running or will start, even with
// producers and consumers still active (GraphRunner::Stop relies on this to
// free the pool the listeners point to).
TEST(DeviceQueueTest, ClearingListenersIsFinalWhileOthersUseTheQueue) {
  DeviceQueue q(29, 3, 4, "race");
  std::atomic<int> in_listener{0};
  std::atomic<bool> cleared{false};
  std::atomic<int> late{0};
  auto listener = [&] {
    in_listener.fetch_add(1);
    if (cleared.load()) late.fetch_add(1);
    in_listener.fetch_sub(1);
  };
  q.SetListeners(listener, listener);
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    while (!stop.load()) {
      if (q.Size() < 64) (void)q.PushOverDepth(Token(1));
    }
  });
  std::thread consumer([&] {
    MbufPtr m;
    while (!stop.load()) (void)q.Dequeue(&m, 1);
  });
  std::this_thread::sleep_for(milliseconds(20));
  q.SetListeners(nullptr, nullptr);
  EXPECT_EQ(in_listener.load(), 0) << "a listener still ran after clearing";
  cleared = true;
  std::this_thread::sleep_for(milliseconds(20));
  stop = true;
  producer.join();
  consumer.join();
  EXPECT_EQ(late.load(), 0);
}

}  // namespace
}  // namespace services
}  // namespace hflow
