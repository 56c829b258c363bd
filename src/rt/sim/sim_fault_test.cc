// Unit tests of the sim's observability: fault injection (Nth call of an
// op, any op), device loss with listeners, the call log and latency.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "rt/sim/sim_runtime.h"
#include "test_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace rt {
namespace {

using ::hflow::testing::MakeSim;
using ::hflow::testing::RunOnFreshThread;
using ::testing::HasSubstr;

TEST(SimFaultTest, NthCallOfAnOpFailsWithTheChosenError) {
  auto sim = MakeSim({2, 3});
  sim->InjectFault(Op::kMalloc, 3, Status::OutOfMemory("boom"));
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());
    void* p[4] = {};
    ASSERT_TRUE(sim->Malloc(2, 8, &p[0]).ok());
    ASSERT_TRUE(sim->Malloc(2, 8, &p[1]).ok());
    Status s = sim->Malloc(2, 8, &p[2]);
    EXPECT_EQ(s.code(), StatusCode::kOutOfMemory);
    EXPECT_THAT(s.message(), HasSubstr("Malloc (injected fault): boom"));
    EXPECT_EQ(p[2], nullptr);
    ASSERT_TRUE(sim->Malloc(2, 8, &p[3]).ok());  // one-shot
    DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(2, &st).ok());
    EXPECT_EQ(st.live_allocations, 3u);  // the failed call allocated nothing
    for (void* q : {p[0], p[1], p[3]}) ASSERT_TRUE(sim->Free(2, q).ok());
    ASSERT_TRUE(sim->ResetDevice(2).ok());
  });
}

TEST(SimFaultTest, FailedBindingCallsLeaveNothingBound) {
  auto sim = MakeSim({2, 3});
  sim->InjectFault(Op::kSetDevice, 1, Status::DeviceLost("gone"));
  sim->InjectFault(Op::kCreateContext, 1, Status::OutOfMemory("full"));
  RunOnFreshThread([&] {
    EXPECT_EQ(sim->SetDevice(3).code(), StatusCode::kDeviceLost);
    EXPECT_EQ(sim->GetCurrentContext(), nullptr);
    Context* c = nullptr;
    EXPECT_EQ(sim->CreateContext(3, &c).code(), StatusCode::kOutOfMemory);
    EXPECT_EQ(c, nullptr);
    EXPECT_EQ(sim->GetCurrentContext(), nullptr);
  });
  DeviceStats st;
  ASSERT_TRUE(sim->GetDeviceStats(3, &st).ok());
  EXPECT_EQ(st.contexts_created, 0u);
  EXPECT_EQ(st.default_context_refs, 0);
}

TEST(SimFaultTest, AnyOpCountsEveryFaultableCall) {
  auto sim = MakeSim({2});
  sim->SetCountCalls(true);
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());  // 1
    void* p;
    ASSERT_TRUE(sim->Malloc(2, 8, &p).ok());            // 2
    ASSERT_TRUE(sim->SetCurrentContext(nullptr).ok());  // not faultable
    ASSERT_TRUE(sim->SetDevice(2).ok());                // 3
    ASSERT_TRUE(sim->Free(2, p).ok());                  // 4
  });
  EXPECT_EQ(sim->CallCount(), 4u);
  EXPECT_EQ(sim->CallCount(Op::kSetDevice), 2u);
  EXPECT_EQ(sim->CallCount(Op::kSetCurrentContext), 1u);
  // Sweep: failing the k-th call fails exactly that call.
  for (uint64_t k = 1; k <= 3; ++k) {
    auto s2 = MakeSim({2});
    s2->InjectFault(kAnyOp, k, Status::Internal("k"));
    RunOnFreshThread([&] {
      int failed_at = 0;
      int call = 0;
      void* p = nullptr;
      if (++call && !s2->SetDevice(2).ok() && !failed_at) failed_at = call;
      if (++call && !s2->Malloc(2, 8, &p).ok() && !failed_at) failed_at = call;
      if (++call && !s2->Synchronize(2).ok() && !failed_at) failed_at = call;
      EXPECT_EQ(failed_at, static_cast<int>(k));
    });
  }
}

TEST(SimFaultTest, DeviceLossFailsCallsAndNotifiesListeners) {
  auto sim = MakeSim({2, 3, 4, 5});
  int notified = -1;
  int id = sim->AddDeviceLostListener([&](int32_t d) { notified = d; });
  void* p = nullptr;
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(4).ok());
    ASSERT_TRUE(sim->Malloc(4, 64, &p).ok());
    sim->MarkDeviceLost(4);
    EXPECT_EQ(notified, 4);
    void* q = nullptr;
    Status s = sim->Malloc(4, 64, &q);
    EXPECT_EQ(s.code(), StatusCode::kDeviceLost);
    EXPECT_THAT(s.message(), HasSubstr("device 4"));
    EXPECT_EQ(q, nullptr);
    EXPECT_EQ(sim->Synchronize(4).code(), StatusCode::kDeviceLost);
    EXPECT_EQ(sim->SetDevice(4).code(), StatusCode::kDeviceLost);
    // Cleanup still returns the memory (Note [Free on a lost device]).
    EXPECT_TRUE(sim->Free(4, p).ok());
    ASSERT_TRUE(sim->ResetDevice(4).ok());
    // Other devices are unaffected.
    ASSERT_TRUE(sim->SetDevice(5).ok());
    EXPECT_TRUE(sim->Synchronize(5).ok());
    ASSERT_TRUE(sim->ResetDevice(5).ok());
  });
  DeviceStats st;
  ASSERT_TRUE(sim->GetDeviceStats(4, &st).ok());
  EXPECT_TRUE(st.lost);
  EXPECT_EQ(st.mem_used_bytes, 0u);
  EXPECT_EQ(st.contexts_alive, 0u);
  sim->RemoveDeviceLostListener(id);
}

TEST(SimFaultTest, CallLogNamesThreadDeviceAndBoundContext) {
  auto sim = MakeSim({0, 1, 2, 3});
  sim->SetRecordCalls(true);
  RunOnFreshThread(
      [&] {
        void* p = nullptr;
        (void)sim->Malloc(2, 8, &p);  // unbound: fails
        ASSERT_TRUE(sim->SetDevice(2).ok());
        ASSERT_TRUE(sim->Malloc(2, 8, &p).ok());
        ASSERT_TRUE(sim->Free(2, p).ok());
        ASSERT_TRUE(sim->ResetDevice(2).ok());
      },
      "deploy-pool-1");
  RunOnFreshThread([&] { (void)sim->Synchronize(0); }, "lucky");
  auto log = sim->CallLog();
  ASSERT_EQ(log.size(), 6u);
  EXPECT_EQ(log[0].thread, "deploy-pool-1");
  EXPECT_EQ(log[0].op, Op::kMalloc);
  EXPECT_EQ(log[0].device, 2);
  EXPECT_EQ(log[0].bound_context, 0);
  EXPECT_EQ(log[0].result, StatusCode::kNoContext);
  EXPECT_EQ(log[2].bound_device, 2);
  EXPECT_EQ(log[2].result, StatusCode::kOk);
  EXPECT_LT(log[0].seq, log[1].seq);
  EXPECT_EQ(log[5].thread, "lucky");
  EXPECT_TRUE(log[5].implicit_binding);
  EXPECT_EQ(log[5].bound_context, 0);  // entry state: unbound
  sim->ClearCallLog();
  EXPECT_TRUE(sim->CallLog().empty());
}

TEST(SimFaultTest, OpLatencyIsModelled) {
  auto sim = MakeSim({2});
  sim->SetOpLatency(Op::kModelLoad, std::chrono::milliseconds(20));
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(sim->DriverCall(2, Op::kModelLoad).ok());
    EXPECT_GE(std::chrono::steady_clock::now() - t0,
              std::chrono::milliseconds(20));
    ASSERT_TRUE(sim->ResetDevice(2).ok());
  });
}

TEST(SimFaultTest, DriverCallsCheckBindingLikeMemoryOps) {
  auto sim = MakeSim({2, 3, 4, 5});
  RunOnFreshThread([&] {
    Status s = sim->DriverCall(3, Op::kEventSubmit);
    EXPECT_EQ(s.code(), StatusCode::kNoContext);
    EXPECT_THAT(s.message(), HasSubstr("EventSubmit on device 3"));
    ASSERT_TRUE(sim->SetDevice(3).ok());
    EXPECT_TRUE(sim->DriverCall(3, Op::kEventSubmit).ok());
    EXPECT_EQ(sim->DriverCall(4, Op::kQueueDestroy).code(),
              StatusCode::kContextMismatch);
    ASSERT_TRUE(sim->ResetDevice(3).ok());
  });
}

}  // namespace
}  // namespace rt
}  // namespace hflow
