// Unit tests of ExchangeService (docs/architecture.md "Device-side
// services"), the events: sub-event names; the six proxy events through
// SubmitEventSync; CopyQMbuf across devices (data and head); error messages
// naming the event and device; injected faults; timeouts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "hflow/rt.h"
#include "services/exchange_service.h"
#include "services/exchange_service_test_util.h"
#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace {

using exchange_service_test::Clock;
using exchange_service_test::ExchangeServiceTest;
using exchange_service_test::kSettle;
using exchange_service_test::Pattern;
using exchange_service_test::Since;
using ::hflow::testing::ContextsCreated;
using ::hflow::testing::DevStats;
using ::hflow::testing::MakeGroup;
using ::hflow::testing::Submit;
using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(SubEventTest, Names) {
  EXPECT_STREQ(SubEventName(SubEvent::kCreateGroup), "CreateGroup");
  EXPECT_STREQ(SubEventName(SubEvent::kAddGroup), "AddGroup");
  EXPECT_STREQ(SubEventName(SubEvent::kAllocCache), "AllocCache");
  EXPECT_STREQ(SubEventName(SubEvent::kAllocMbuf), "AllocMbuf");
  EXPECT_STREQ(SubEventName(SubEvent::kFreeMbuf), "FreeMbuf");
  EXPECT_STREQ(SubEventName(SubEvent::kCopyQMbuf), "CopyQMbuf");
  EXPECT_EQ(SubEventOf(EventRequest{CopyQMbufRequest{}}), SubEvent::kCopyQMbuf);
  EXPECT_EQ(SubEventOf(EventRequest{AddGroupRequest{}}), SubEvent::kAddGroup);
}

// --- The six events
// ------------------------------------------------------------

TEST_F(ExchangeServiceTest, SixEventsRoundTrip) {
  {
    ExchangeService svc(sim_.get());
    // CreateGroup.
    Status s = Submit(svc, 4, CreateGroupRequest{"g", 1 << 20});
    ASSERT_TRUE(s.ok()) << s.ToString();
    // AddGroup: "exec" may allocate afterwards.
    s = Submit(svc, 4, AddGroupRequest{"g", "exec", kPermAlloc | kPermRead});
    ASSERT_TRUE(s.ok()) << s.ToString();
    // AllocCache: one device allocation of the cache size.
    s = Submit(svc, 4, AllocCacheRequest{"g", 1 << 16, 4096});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(DevStats(*sim_, 4).mem_used_bytes, 1u << 16);
    // AllocMbuf: an mbuf of the group on the device.
    EventReply reply;
    s = Submit(svc, 4, AllocMbufRequest{"g", 300, "exec"}, &reply);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_NE(reply.mbuf, nullptr);
    EXPECT_EQ(reply.mbuf->device(), 4);
    EXPECT_EQ(reply.mbuf->size(), 300u);
    EXPECT_EQ(reply.mbuf->group()->name(), "g");
    auto group = reply.mbuf->group();
    EXPECT_EQ(group->Stats().live_mbufs, 1u);
    EXPECT_EQ(group->Stats().caches, 1u);
    // FreeMbuf: the device side's reference goes; with ours gone too, the
    // block is back (checked after the next event on the device).
    s = Submit(svc, 4, FreeMbufRequest{std::move(reply.mbuf)});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(reply.mbuf, nullptr);
    // CopyQMbuf: from a queue on 3 into a queue on 4 and group g.
    MakeGroup(svc, 3, "src", 1 << 16);
    uint32_t q3 = 0, q4 = 0;
    ASSERT_TRUE(svc.CreateQueue(3, 2, "from3", &q3).ok());
    ASSERT_TRUE(svc.CreateQueue(4, 2, "to4", &q4).ok());
    MbufPtr m;
    ASSERT_TRUE(svc.AllocMbuf(3, "src", "deployer", 16, &m).ok());
    m->head().trans_id = 7;
    ASSERT_TRUE(svc.Enqueue(q3, std::move(m), 0).ok());
    s = Submit(svc, 4, CopyQMbufRequest{q3, q4, "g", "exec", 0});
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(group->Stats().live_mbufs, 1u) << "the copy, freed mbuf gone";
    MbufPtr got;
    ASSERT_TRUE(svc.Dequeue(q4, &got, 0).ok());
    EXPECT_EQ(got->head().trans_id, 7u);
    EXPECT_EQ(got->device(), 4);
    EXPECT_EQ(got->group(), group);
    got.reset();
    EXPECT_EQ(group->Stats().live_mbufs, 0u);
    EXPECT_EQ(group->Stats().in_use_bytes, 0u);
  }
  for (int32_t d : devices_) {
    EXPECT_EQ(DevStats(*sim_, d).mem_used_bytes, 0u) << d;
    EXPECT_EQ(DevStats(*sim_, d).live_allocations, 0u) << d;
  }
  EXPECT_EQ(ContextsCreated(*sim_, {2, 5}), 0u);
}

TEST_F(ExchangeServiceTest, CopyQMbufMovesDataAndHeadFromDevice2To5) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "out", 1 << 20, 1 << 16, 4096);
  MakeGroup(svc, 5, "in", 1 << 20, 1 << 16, 4096);
  uint32_t q2 = 0, q5 = 0;
  ASSERT_TRUE(svc.CreateQueue(2, 4, "q2", &q2).ok());
  ASSERT_TRUE(svc.CreateQueue(5, 4, "q5", &q5).ok());

  const std::vector<uint8_t> data = Pattern(1000, 3);
  MbufPtr src;
  ASSERT_TRUE(svc.AllocMbuf(2, "out", "deployer", data.size(), &src).ok());
  ASSERT_TRUE(svc.WriteMbuf(src, data.data(), data.size()).ok());
  MbufHead& h = src->head();
  h.trans_id = 123456789012ull;
  h.flags = kFlowFlagEos | kFlowFlagSeg;
  h.ret_code = -7;
  h.start_time = 11;
  h.end_time = 22;
  h.msg_type = 3;
  h.dtype = 9;
  h.shape = {2, 5, 100};
  h.route_label = 17;
  h.data_label = 23;
  const char kUser[] = "user data for the copy";
  ASSERT_TRUE(h.SetUserData(kUser, sizeof(kUser)).ok());
  std::weak_ptr<Mbuf> src_weak = src;
  void* src_data = src->data();
  auto src_group = src->group();
  ASSERT_TRUE(svc.Enqueue(q2, std::move(src), 0).ok());

  Status s = Submit(svc, 5, CopyQMbufRequest{q2, q5, "in", "deployer", 0});
  ASSERT_TRUE(s.ok()) << s.ToString();

  // Moved: the source queue is empty and the source mbuf released.
  MbufPtr none;
  EXPECT_EQ(svc.Dequeue(q2, &none, 0).code(), StatusCode::kTimeout);
  EXPECT_TRUE(src_weak.expired());
  EXPECT_EQ(src_group->Stats().live_mbufs, 0u);

  MbufPtr dst;
  ASSERT_TRUE(svc.Dequeue(q5, &dst, 0).ok());
  ASSERT_NE(dst, nullptr);
  EXPECT_EQ(dst->device(), 5);
  EXPECT_EQ(dst->group()->name(), "in");
  EXPECT_EQ(dst->group()->device(), 5);
  EXPECT_EQ(dst->size(), data.size());
  EXPECT_NE(dst->data(), src_data);
  std::vector<uint8_t> back(data.size());
  ASSERT_TRUE(svc.ReadMbuf(dst, back.data(), back.size()).ok());
  EXPECT_EQ(back, data);
  const MbufHead& d = dst->head();
  EXPECT_EQ(d.trans_id, 123456789012ull);
  EXPECT_EQ(d.flags, kFlowFlagEos | kFlowFlagSeg);
  EXPECT_EQ(d.ret_code, -7);
  EXPECT_EQ(d.start_time, 11u);
  EXPECT_EQ(d.end_time, 22u);
  EXPECT_EQ(d.msg_type, 3u);
  EXPECT_EQ(d.dtype, 9);
  EXPECT_EQ(d.shape, (Dims{2, 5, 100}));
  EXPECT_EQ(d.route_label, 17u);
  EXPECT_EQ(d.data_label, 23u);
  EXPECT_EQ(d.user_data_len, sizeof(kUser));
  EXPECT_EQ(std::memcmp(d.user_data, kUser, sizeof(kUser)), 0);
  // The destination's data lives in device 5's group, device 2 keeps only
  // its cache.
  EXPECT_EQ(dst->group()->Stats().live_mbufs, 1u);
  EXPECT_EQ(DevStats(*sim_, 2).live_allocations, 1u);
  EXPECT_EQ(DevStats(*sim_, 5).live_allocations, 1u);
}

TEST_F(ExchangeServiceTest, CopyQMbufMustBeSubmittedToTheDestinationDevice) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 5, "in", 1 << 16);
  uint32_t q2 = 0, q5 = 0;
  ASSERT_TRUE(svc.CreateQueue(2, 4, "q2", &q2).ok());
  ASSERT_TRUE(svc.CreateQueue(5, 4, "q5", &q5).ok());
  Status s = Submit(svc, 2, CopyQMbufRequest{q2, q5, "in"});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("CopyQMbuf event on device 2"),
                    HasSubstr("destination queue"), HasSubstr("device 5")));
  // Unknown queues.
  s = Submit(svc, 5, CopyQMbufRequest{999, q5, "in"});
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("queue 999"));
  s = Submit(svc, 5, CopyQMbufRequest{q2, 998, "in"});
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("queue 998"));
  // Empty source with no wait: a timeout naming the source queue.
  s = Submit(svc, 5, CopyQMbufRequest{q2, q5, "in", "deployer", 0});
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("CopyQMbuf event on device 5"),
                                 HasSubstr("'q2'")));
}

// --- Errors
// -------------------------------------------------------------------

TEST_F(ExchangeServiceTest, FailedRepliesNameTheEventAndDevice) {
  ExchangeService svc(sim_.get());
  EventReply reply;
  Status s = svc.SubmitEventSync(3, AllocMbufRequest{"nope", 64}, &reply);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("AllocMbuf event on device 3 failed"),
                    HasSubstr("'nope'")));
  EXPECT_EQ(reply.mbuf, nullptr);
  s = svc.SubmitEventSync(2, AddGroupRequest{"nope", "m", kPermRead}, nullptr);
  EXPECT_THAT(s.message(), HasSubstr("AddGroup event on device 2 failed"));
  s = svc.SubmitEventSync(5, AllocCacheRequest{"nope", 64, 64}, nullptr);
  EXPECT_THAT(s.message(), HasSubstr("AllocCache event on device 5 failed"));
  s = svc.SubmitEventSync(4, CreateGroupRequest{"", 0}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("CreateGroup event on device 4 failed"));
  s = svc.SubmitEventSync(4, FreeMbufRequest{nullptr}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("FreeMbuf event on device 4 failed"));
  s = svc.SubmitEventSync(4, CopyQMbufRequest{1, 2, "x"}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("CopyQMbuf event on device 4 failed"));
}

TEST_F(ExchangeServiceTest, FreeMbufOfAnotherDeviceIsRejected) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "g", 1 << 16);
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(3, "g", "deployer", 64, &m).ok());
  Status s = Submit(svc, 4, FreeMbufRequest{m});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("FreeMbuf event on device 4"),
                                 HasSubstr("not on device 4")));
  EXPECT_TRUE(Submit(svc, 3, FreeMbufRequest{m}).ok());
}

TEST_F(ExchangeServiceTest, InjectedFaultSurfacesAsTheEventError) {
  ExchangeService svc(sim_.get());
  // 1st kEventSubmit: the host-side submit.
  sim_->InjectFault(rt::Op::kEventSubmit, 1, Status::Internal("x"));
  Status s = svc.SubmitEventSync(2, CreateGroupRequest{"g", 4096}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_THAT(
      s.message(),
      AllOf(HasSubstr("CreateGroup event on device 2 failed"), HasSubstr("x")));
  // The fault fired once: the same event now succeeds, the group is new.
  s = svc.SubmitEventSync(2, CreateGroupRequest{"g", 4096}, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // 2nd kEventSubmit: the device side's, inside the agent.
  sim_->InjectFault(rt::Op::kEventSubmit, 2, Status::Internal("agent side"));
  s = svc.SubmitEventSync(2, CreateGroupRequest{"h", 4096}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("CreateGroup event on device 2 failed"),
                    HasSubstr("agent side")));
  MbufPtr m;
  EXPECT_EQ(svc.AllocMbuf(2, "h", "deployer", 64, &m).code(),
            StatusCode::kNotFound)
      << "the failed event must not have created the group";
  // A fault in the event's own driver call (group create).
  sim_->InjectFault(rt::Op::kGroupCreate, 1, Status::Internal("create"));
  s = svc.SubmitEventSync(2, CreateGroupRequest{"h", 4096}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("create"));
  EXPECT_TRUE(
      svc.SubmitEventSync(2, CreateGroupRequest{"h", 4096}, nullptr).ok());
  // A failing cache allocation leaves the budget untouched.
  sim_->InjectFault(rt::Op::kMalloc, 1, Status::OutOfMemory("oom"));
  s = svc.SubmitEventSync(2, AllocCacheRequest{"h", 4096, 64}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kOutOfMemory) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("AllocCache event on device 2 failed"));
  EXPECT_TRUE(
      svc.SubmitEventSync(2, AllocCacheRequest{"h", 4096, 64}, nullptr).ok());
}

TEST_F(ExchangeServiceTest, SubmitTimeoutWhileCopyQMbufWaitsOnEmptySource) {
  auto t_total = Clock::now();
  {
    ExchangeService svc(sim_.get());
    MakeGroup(svc, 5, "in", 1 << 16);
    uint32_t q2 = 0, q5 = 0;
    ASSERT_TRUE(svc.CreateQueue(2, 2, "empty-src", &q2).ok());
    ASSERT_TRUE(svc.CreateQueue(5, 2, "dst", &q5).ok());
    auto t0 = Clock::now();
    Status s = svc.SubmitEventSync(
        5, CopyQMbufRequest{q2, q5, "in", "deployer", /*timeout_ms=*/60000},
        nullptr, /*timeout_ms=*/50);
    auto waited = Since(t0);
    EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
    EXPECT_THAT(s.message(), AllOf(HasSubstr("CopyQMbuf event on device 5"),
                                   HasSubstr("50 ms")));
    EXPECT_GE(waited, milliseconds(50));
    EXPECT_LT(waited, milliseconds(2000));
    // The agent is still waiting; shutting down wakes it (no 60 s hang).
  }
  EXPECT_LT(Since(t_total), milliseconds(2000));
}

TEST_F(ExchangeServiceTest, CopyQMbufWaitsForALateSourceMbuf) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "out", 1 << 16);
  MakeGroup(svc, 5, "in", 1 << 16);
  uint32_t q2 = 0, q5 = 0;
  ASSERT_TRUE(svc.CreateQueue(2, 2, "src", &q2).ok());
  ASSERT_TRUE(svc.CreateQueue(5, 2, "dst", &q5).ok());
  std::thread producer([&] {
    std::this_thread::sleep_for(kSettle);
    MbufPtr m;
    ASSERT_TRUE(svc.AllocMbuf(2, "out", "deployer", 8, &m).ok());
    m->head().trans_id = 99;
    EXPECT_TRUE(svc.Enqueue(q2, std::move(m), 0).ok());
  });
  Status s = svc.SubmitEventSync(
      5, CopyQMbufRequest{q2, q5, "in", "deployer", -1}, nullptr, 1500);
  producer.join();
  ASSERT_TRUE(s.ok()) << s.ToString();
  MbufPtr got;
  ASSERT_TRUE(svc.Dequeue(q5, &got, 0).ok());
  EXPECT_EQ(got->head().trans_id, 99u);
  EXPECT_EQ(got->device(), 5);
}

}  // namespace
}  // namespace services
}  // namespace hflow
