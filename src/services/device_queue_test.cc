// Unit tests of device queues (docs/architecture.md "Device-side services"):
// bounded FIFO order; timeouts 0 / finite / -1; wake-ups on empty->not-empty
// and full->not-full; Close, DestroyQueue and device loss waking blocked
// waiters; PushOverDepth and the executor's listeners (on_item per added item,
// on_space per full -> not-full transition, none once cleared); unknown ids;
// and the binding contract of every ExchangeService call (fresh threads stay
// unbound; a caller's user context of another device is restored exactly).
#include "services/device_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "hflow/rt.h"
#include "services/exchange_service.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace {

using ::hflow::testing::ContextsCreated;
using ::hflow::testing::ImplicitBindings;
using ::hflow::testing::MakeSim;
using ::hflow::testing::RunOnFreshThread;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a helper thread is given to reach its blocking wait.
constexpr milliseconds kSettle{30};
// Generous upper bound for "promptly".
constexpr milliseconds kPrompt{1500};

// An mbuf without device memory (no group), enough for queue mechanics.
MbufPtr Token(uint64_t trans_id, int32_t device = 3) {
  auto m = std::make_shared<Mbuf>(nullptr, device, nullptr, 0, 0);
  m->head().trans_id = trans_id;
  return m;
}

milliseconds Since(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
}

// --- DeviceQueue directly ----------------------------------------------------

TEST(DeviceQueueTest, Accessors) {
  DeviceQueue q(7, 3, 4, "in");
  EXPECT_EQ(q.id(), 7u);
  EXPECT_EQ(q.device(), 3);
  EXPECT_EQ(q.depth(), 4u);
  EXPECT_EQ(q.name(), "in");
  EXPECT_EQ(q.Size(), 0u);
  EXPECT_FALSE(q.closed());
}

TEST(DeviceQueueTest, FifoOrder) {
  DeviceQueue q(1, 3, 8, "fifo");
  for (uint64_t i = 1; i <= 8; ++i) ASSERT_TRUE(q.Enqueue(Token(i), 0).ok());
  EXPECT_EQ(q.Size(), 8u);
  for (uint64_t i = 1; i <= 8; ++i) {
    MbufPtr m;
    ASSERT_TRUE(q.Dequeue(&m, 0).ok());
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->head().trans_id, i);
  }
  EXPECT_EQ(q.Size(), 0u);
  // Interleaved.
  ASSERT_TRUE(q.Enqueue(Token(10), 0).ok());
  ASSERT_TRUE(q.Enqueue(Token(11), 0).ok());
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 10u);
  ASSERT_TRUE(q.Enqueue(Token(12), 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 11u);
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 12u);
}

TEST(DeviceQueueTest, EnqueueOnFullWithTimeoutZeroTimesOutImmediately) {
  DeviceQueue q(2, 4, 2, "small");
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  ASSERT_TRUE(q.Enqueue(Token(2), 0).ok());
  auto t0 = Clock::now();
  MbufPtr third = Token(3);
  Status s = q.Enqueue(third, 0);
  EXPECT_LT(Since(t0), milliseconds(500));
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_TRUE(s.IsTimeout());
  EXPECT_THAT(s.message(), AllOf(HasSubstr("queue 2"), HasSubstr("'small'"),
                                 HasSubstr("device 4"), HasSubstr("full")));
  EXPECT_EQ(q.Size(), 2u);
  // The queue is unchanged: FIFO continues with 1, 2.
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 1u);
}

TEST(DeviceQueueTest, DequeueOnEmptyWithTimeoutZeroTimesOutImmediately) {
  DeviceQueue q(3, 6, 2, "");
  MbufPtr m;
  auto t0 = Clock::now();
  Status s = q.Dequeue(&m, 0);
  EXPECT_LT(Since(t0), milliseconds(500));
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("queue 3 on device 6"), HasSubstr("empty")));
  EXPECT_EQ(m, nullptr);
}

TEST(DeviceQueueTest, FiniteTimeoutWaitsAtLeastThatLong) {
  DeviceQueue q(4, 3, 1, "t");
  MbufPtr m;
  auto t0 = Clock::now();
  Status s = q.Dequeue(&m, 50);
  auto waited = Since(t0);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("50 ms"));
  EXPECT_GE(waited, milliseconds(50));
  EXPECT_LT(waited, milliseconds(2000));
  EXPECT_EQ(m, nullptr);

  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  t0 = Clock::now();
  s = q.Enqueue(Token(2), 50);
  waited = Since(t0);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_GE(waited, milliseconds(50));
  EXPECT_LT(waited, milliseconds(2000));
  EXPECT_EQ(q.Size(), 1u);
}

TEST(DeviceQueueTest, InfiniteWaitGetsALateItem) {
  DeviceQueue q(5, 3, 2, "late");
  std::thread producer([&] {
    std::this_thread::sleep_for(kSettle);
    EXPECT_TRUE(q.Enqueue(Token(77), 0).ok());
  });
  MbufPtr m;
  auto t0 = Clock::now();
  Status s = q.Dequeue(&m, -1);
  producer.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->head().trans_id, 77u);
  EXPECT_LT(Since(t0), kPrompt);
}

TEST(DeviceQueueTest, FiniteWaitGetsAnItemArrivingInTime) {
  DeviceQueue q(6, 3, 2, "");
  std::thread producer([&] {
    std::this_thread::sleep_for(kSettle);
    EXPECT_TRUE(q.Enqueue(Token(5), 0).ok());
  });
  MbufPtr m;
  Status s = q.Dequeue(&m, 1500);
  producer.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m->head().trans_id, 5u);
}

TEST(DeviceQueueTest, ConsumerWakesBlockedProducer) {
  DeviceQueue q(8, 3, 1, "one");
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  std::atomic<bool> done{false};
  Status producer_status;
  std::thread producer([&] {
    producer_status = q.Enqueue(Token(2), -1);
    done = true;
  });
  std::this_thread::sleep_for(kSettle);
  EXPECT_FALSE(done.load()) << "the producer should block on a full queue";
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 1u);
  producer.join();
  EXPECT_TRUE(producer_status.ok()) << producer_status.ToString();
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 2u);
}

// WaitForRoom waits as Enqueue would, but adds nothing.
TEST(DeviceQueueTest, WaitForRoomWaitsForSpaceAndAddsNothing) {
  DeviceQueue q(11, 3, 1, "room");
  EXPECT_TRUE(q.WaitForRoom(0).ok()) << "an empty queue has room";
  EXPECT_EQ(q.Size(), 0u);
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  Status st = q.WaitForRoom(0);
  EXPECT_EQ(st.code(), StatusCode::kTimeout);
  EXPECT_THAT(st.ToString(), AllOf(HasSubstr("room"), HasSubstr("full")));
  auto t0 = Clock::now();
  st = q.WaitForRoom(40);
  EXPECT_EQ(st.code(), StatusCode::kTimeout);
  EXPECT_GE(Since(t0), milliseconds(40));
  // A consumer that makes room wakes the waiter.
  std::atomic<bool> done{false};
  Status waited;
  std::thread waiter([&] {
    waited = q.WaitForRoom(-1);
    done = true;
  });
  std::this_thread::sleep_for(kSettle);
  EXPECT_FALSE(done.load()) << "WaitForRoom returned on a full queue";
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  waiter.join();
  EXPECT_TRUE(waited.ok()) << waited.ToString();
  EXPECT_EQ(q.Size(), 0u);
  // Closing wakes a waiter with the reason.
  ASSERT_TRUE(q.Enqueue(Token(2), 0).ok());
  Status closed;
  std::thread closed_waiter([&] { closed = q.WaitForRoom(-1); });
  std::this_thread::sleep_for(kSettle);
  q.Close(Status::DeviceLost("device 3 lost"));
  closed_waiter.join();
  EXPECT_EQ(closed.code(), StatusCode::kDeviceLost) << closed.ToString();
}

// A room waiter passes on the wake a take gives it, so a producer parked
// on the same queue is not left asleep beside free room.
TEST(DeviceQueueTest, WaitForRoomPassesTheWakeOnToAParkedProducer) {
  DeviceQueue q(12, 3, 1, "shared");
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  Status room, put;
  // Bounded: when the producer takes the room before the waiter looks, the
  // queue is full again and the waiter rightly sees no room.
  std::thread waiter([&] { room = q.WaitForRoom(3000); });
  std::thread producer([&] { put = q.Enqueue(Token(2), 3000); });
  std::this_thread::sleep_for(kSettle);
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  waiter.join();
  producer.join();
  EXPECT_TRUE(put.ok()) << "the producer slept beside free room: "
                        << put.ToString();
  if (!room.ok()) {
    EXPECT_TRUE(room.IsTimeout()) << room.ToString();
    EXPECT_EQ(q.Size(), 1u) << "no room only because the producer filled it";
  }
}

TEST(DeviceQueueTest, EveryBlockedConsumerGetsOneItem) {
  DeviceQueue q(9, 3, 8, "");
  constexpr int kConsumers = 4;
  std::vector<std::thread> consumers;
  std::vector<uint64_t> got(kConsumers, 0);
  std::atomic<int> failures{0};
  for (int i = 0; i < kConsumers; ++i) {
    consumers.emplace_back([&, i] {
      MbufPtr m;
      if (q.Dequeue(&m, 1500).ok()) {
        got[i] = m->head().trans_id;
      } else {
        ++failures;
      }
    });
  }
  std::this_thread::sleep_for(kSettle);
  for (int i = 0; i < kConsumers; ++i) {
    ASSERT_TRUE(q.Enqueue(Token(100 + i), 0).ok());
  }
  for (auto& t : consumers) t.join();
  EXPECT_EQ(failures.load(), 0);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint64_t>{100, 101, 102, 103}));
}

TEST(DeviceQueueTest, CloseWakesAllWaitersWithTheFirstReason) {
  DeviceQueue full(10, 5, 1, "full");
  DeviceQueue empty(11, 5, 1, "empty");
  ASSERT_TRUE(full.Enqueue(Token(1), 0).ok());
  std::weak_ptr<Mbuf> queued;
  {
    MbufPtr t = Token(1);
    queued = t;
    ASSERT_TRUE(empty.Enqueue(t, 0).ok());
    MbufPtr back;
    ASSERT_TRUE(empty.Dequeue(&back, 0).ok());
  }
  // Re-fill `full` with a tracked token.
  MbufPtr tracked = Token(2);
  queued = tracked;
  MbufPtr first;
  ASSERT_TRUE(full.Dequeue(&first, 0).ok());
  ASSERT_TRUE(full.Enqueue(std::move(tracked), 0).ok());

  std::vector<std::future<Status>> waiters;
  for (int i = 0; i < 3; ++i) {
    waiters.push_back(std::async(std::launch::async, [&] {
      MbufPtr m;
      return empty.Dequeue(&m, -1);
    }));
    waiters.push_back(std::async(std::launch::async,
                                 [&] { return full.Enqueue(Token(3), -1); }));
  }
  std::this_thread::sleep_for(kSettle);
  auto t0 = Clock::now();
  empty.Close(Status::Cancelled("bye"));
  full.Close(Status::DeviceLost("gone"));
  full.Close(Status::Cancelled("second reason is ignored"));
  for (size_t i = 0; i < waiters.size(); ++i) {
    ASSERT_EQ(waiters[i].wait_for(kPrompt), std::future_status::ready) << i;
    Status s = waiters[i].get();
    if (i % 2 == 0) {
      EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
      EXPECT_THAT(
          s.message(),
          AllOf(HasSubstr("queue 11 ('empty') on device 5"), HasSubstr("bye")));
    } else {
      EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
      EXPECT_THAT(s.message(),
                  AllOf(HasSubstr("queue 10 ('full')"), HasSubstr("gone")));
    }
  }
  EXPECT_LT(Since(t0), kPrompt);
  EXPECT_TRUE(full.closed());
  EXPECT_TRUE(queued.expired()) << "queued mbufs are dropped on close";
  EXPECT_EQ(full.Size(), 0u);
  // Every later operation fails with the reason, even with timeout 0.
  MbufPtr m;
  EXPECT_EQ(full.Dequeue(&m, 0).code(), StatusCode::kDeviceLost);
  EXPECT_EQ(full.Enqueue(Token(4), 0).code(), StatusCode::kDeviceLost);
  EXPECT_EQ(empty.Dequeue(&m, 50).code(), StatusCode::kCancelled);
  EXPECT_EQ(empty.Enqueue(Token(4), -1).code(), StatusCode::kCancelled);
}

TEST(DeviceQueueTest, NullMbufIsRejected) {
  DeviceQueue q(12, 3, 1, "");
  Status s = q.Enqueue(nullptr, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("queue 12"));
  EXPECT_EQ(q.Size(), 0u);
}

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

// --- Through ExchangeService
// --------------------------------------------------

std::vector<int32_t> Sorted(std::vector<int32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class QueueServiceTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  // The first two devices of the set are used; the rest must stay untouched.
  std::vector<int32_t> devices_ = GetParam();
  std::shared_ptr<rt::SimRuntime> sim_ = MakeSim(Sorted(devices_));
  int32_t d0_ = devices_[0];
  int32_t d1_ = devices_[1];
  std::vector<int32_t> Unused() const {
    return {devices_.begin() + 2, devices_.end()};
  }
};

TEST_P(QueueServiceTest, FifoWithRealMbufs) {
  {
    ExchangeService svc(sim_.get());
    ASSERT_TRUE(svc.SubmitEventSync(d0_, CreateGroupRequest{"g", 1 << 20},
                                    nullptr, 5000)
                    .ok());
    uint32_t q = 0;
    ASSERT_TRUE(svc.CreateQueue(d0_, 4, "fifo", &q).ok());
    for (uint64_t i = 1; i <= 4; ++i) {
      MbufPtr m;
      ASSERT_TRUE(svc.AllocMbuf(d0_, "g", "deployer", 64, &m).ok());
      m->head().trans_id = i;
      ASSERT_TRUE(svc.Enqueue(q, std::move(m), 0).ok());
    }
    Status s = svc.Enqueue(q, Token(5, d0_), 0);
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
    for (uint64_t i = 1; i <= 4; ++i) {
      MbufPtr m;
      ASSERT_TRUE(svc.Dequeue(q, &m, 0).ok());
      EXPECT_EQ(m->head().trans_id, i);
      EXPECT_EQ(m->device(), d0_);
    }
    MbufPtr m;
    EXPECT_EQ(svc.Dequeue(q, &m, 0).code(), StatusCode::kTimeout);
    ASSERT_TRUE(svc.DestroyQueue(q).ok());
    ASSERT_TRUE(svc.DestroyGroup(d0_, "g").ok());
  }
  EXPECT_EQ(ContextsCreated(*sim_, Unused()), 0u);
  EXPECT_EQ(ImplicitBindings(*sim_, devices_), 0u);
  rt::DeviceStats st;
  ASSERT_TRUE(sim_->GetDeviceStats(d0_, &st).ok());
  EXPECT_EQ(st.mem_used_bytes, 0u);
  EXPECT_EQ(st.default_context_refs, 0);
}

TEST_P(QueueServiceTest, DepthZeroIsRejected) {
  ExchangeService svc(sim_.get());
  uint32_t q = 12345;
  Status s = svc.CreateQueue(d0_, 0, "zero", &q);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("depth"),
                                 HasSubstr("device " + std::to_string(d0_))));
  EXPECT_EQ(q, 12345u);
  EXPECT_TRUE(svc.Stats().empty());
}

TEST_P(QueueServiceTest, UnknownQueueIdsAreNotFound) {
  ExchangeService svc(sim_.get());
  MbufPtr m;
  for (uint32_t id : {0u, 1u, 999u}) {
    Status s = svc.Enqueue(id, Token(1, d0_), 0);
    EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("queue " + std::to_string(id)));
    EXPECT_EQ(svc.Dequeue(id, &m, 0).code(), StatusCode::kNotFound);
    EXPECT_EQ(svc.DestroyQueue(id).code(), StatusCode::kNotFound);
  }
  uint32_t q = 0;
  ASSERT_TRUE(svc.CreateQueue(d1_, 2, "", &q).ok());
  ASSERT_TRUE(svc.DestroyQueue(q).ok());
  EXPECT_EQ(svc.DestroyQueue(q).code(), StatusCode::kNotFound);
  EXPECT_EQ(svc.Enqueue(q, Token(1, d1_), 0).code(), StatusCode::kNotFound);
  EXPECT_EQ(svc.Dequeue(q, &m, -1).code(), StatusCode::kNotFound);
  // Ids are not reused.
  uint32_t q2 = 0;
  ASSERT_TRUE(svc.CreateQueue(d1_, 2, "", &q2).ok());
  EXPECT_NE(q2, q);
}

TEST_P(QueueServiceTest, TimeoutsThroughTheService) {
  ExchangeService svc(sim_.get());
  uint32_t q = 0;
  ASSERT_TRUE(svc.CreateQueue(d1_, 1, "t", &q).ok());
  MbufPtr m;
  auto t0 = Clock::now();
  Status s = svc.Dequeue(q, &m, 50);
  auto waited = Since(t0);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_GE(waited, milliseconds(50));
  EXPECT_LT(waited, milliseconds(2000));
  // -1 with a late producer on another, unbound thread.
  std::thread producer([&] {
    std::this_thread::sleep_for(kSettle);
    EXPECT_TRUE(svc.Enqueue(q, Token(9, d1_), 0).ok());
    EXPECT_EQ(sim_->GetCurrentContext(), nullptr);
  });
  s = svc.Dequeue(q, &m, -1);
  producer.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(m->head().trans_id, 9u);
}

TEST_P(QueueServiceTest, ConsumerWakesBlockedProducerThroughTheService) {
  ExchangeService svc(sim_.get());
  uint32_t q = 0;
  ASSERT_TRUE(svc.CreateQueue(d0_, 1, "", &q).ok());
  ASSERT_TRUE(svc.Enqueue(q, Token(1, d0_), 0).ok());
  auto producer = std::async(std::launch::async,
                             [&] { return svc.Enqueue(q, Token(2, d0_), -1); });
  EXPECT_EQ(producer.wait_for(kSettle), std::future_status::timeout);
  MbufPtr m;
  ASSERT_TRUE(svc.Dequeue(q, &m, 0).ok());
  ASSERT_EQ(producer.wait_for(kPrompt), std::future_status::ready);
  EXPECT_TRUE(producer.get().ok());
  ASSERT_TRUE(svc.Dequeue(q, &m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 2u);
}

TEST_P(QueueServiceTest, DestroyQueueWakesBlockedWaiters) {
  ExchangeService svc(sim_.get());
  uint32_t empty_q = 0, full_q = 0;
  ASSERT_TRUE(svc.CreateQueue(d0_, 2, "inbox", &empty_q).ok());
  ASSERT_TRUE(svc.CreateQueue(d1_, 1, "outbox", &full_q).ok());
  ASSERT_TRUE(svc.Enqueue(full_q, Token(1, d1_), 0).ok());
  auto consumer = std::async(std::launch::async, [&] {
    MbufPtr m;
    Status s = svc.Dequeue(empty_q, &m, -1);
    EXPECT_EQ(sim_->GetCurrentContext(), nullptr);
    return s;
  });
  auto producer = std::async(std::launch::async, [&] {
    return svc.Enqueue(full_q, Token(2, d1_), -1);
  });
  EXPECT_EQ(consumer.wait_for(kSettle), std::future_status::timeout);
  auto t0 = Clock::now();
  ASSERT_TRUE(svc.DestroyQueue(empty_q).ok());
  ASSERT_EQ(consumer.wait_for(kPrompt), std::future_status::ready);
  Status s = consumer.get();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("queue " + std::to_string(empty_q)),
                                 HasSubstr("'inbox'"),
                                 HasSubstr("device " + std::to_string(d0_))));
  EXPECT_EQ(producer.wait_for(milliseconds(0)), std::future_status::timeout)
      << "destroying another queue must not wake this one";
  ASSERT_TRUE(svc.DestroyQueue(full_q).ok());
  ASSERT_EQ(producer.wait_for(kPrompt), std::future_status::ready);
  s = producer.get();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("'outbox'"));
  EXPECT_LT(Since(t0), kPrompt);
}

TEST_P(QueueServiceTest, DeviceLossWakesBlockedConsumers) {
  ExchangeService svc(sim_.get());
  uint32_t lost_q = 0, other_q = 0;
  ASSERT_TRUE(svc.CreateQueue(d1_, 2, "doomed", &lost_q).ok());
  ASSERT_TRUE(svc.CreateQueue(d0_, 2, "fine", &other_q).ok());
  std::vector<std::future<Status>> consumers;
  for (int i = 0; i < 2; ++i) {
    consumers.push_back(std::async(std::launch::async, [&] {
      MbufPtr m;
      return svc.Dequeue(lost_q, &m, -1);
    }));
  }
  std::this_thread::sleep_for(kSettle);
  auto t0 = Clock::now();
  sim_->MarkDeviceLost(d1_);
  for (auto& c : consumers) {
    ASSERT_EQ(c.wait_for(kPrompt), std::future_status::ready);
    Status s = c.get();
    EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
    EXPECT_THAT(s.message(),
                AllOf(HasSubstr("'doomed'"),
                      HasSubstr("device " + std::to_string(d1_) + " is lost")));
  }
  EXPECT_LT(Since(t0), kPrompt);
  // The lost device's queue refuses work; the other device is unaffected.
  MbufPtr m;
  EXPECT_EQ(svc.Enqueue(lost_q, Token(1, d1_), 0).code(),
            StatusCode::kDeviceLost);
  ASSERT_TRUE(svc.Enqueue(other_q, Token(2, d0_), 0).ok());
  ASSERT_TRUE(svc.Dequeue(other_q, &m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 2u);
}

// Every ExchangeService call, from a fresh (unbound) thread, leaves it
// unbound; no context appears on devices outside the two used.
TEST_P(QueueServiceTest, EveryCallLeavesAFreshThreadUnbound) {
  {
    ExchangeService svc(sim_.get());
    RunOnFreshThread(
        [&] {
          auto unbound = [&](const char* after) {
            EXPECT_EQ(sim_->GetCurrentContext(), nullptr) << "after " << after;
          };
          ASSERT_TRUE(svc.SubmitEventSync(d0_, CreateGroupRequest{"a", 1 << 16},
                                          nullptr)
                          .ok());
          unbound("CreateGroup");
          ASSERT_TRUE(svc.SubmitEventSync(d1_, CreateGroupRequest{"b", 1 << 16},
                                          nullptr)
                          .ok());
          ASSERT_TRUE(svc.SubmitEventSync(d1_,
                                          AddGroupRequest{"b", "x", kPermAlloc},
                                          nullptr)
                          .ok());
          unbound("AddGroup");
          ASSERT_TRUE(svc.SubmitEventSync(
                             d1_, AllocCacheRequest{"b", 8192, 1024}, nullptr)
                          .ok());
          unbound("AllocCache");
          EventReply reply;
          ASSERT_TRUE(
              svc.SubmitEventSync(d0_, AllocMbufRequest{"a", 128}, &reply)
                  .ok());
          unbound("AllocMbuf event");
          MbufPtr direct;
          ASSERT_TRUE(svc.AllocMbuf(d0_, "a", "deployer", 128, &direct).ok());
          unbound("AllocMbuf");
          const char kMsg[] = "payload";
          ASSERT_TRUE(svc.WriteMbuf(direct, kMsg, sizeof(kMsg)).ok());
          unbound("WriteMbuf");
          char back[sizeof(kMsg)] = {};
          ASSERT_TRUE(svc.ReadMbuf(direct, back, sizeof(back)).ok());
          unbound("ReadMbuf");
          EXPECT_STREQ(back, kMsg);
          MbufPtr copy;
          ASSERT_TRUE(svc.CopyMbuf(direct, d1_, "b", "x", &copy).ok());
          unbound("CopyMbuf");
          uint32_t src = 0, dst = 0;
          ASSERT_TRUE(svc.CreateQueue(d0_, 2, "src", &src).ok());
          unbound("CreateQueue");
          ASSERT_TRUE(svc.CreateQueue(d1_, 2, "dst", &dst).ok());
          ASSERT_TRUE(svc.Enqueue(src, direct, 0).ok());
          unbound("Enqueue");
          ASSERT_TRUE(
              svc.SubmitEventSync(
                     d1_, CopyQMbufRequest{src, dst, "b", "x", 1000}, nullptr)
                  .ok());
          unbound("CopyQMbuf");
          MbufPtr got;
          ASSERT_TRUE(svc.Dequeue(dst, &got, 0).ok());
          unbound("Dequeue");
          ASSERT_TRUE(
              svc.SubmitEventSync(d0_, FreeMbufRequest{reply.mbuf}, nullptr)
                  .ok());
          unbound("FreeMbuf");
          // Events on one device run in order: this one also waits until the
          // agent has dropped the FreeMbuf event (and its reference).
          ASSERT_TRUE(svc.SubmitEventSync(
                             d0_, AddGroupRequest{"a", "y", kPermRead}, nullptr)
                          .ok());
          (void)svc.Stats();
          unbound("Stats");
          ASSERT_TRUE(svc.DestroyQueue(src).ok());
          ASSERT_TRUE(svc.DestroyQueue(dst).ok());
          unbound("DestroyQueue");
          reply.mbuf.reset();
          direct.reset();
          copy.reset();
          got.reset();
          unbound("releasing mbufs");
          ASSERT_TRUE(svc.DestroyGroup(d0_, "a").ok());
          ASSERT_TRUE(svc.DestroyGroup(d1_, "b").ok());
          unbound("DestroyGroup");
          // Failing calls too.
          EXPECT_FALSE(svc.DestroyQueue(999).ok());
          EXPECT_FALSE(
              svc.SubmitEventSync(d0_, AllocMbufRequest{"nope", 1}, nullptr)
                  .ok());
          unbound("failing calls");
        },
        "fresh-caller");
  }
  EXPECT_EQ(ContextsCreated(*sim_, Unused()), 0u);
  EXPECT_EQ(ImplicitBindings(*sim_, devices_), 0u);
  for (int32_t d : {d0_, d1_}) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim_->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, 0u) << d;
    EXPECT_EQ(st.live_allocations, 0u) << d;
    EXPECT_EQ(st.default_context_refs, 0) << d;
  }
}

// A caller bound to a user context of a device the service does not target
// gets exactly that context back after every call.
TEST_P(QueueServiceTest, CallerUserContextOfAnotherDeviceIsRestored) {
  const int32_t other = devices_.back();
  ExchangeService svc(sim_.get());
  RunOnFreshThread([&] {
    rt::Context* mine = nullptr;
    ASSERT_TRUE(sim_->CreateContext(other, &mine).ok());
    ASSERT_NE(mine, nullptr);
    auto still_mine = [&](const char* after) {
      EXPECT_EQ(sim_->GetCurrentContext(), mine) << "after " << after;
    };
    ASSERT_TRUE(
        svc.SubmitEventSync(d0_, CreateGroupRequest{"g", 1 << 16}, nullptr)
            .ok());
    still_mine("CreateGroup");
    ASSERT_TRUE(
        svc.SubmitEventSync(d0_, AllocCacheRequest{"g", 4096, 1024}, nullptr)
            .ok());
    still_mine("AllocCache");
    EventReply reply;
    ASSERT_TRUE(
        svc.SubmitEventSync(d0_, AllocMbufRequest{"g", 64}, &reply).ok());
    still_mine("AllocMbuf event");
    ASSERT_TRUE(
        svc.SubmitEventSync(d1_, CreateGroupRequest{"h", 1 << 16}, nullptr)
            .ok());
    uint32_t q = 0, q2 = 0;
    ASSERT_TRUE(svc.CreateQueue(d0_, 2, "q", &q).ok());
    still_mine("CreateQueue");
    ASSERT_TRUE(svc.CreateQueue(d1_, 2, "q2", &q2).ok());
    ASSERT_TRUE(svc.Enqueue(q, reply.mbuf, 0).ok());
    still_mine("Enqueue");
    ASSERT_TRUE(
        svc.SubmitEventSync(d1_, CopyQMbufRequest{q, q2, "h"}, nullptr).ok());
    still_mine("CopyQMbuf");
    MbufPtr m;
    ASSERT_TRUE(svc.Dequeue(q2, &m, 0).ok());
    still_mine("Dequeue");
    uint32_t v = 42;
    ASSERT_TRUE(svc.WriteMbuf(m, &v, sizeof(v)).ok());
    still_mine("WriteMbuf");
    ASSERT_TRUE(svc.ReadMbuf(m, &v, sizeof(v)).ok());
    still_mine("ReadMbuf");
    MbufPtr copy;
    ASSERT_TRUE(svc.CopyMbuf(m, d0_, "g", "deployer", &copy).ok());
    still_mine("CopyMbuf");
    ASSERT_TRUE(svc.AllocMbuf(d1_, "h", "deployer", 64, &m).ok());
    still_mine("AllocMbuf");
    ASSERT_TRUE(svc.DestroyQueue(q).ok());
    still_mine("DestroyQueue");
    EXPECT_EQ(svc.Dequeue(q, &m, 0).code(), StatusCode::kNotFound);
    still_mine("failed Dequeue");
    reply.mbuf.reset();
    m.reset();
    copy.reset();
    still_mine("releasing mbufs");
    ASSERT_TRUE(svc.DestroyGroup(d0_, "g").ok());
    still_mine("DestroyGroup");
    // And the context still works for its own device.
    void* p = nullptr;
    ASSERT_TRUE(sim_->Malloc(other, 64, &p).ok());
    ASSERT_TRUE(sim_->Free(other, p).ok());
    ASSERT_TRUE(sim_->DestroyContext(mine).ok());
  });
  EXPECT_EQ(ImplicitBindings(*sim_, devices_), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    DeviceSets, QueueServiceTest,
    ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                      std::vector<int32_t>{6, 3, 7},
                      std::vector<int32_t>{1, 2, 0, 3}),
    [](const ::testing::TestParamInfo<std::vector<int32_t>>& info) {
      std::string name = "Devices";
      for (int32_t d : info.param) name += "_" + std::to_string(d);
      return name;
    });

}  // namespace
}  // namespace services
}  // namespace hflow

namespace hflow {
namespace services {
namespace {

// DequeueUpTo takes what is there, oldest first, up to its max, in one go;
// taking the queue from full to not full fires on_space once.
TEST(DeviceQueueTest, DequeueUpToTakesWhatIsReadyInOrder) {
  DeviceQueue q(40, 3, 4, "batch");
  std::atomic<int> spaces{0};
  q.SetListeners(nullptr, [&] { ++spaces; });
  std::vector<MbufPtr> out;
  EXPECT_EQ(q.DequeueUpTo(8, &out), 0u);  // empty: nothing, no wait
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(q.Enqueue(Token(i), 0).ok());
  EXPECT_EQ(q.DequeueUpTo(3, &out), 3u);
  EXPECT_EQ(spaces.load(), 1);
  EXPECT_EQ(q.DequeueUpTo(8, &out), 1u);
  EXPECT_EQ(spaces.load(), 1) << "only the full -> not full step fires";
  ASSERT_EQ(out.size(), 4u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out[i]->head().trans_id, uint64_t(i));
  EXPECT_EQ(q.Size(), 0u);
  ASSERT_TRUE(q.Enqueue(Token(9), 0).ok());
  q.Close(Status::Cancelled("done"));
  EXPECT_EQ(q.DequeueUpTo(8, &out), 0u) << "a closed queue gives nothing";
}

}  // namespace
}  // namespace services
}  // namespace hflow
