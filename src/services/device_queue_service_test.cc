// Unit tests of device queues (docs/architecture.md "Device-side services")
// through ExchangeService, for several device sets: FIFO with real mbufs;
// depth 0 and unknown ids; timeouts and wake-ups; DestroyQueue and device
// loss waking blocked waiters; and the binding contract of every call (fresh
// threads stay unbound; a caller's user context of another device is
// restored exactly).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
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
using ::hflow::testing::ContextsCreated;
using ::hflow::testing::ImplicitBindings;
using ::hflow::testing::MakeSim;
using ::hflow::testing::RunOnFreshThread;
using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::HasSubstr;

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
