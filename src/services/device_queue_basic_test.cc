// Unit tests of device queues (docs/architecture.md "Device-side services")
// used directly: bounded FIFO order; timeouts 0 / finite / -1; wake-ups on
// empty->not-empty and full->not-full; WaitForRoom; Close waking blocked
// waiters; null mbufs; DequeueUpTo.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
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

using device_queue_test::Clock;
using device_queue_test::kPrompt;
using device_queue_test::kSettle;
using device_queue_test::Since;
using device_queue_test::Token;
using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::HasSubstr;

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

TEST(DeviceQueueTest, ReopenServesAgainEmptyAfterClose) {
  DeviceQueue q(13, 3, 2, "reset");
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  q.Close(Status::Cancelled("the graph is being reset"));
  MbufPtr m;
  EXPECT_EQ(q.Dequeue(&m, 0).code(), StatusCode::kCancelled);
  q.Reopen();
  EXPECT_FALSE(q.closed());
  EXPECT_EQ(q.Size(), 0u) << "what was queued went with the close";
  EXPECT_EQ(q.Dequeue(&m, 0).code(), StatusCode::kTimeout);
  ASSERT_TRUE(q.Enqueue(Token(7), 0).ok());
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 7u);
  q.Reopen();  // open already: nothing changes
  EXPECT_FALSE(q.closed());
}

// A close that keeps what is queued (a failed graph's outputs): takes go
// on until the queue is empty, then answer the reason; nothing new goes
// in; a taken message may be put back; a reopen drops what is left.
TEST(DeviceQueueTest, AKeptCloseServesWhatIsQueuedThenTheReason) {
  DeviceQueue q(14, 3, 4, "outputs");
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(q.Enqueue(Token(i), 0).ok());
  q.Close(Status::Internal("a worker died"), /*keep_queued=*/true);
  EXPECT_TRUE(q.closed());
  EXPECT_EQ(q.Size(), 3u);
  EXPECT_EQ(q.Enqueue(Token(4), 0).code(), StatusCode::kInternal);
  MbufPtr m;
  ASSERT_TRUE(q.Dequeue(&m, -1).ok());
  EXPECT_EQ(m->head().trans_id, 1u);
  ASSERT_TRUE(q.Return(std::move(m)).ok()) << "put back, not lost";
  std::vector<MbufPtr> out;
  EXPECT_EQ(q.DequeueUpTo(2, &out), 2u);
  EXPECT_EQ(out[0]->head().trans_id, 1u);
  EXPECT_EQ(out[1]->head().trans_id, 2u);
  ASSERT_TRUE(q.Dequeue(&m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 3u);
  Status s = q.Dequeue(&m, -1);  // empty: the reason at once, no wait
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_THAT(s.message(), ::testing::HasSubstr("a worker died"));
  EXPECT_EQ(q.DequeueUpTo(2, &out), 0u);
  // A second close changes nothing; a reopen starts empty.
  ASSERT_TRUE(q.Return(Token(9)).ok());
  q.Close(Status::Cancelled("ignored"));
  EXPECT_EQ(q.Size(), 1u);
  q.Reopen();
  EXPECT_EQ(q.Size(), 0u);
  EXPECT_EQ(q.Dequeue(&m, 0).code(), StatusCode::kTimeout);
}

}  // namespace
}  // namespace services
}  // namespace hflow
