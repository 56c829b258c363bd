// Unit tests of memory back-pressure in MemoryGroup (Note [Waiting for
// memory] and Note [Block sizes] in memory_group.cc): an allocation the
// caches cannot serve waits until a block is freed, up to its timeout; a
// size over the max alloc size fails at once; large blocks are sized
// exactly; keep_free leaves a reserve; CancelWaits ends waits; the peak of
// bytes in use is tracked. On devices without 0 (3, 5).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <vector>

#include "rt/device_binding.h"
#include "services/exchange_service.h"
#include "services/memory_group.h"
#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace {

using ::hflow::testing::MakeGroup;
using ::hflow::testing::MakeSim;
using ::hflow::testing::WaitFor;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr uint64_t kMiB = 1 << 20;

class MemoryGroupWaitTest : public ::testing::Test {
 protected:
  // Device 3, a pool of 3 MiB serving messages up to 1 MiB.
  void SetUp() override { MakeGroup(svc_, 3, "g", 8 * kMiB, 3 * kMiB, kMiB); }
  std::shared_ptr<MemoryGroup> Group() {
    std::shared_ptr<MemoryGroup> g;
    EXPECT_TRUE(svc_.OpenGroup(3, "g", &g).ok());
    return g;
  }
  // Fills the pool with three 1 MiB messages.
  std::vector<MbufPtr> Fill() {
    std::vector<MbufPtr> held(3);
    for (auto& m : held) {
      Status s = svc_.AllocMbuf(3, "g", "deployer", kMiB, &m);
      EXPECT_TRUE(s.ok()) << s.ToString();
    }
    return held;
  }
  Status AllocAsync(int32_t timeout_ms, MbufPtr* out) {
    return svc_.AllocMbuf(3, "g", "deployer", kMiB, out,
                          AllocWait{timeout_ms, 0});
  }

  std::shared_ptr<rt::SimRuntime> sim_ = MakeSim({3, 5});
  ExchangeService svc_{sim_.get()};
};

TEST_F(MemoryGroupWaitTest, WaitingAllocationIsWokenByAFree) {
  std::vector<MbufPtr> held = Fill();
  MbufPtr got;
  auto waiter =
      std::async(std::launch::async, [&] { return AllocAsync(-1, &got); });
  ASSERT_TRUE(WaitFor([&] { return Group()->Stats().waiting_allocs == 1; }))
      << "the allocation should be waiting";
  void* freed = held[1]->data();
  held[1].reset();
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  Status s = waiter.get();
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got->data(), freed);
  EXPECT_EQ(Group()->Stats().waiting_allocs, 0u);
}

TEST_F(MemoryGroupWaitTest, WaitEndsWithTimeoutNamingTheSizes) {
  std::vector<MbufPtr> held = Fill();
  MbufPtr m;
  const auto t0 = Clock::now();
  Status s = AllocAsync(60, &m);
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(60));
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("'g' on device 3"), HasSubstr("1048576 bytes"),
                    HasSubstr("3145728 of 3145728 bytes in use by 3 mbufs"),
                    HasSubstr("60 ms")));
  EXPECT_EQ(m, nullptr);
  // 0 tries once: the old immediate error.
  s = AllocAsync(0, &m);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("exhausted"));
}

TEST_F(MemoryGroupWaitTest, OverTheMaxAllocSizeFailsAtOnceNotAWait) {
  MbufPtr m;
  const auto t0 = Clock::now();
  Status s = svc_.AllocMbuf(3, "g", "deployer", kMiB + 1, &m, AllocWait{-1, 0});
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("1048577 bytes"),
                                 HasSubstr("max alloc size 1048576")));
  // A reserve the request could never fit beside is refused at once too.
  s = svc_.AllocMbuf(3, "g", "deployer", kMiB, &m, AllocWait{-1, 2 * kMiB + 1});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("never fit"));
}

TEST_F(MemoryGroupWaitTest, LargeBlocksAreNotRoundedToAPowerOfTwo) {
  // 1 MiB payloads plus alignment slack: rounded to 2 MiB only one fits a
  // 3 MiB pool; sized exactly (to 4 KiB), two do.
  MakeGroup(svc_, 5, "exact", 8 * kMiB, 3 * kMiB, 2 * kMiB);
  MbufPtr a, b;
  ASSERT_TRUE(svc_.AllocMbuf(5, "exact", "deployer", kMiB + 64, &a).ok());
  Status s = svc_.AllocMbuf(5, "exact", "deployer", kMiB + 64, &b);
  ASSERT_TRUE(s.ok()) << s.ToString();
  GroupStats st = a->group()->Stats();
  EXPECT_EQ(st.in_use_bytes, 2 * (kMiB + 4096));
  // Small sizes keep their power-of-two classes.
  MbufPtr c;
  ASSERT_TRUE(svc_.AllocMbuf(5, "exact", "deployer", 1000, &c).ok());
  EXPECT_EQ(a->group()->Stats().in_use_bytes, 2 * (kMiB + 4096) + 1024);
}

TEST_F(MemoryGroupWaitTest, FreedSmallBlocksMergeToServeALargeOne) {
  // 1 MiB of 64-byte blocks, all freed but one (so the cache does not
  // start afresh): a 1 MiB - 4 KiB block still fits, once the listed small
  // blocks go back to the ranges.
  std::vector<MbufPtr> small(kMiB / 64 * 3);
  for (auto& m : small) {
    ASSERT_TRUE(svc_.AllocMbuf(3, "g", "deployer", 64, &m).ok());
  }
  MbufPtr keep = small.back();
  small.clear();
  MbufPtr big;
  Status s = svc_.AllocMbuf(3, "g", "deployer", kMiB - 4096, &big);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(MemoryGroupWaitTest, KeepFreeLeavesAReserveForOthers) {
  MbufPtr a, b, c;
  const AllocWait feed{0, kMiB};
  ASSERT_TRUE(svc_.AllocMbuf(3, "g", "deployer", kMiB, &a, feed).ok());
  ASSERT_TRUE(svc_.AllocMbuf(3, "g", "deployer", kMiB, &b, feed).ok());
  Status s = svc_.AllocMbuf(3, "g", "deployer", kMiB, &c, feed);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("1048576 kept free"));
  // The reserve is there for an allocation that keeps nothing free.
  s = svc_.AllocMbuf(3, "g", "deployer", kMiB, &c);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(MemoryGroupWaitTest, CancelWaitsEndsWaitsNowAndLater) {
  std::vector<MbufPtr> held = Fill();
  MbufPtr got;
  auto waiter =
      std::async(std::launch::async, [&] { return AllocAsync(-1, &got); });
  ASSERT_TRUE(WaitFor([&] { return Group()->Stats().waiting_allocs == 1; }));
  Group()->CancelWaits(Status::Cancelled("the graph is stopping"));
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  Status s = waiter.get();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_EQ(got, nullptr);
  s = AllocAsync(-1, &got);
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << "a later wait ends at once";
  held.pop_back();
  EXPECT_TRUE(AllocAsync(-1, &got).ok()) << "needing no wait still works";
}

TEST_F(MemoryGroupWaitTest, ResumeWaitsLetsWaitsWaitAgain) {
  std::vector<MbufPtr> held = Fill();
  MbufPtr got;
  Group()->CancelWaits(Status::Cancelled("the graph is being reset"));
  EXPECT_EQ(AllocAsync(1000, &got).code(), StatusCode::kCancelled);
  Group()->ResumeWaits();
  auto waiter =
      std::async(std::launch::async, [&] { return AllocAsync(-1, &got); });
  ASSERT_TRUE(WaitFor([&] { return Group()->Stats().waiting_allocs == 1; }))
      << "the wait waits again";
  held.pop_back();
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  EXPECT_TRUE(waiter.get().ok());
  EXPECT_NE(got, nullptr);
}

TEST_F(MemoryGroupWaitTest, PeakCountsBlocksInUseNotThePool) {
  {
    std::vector<MbufPtr> held = Fill();
    held.pop_back();
  }
  MbufPtr m;
  ASSERT_TRUE(svc_.AllocMbuf(3, "g", "deployer", 1000, &m).ok());
  GroupStats st = Group()->Stats();
  EXPECT_EQ(st.peak_in_use_bytes, 3 * kMiB);
  EXPECT_EQ(st.in_use_bytes, 1024u);
  EXPECT_EQ(st.reserved_bytes, 3 * kMiB);
}

}  // namespace
}  // namespace services
}  // namespace hflow
