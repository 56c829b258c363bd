// Unit tests of OVERWRITE device queues (GE's enqueue policy "OVERWRITE"):
// an enqueue into a full queue drops the oldest message, releases its mbuf
// and counts it, and never waits; PushOverDepth keeps the depth the same
// way; WaitForRoom returns at once; a FIFO queue of the same depth still
// refuses (the control). Through the exchange service with real mbufs on
// a device other than 0: the dropped messages' memory returns to the
// group and the drops show in the service's stats.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "services/device_queue.h"
#include "services/device_queue_test_util.h"
#include "services/exchange_service.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace {

using device_queue_test::Token;

std::vector<uint64_t> Drain(DeviceQueue& q) {
  std::vector<uint64_t> ids;
  MbufPtr m;
  while (q.Dequeue(&m, 0).ok()) ids.push_back(m->head().trans_id);
  return ids;
}

TEST(DeviceQueueOverwriteTest, FullQueueDropsTheOldestAndNeverWaits) {
  DeviceQueue q(1, 3, 2, "ow", QueuePolicy::kOverwrite);
  EXPECT_TRUE(q.overwrite());
  MbufPtr first = Token(1);
  std::weak_ptr<Mbuf> first_alive = first;
  ASSERT_TRUE(q.Enqueue(std::move(first), 0).ok());
  // Timeout 0 on a full queue: a FIFO queue would answer kTimeout.
  for (uint64_t i = 2; i <= 5; ++i) {
    Status s = q.Enqueue(Token(i), 0);
    ASSERT_TRUE(s.ok()) << i << ": " << s.ToString();
    EXPECT_EQ(q.Size(), std::min<uint64_t>(i, 2));
  }
  EXPECT_TRUE(first_alive.expired()) << "the dropped mbuf was not released";
  EXPECT_EQ(q.dropped(), 3u);
  EXPECT_EQ(Drain(q), (std::vector<uint64_t>{4, 5}));
}

TEST(DeviceQueueOverwriteTest, PushOverDepthKeepsTheDepth) {
  DeviceQueue q(1, 3, 3, "ow", QueuePolicy::kOverwrite);
  for (uint64_t i = 1; i <= 10; ++i)
    ASSERT_TRUE(q.PushOverDepth(Token(i)).ok());
  EXPECT_EQ(q.Size(), 3u);
  EXPECT_EQ(q.dropped(), 7u);
  EXPECT_EQ(Drain(q), (std::vector<uint64_t>{8, 9, 10}));
}

TEST(DeviceQueueOverwriteTest, WaitForRoomAnswersAtOnce) {
  DeviceQueue q(1, 3, 2, "ow", QueuePolicy::kOverwrite);
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  ASSERT_TRUE(q.Enqueue(Token(2), 0).ok());
  EXPECT_TRUE(q.WaitForRoom(0).ok());
  q.Close(Status::Cancelled("test"));
  EXPECT_EQ(q.WaitForRoom(0).code(), StatusCode::kCancelled);
  EXPECT_EQ(q.Enqueue(Token(3), 0).code(), StatusCode::kCancelled);
}

TEST(DeviceQueueOverwriteTest, FifoQueueStillRefusesAndDropsNothing) {
  DeviceQueue q(1, 3, 2, "fifo");
  EXPECT_FALSE(q.overwrite());
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  ASSERT_TRUE(q.Enqueue(Token(2), 0).ok());
  EXPECT_EQ(q.Enqueue(Token(3), 0).code(), StatusCode::kTimeout);
  EXPECT_EQ(q.WaitForRoom(0).code(), StatusCode::kTimeout);
  EXPECT_EQ(q.dropped(), 0u);
  EXPECT_EQ(Drain(q), (std::vector<uint64_t>{1, 2}));
}

// A message put back (Return) over the depth is not kept past it either.
TEST(DeviceQueueOverwriteTest, ReturnThenEnqueueStaysWithinTheDepth) {
  DeviceQueue q(1, 3, 2, "ow", QueuePolicy::kOverwrite);
  ASSERT_TRUE(q.Enqueue(Token(1), 0).ok());
  ASSERT_TRUE(q.Enqueue(Token(2), 0).ok());
  ASSERT_TRUE(q.Return(Token(0)).ok());
  ASSERT_EQ(q.Size(), 3u);
  ASSERT_TRUE(q.Enqueue(Token(3), 0).ok());
  EXPECT_EQ(Drain(q), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(q.dropped(), 2u);
}

TEST(DeviceQueueOverwriteTest, DropsReleaseGroupMemoryThroughTheService) {
  auto sim = ::hflow::testing::MakeSim({3, 6, 7});
  ExchangeService svc(sim.get());
  ASSERT_TRUE(
      svc.SubmitEventSync(6, CreateGroupRequest{"g", 1 << 20}, nullptr, 5000)
          .ok());
  uint32_t q = 0;
  ASSERT_TRUE(svc.CreateQueue(6, 2, "ow", &q, QueuePolicy::kOverwrite).ok());
  for (uint64_t i = 1; i <= 6; ++i) {
    MbufPtr m;
    ASSERT_TRUE(svc.AllocMbuf(6, "g", "deployer", 4096, &m).ok());
    m->head().trans_id = i;
    ASSERT_TRUE(svc.Enqueue(q, std::move(m), 0).ok()) << i;
  }
  std::vector<DeviceServiceStats> stats = svc.Stats();
  ASSERT_EQ(stats.size(), 1u);
  EXPECT_EQ(stats[0].device, 6);
  EXPECT_EQ(stats[0].live_mbufs, 2u) << "dropped mbufs still hold memory";
  EXPECT_EQ(stats[0].dropped_msgs, 4u);
  MbufPtr m;
  ASSERT_TRUE(svc.Dequeue(q, &m, 0).ok());
  EXPECT_EQ(m->head().trans_id, 5u);
  m.reset();
  ASSERT_TRUE(svc.DestroyQueue(q).ok());
  ASSERT_TRUE(svc.DestroyGroup(6, "g").ok());
}

}  // namespace
}  // namespace services
}  // namespace hflow
