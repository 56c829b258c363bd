// Unit tests of ExchangeService's proof-of-binding queue operations
// (Note [One driver call per queue operation]): on a thread bound to the
// queue's device they make the one driver call and no binding call, fault
// injection still reaches that call, and a proof of another device is
// refused with nothing taken or queued.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "hflow/rt.h"
#include "services/exchange_service.h"
#include "services/exchange_service_test_util.h"
#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace {

using exchange_service_test::ExchangeServiceTest;
using ::hflow::testing::MakeGroup;
using ::hflow::testing::RunOnFreshThread;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<rt::Op> Ops(const std::vector<rt::CallRecord>& log) {
  std::vector<rt::Op> ops;
  for (const auto& r : log) ops.push_back(r.op);
  return ops;
}

struct QueueOnDevice {
  uint32_t id = 0;
  std::shared_ptr<DeviceQueue> q;
};

QueueOnDevice MakeQueue(ExchangeService& svc, int32_t device) {
  QueueOnDevice out;
  EXPECT_TRUE(svc.CreateQueue(device, 4, "q", &out.id).ok());
  EXPECT_TRUE(svc.OpenQueue(out.id, &out.q).ok());
  return out;
}

TEST_F(ExchangeServiceTest, BoundQueueOpsMakeOneDriverCallEach) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "g", 1 << 16, 4096, 1024);
  QueueOnDevice q = MakeQueue(svc, 3);
  RunOnFreshThread([&] {
    rt::ScopedDevice bound(svc.contexts(), 3, rt::ScopedDevice::OnExit::kKeep);
    ASSERT_TRUE(bound.status().ok());
    ASSERT_TRUE(bound.Current());
    MbufPtr m;
    ASSERT_TRUE(svc.AllocMbuf(3, "g", "deployer", 64, &m).ok());
    sim_->SetRecordCalls(true);
    ASSERT_TRUE(svc.EnqueueOverDepth(bound, *q.q, m).ok());
    MbufPtr got;
    ASSERT_TRUE(svc.Dequeue(bound, *q.q, &got, 0).ok());
    EXPECT_EQ(got, m);
    const auto log = sim_->CallLog();
    sim_->SetRecordCalls(false);
    EXPECT_EQ(Ops(log), (std::vector<rt::Op>{rt::Op::kQueueEnqueue,
                                             rt::Op::kQueueDequeue}));
    for (const auto& r : log) {
      EXPECT_EQ(r.bound_device, 3);
      EXPECT_FALSE(r.implicit_binding);
      EXPECT_EQ(r.result, StatusCode::kOk);
    }
  });
}

// The plain calls on a thread bound elsewhere switch to the queue's device
// and back: the proof overloads exist to skip exactly that.
TEST_F(ExchangeServiceTest, UnboundQueueOpsSwitchAndRestore) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "g", 1 << 16, 4096, 1024);
  QueueOnDevice q = MakeQueue(svc, 3);
  RunOnFreshThread([&] {
    rt::ScopedDevice elsewhere(svc.contexts(), 4);
    ASSERT_TRUE(elsewhere.status().ok());
    MbufPtr m;
    ASSERT_TRUE(svc.AllocMbuf(3, "g", "deployer", 64, &m).ok());
    sim_->SetRecordCalls(true);
    ASSERT_TRUE(svc.EnqueueOverDepth(*q.q, m).ok());
    const auto log = sim_->CallLog();
    sim_->SetRecordCalls(false);
    EXPECT_EQ(Ops(log), (std::vector<rt::Op>{rt::Op::kSetCurrentContext,
                                             rt::Op::kQueueEnqueue,
                                             rt::Op::kSetCurrentContext}));
    EXPECT_TRUE(elsewhere.Current());  // the caller's binding is back
  });
}

TEST_F(ExchangeServiceTest, BoundQueueOpsReachInjectedFaults) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "g", 1 << 16, 4096, 1024);
  QueueOnDevice q = MakeQueue(svc, 3);
  RunOnFreshThread([&] {
    rt::ScopedDevice bound(svc.contexts(), 3, rt::ScopedDevice::OnExit::kKeep);
    MbufPtr m;
    ASSERT_TRUE(svc.AllocMbuf(3, "g", "deployer", 64, &m).ok());
    sim_->InjectFault(rt::Op::kQueueEnqueue, 1, Status::Internal("injected"));
    Status s = svc.EnqueueOverDepth(bound, *q.q, m);
    EXPECT_THAT(s.message(), HasSubstr("injected"));
    EXPECT_EQ(q.q->Size(), 0u);
    ASSERT_TRUE(svc.EnqueueOverDepth(bound, *q.q, m).ok());
    sim_->InjectFault(rt::Op::kQueueDequeue, 1, Status::Internal("injected"));
    MbufPtr got;
    s = svc.Dequeue(bound, *q.q, &got, 0);
    EXPECT_THAT(s.message(), HasSubstr("injected"));
    EXPECT_EQ(got, nullptr);
    EXPECT_EQ(q.q->Size(), 1u);  // nothing lost
    sim_->ClearFaults();
  });
}

TEST_F(ExchangeServiceTest, ProofOfAnotherDeviceIsRefused) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "g", 1 << 16, 4096, 1024);
  QueueOnDevice q = MakeQueue(svc, 3);
  RunOnFreshThread([&] {
    MbufPtr m;
    ASSERT_TRUE(svc.AllocMbuf(3, "g", "deployer", 64, &m).ok());
    rt::ScopedDevice wrong(svc.contexts(), 5, rt::ScopedDevice::OnExit::kKeep);
    ASSERT_TRUE(wrong.status().ok());
    Status s = svc.EnqueueOverDepth(wrong, *q.q, m);
    EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
    EXPECT_THAT(s.message(),
                AllOf(HasSubstr("device 3"), HasSubstr("device 5")));
    EXPECT_EQ(q.q->Size(), 0u);
    ASSERT_TRUE(svc.EnqueueOverDepth(*q.q, m).ok());
    MbufPtr got;
    EXPECT_EQ(svc.Dequeue(wrong, *q.q, &got, 0).code(), StatusCode::kInternal);
    EXPECT_EQ(q.q->Size(), 1u);
  });
}

// Current() is what a caller checks before using a kKeep scope as proof: a
// UDF may have switched the thread since.
TEST_F(ExchangeServiceTest, ScopeIsNotCurrentAfterASwitch) {
  ExchangeService svc(sim_.get());
  RunOnFreshThread([&] {
    rt::ScopedDevice bound(svc.contexts(), 3, rt::ScopedDevice::OnExit::kKeep);
    ASSERT_TRUE(bound.Current());
    ASSERT_TRUE(sim_->SetDevice(4).ok());  // as a UDF might
    EXPECT_FALSE(bound.Current());
    ASSERT_TRUE(bound.Reassert().ok());
    EXPECT_TRUE(bound.Current());
  });
}

}  // namespace
}  // namespace services
}  // namespace hflow
