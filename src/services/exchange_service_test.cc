// Unit tests of ExchangeService (docs/architecture.md "Device-side services"):
// the six proxy events through SubmitEventSync; CopyQMbuf and CopyMbuf across
// devices (data and head; the copy issued on the destination device); error
// messages naming the event and device; injected faults; timeouts; mbuf bounds;
// device loss; no contexts on devices never used; Stats().
#include "services/exchange_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <numeric>
#include <thread>
#include <vector>

#include "hflow/rt.h"
#include "services_test_util.h"
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

constexpr milliseconds kSettle{30};
constexpr milliseconds kPrompt{1500};

milliseconds Since(Clock::time_point t0) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
}

using ::hflow::testing::DevStats;
using ::hflow::testing::MakeGroup;
using ::hflow::testing::Submit;

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

class ExchangeServiceTest : public ::testing::Test {
 protected:
  const std::vector<int32_t> devices_ = {2, 3, 4, 5};
  std::shared_ptr<rt::SimRuntime> sim_ = MakeSim(devices_);
};

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
  EXPECT_EQ(d.shape, (std::vector<int64_t>{2, 5, 100}));
  EXPECT_EQ(d.route_label, 17u);
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

// --- Copies and host transfers
// --------------------------------------------------

TEST_F(ExchangeServiceTest, CopyMbufIsIssuedOnTheDestinationDevice) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "a", 1 << 16);
  MakeGroup(svc, 5, "b", 1 << 16);  // direct blocks: a Malloc on 5 as well
  MbufPtr src;
  ASSERT_TRUE(svc.AllocMbuf(2, "a", "deployer", 256, &src).ok());
  const auto data = Pattern(256, 1);
  ASSERT_TRUE(svc.WriteMbuf(src, data.data(), data.size()).ok());
  src->head().trans_id = 5;

  RunOnFreshThread(
      [&] {
        // The caller is bound to device 2's user context (the source's device).
        rt::Context* mine = nullptr;
        ASSERT_TRUE(sim_->CreateContext(2, &mine).ok());
        sim_->SetRecordCalls(true);
        MbufPtr dst;
        Status s = svc.CopyMbuf(src, 5, "b", "deployer", &dst);
        sim_->SetRecordCalls(false);
        ASSERT_TRUE(s.ok()) << s.ToString();
        EXPECT_EQ(sim_->GetCurrentContext(), mine);
        EXPECT_EQ(dst->device(), 5);
        EXPECT_EQ(dst->head().trans_id, 5u);
        std::vector<uint8_t> back(256);
        ASSERT_TRUE(svc.ReadMbuf(dst, back.data(), back.size()).ok());
        EXPECT_EQ(back, data);
        ASSERT_TRUE(sim_->DestroyContext(mine).ok());
      },
      "copier");

  int memcpys = 0, mallocs = 0;
  for (const rt::CallRecord& r : sim_->CallLog()) {
    if (r.op == rt::Op::kMemcpy) {
      ++memcpys;
      EXPECT_EQ(r.device, 5);
      EXPECT_EQ(r.bound_device, 5);
      EXPECT_FALSE(r.implicit_binding);
      EXPECT_EQ(r.result, StatusCode::kOk);
      EXPECT_EQ(r.thread, "copier");
    }
    if (r.op == rt::Op::kMalloc) {
      ++mallocs;
      EXPECT_EQ(r.device, 5);
      EXPECT_EQ(r.bound_device, 5);
    }
    EXPECT_NE(r.result, StatusCode::kNoContext);
    EXPECT_NE(r.result, StatusCode::kContextMismatch);
  }
  EXPECT_EQ(memcpys, 1);
  EXPECT_EQ(mallocs, 1);
}

// Note [Copies issued on the source]: a thread already on hflow's context
// of the source device (a pipeline stage) copies into a cached block with
// no context switch; a destination without a cache falls back to binding
// the destination. Either way the thread's binding is unchanged.
TEST_F(ExchangeServiceTest, CopyMbufFromTheSourcesContextIsIssuedThere) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "a", 1 << 20, 1 << 16, 4096);
  MakeGroup(svc, 5, "cached", 1 << 20, 1 << 16, 4096);
  MakeGroup(svc, 5, "direct", 1 << 16);  // no cache: a Malloc on 5
  MbufPtr src;
  ASSERT_TRUE(svc.AllocMbuf(2, "a", "deployer", 256, &src).ok());
  const auto data = Pattern(256, 3);
  ASSERT_TRUE(svc.WriteMbuf(src, data.data(), data.size()).ok());
  src->head().trans_id = 8;

  auto copy_and_log = [&](const std::string& group, MbufPtr* dst) {
    sim_->ClearCallLog();
    sim_->SetRecordCalls(true);
    Status s = svc.CopyMbuf(src, 5, group, "deployer", dst);
    sim_->SetRecordCalls(false);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return sim_->CallLog();
  };
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim_->SetDevice(2).ok());  // device 2's default context
    rt::Context* stage = sim_->GetCurrentContext();
    for (const std::string group : {"cached", "direct"}) {
      SCOPED_TRACE(group);
      MbufPtr dst;
      auto log = copy_and_log(group, &dst);
      ASSERT_NE(dst, nullptr);
      EXPECT_EQ(sim_->GetCurrentContext(), stage);
      EXPECT_EQ(dst->device(), 5);
      EXPECT_EQ(dst->head().trans_id, 8u);
      std::vector<uint8_t> back(256);
      ASSERT_TRUE(svc.ReadMbuf(dst, back.data(), back.size()).ok());
      EXPECT_EQ(back, data);
      int memcpys = 0, switches = 0;
      for (const rt::CallRecord& r : log) {
        EXPECT_NE(r.result, StatusCode::kNoContext);
        EXPECT_NE(r.result, StatusCode::kContextMismatch);
        EXPECT_FALSE(r.implicit_binding);
        switches += r.op == rt::Op::kSetCurrentContext;
        if (r.op != rt::Op::kMemcpy) continue;
        ++memcpys;
        const int32_t issuer = group == "cached" ? 2 : 5;
        EXPECT_EQ(r.device, issuer);
        EXPECT_EQ(r.bound_device, issuer);
      }
      EXPECT_EQ(memcpys, 1);
      if (group == "cached") {
        EXPECT_EQ(switches, 0) << "no context switch for a stage's copy";
      }
    }
    ASSERT_TRUE(sim_->ResetDevice(2).ok());
  });
}

// The source-issued path fails as the destination-issued one did: a full
// destination cache falls back and reports the exhaustion; a lost
// destination is named; neither leaves a block in use or the thread moved.
TEST_F(ExchangeServiceTest, CopyMbufFromTheSourcesContextFailsCleanly) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "a", 1 << 20, 1 << 16, 4096);
  MakeGroup(svc, 5, "tiny", 1 << 20, 1024, 256);  // four 256-byte blocks
  MbufPtr src;
  ASSERT_TRUE(svc.AllocMbuf(2, "a", "deployer", 200, &src).ok());
  std::shared_ptr<MemoryGroup> tiny;
  ASSERT_TRUE(svc.OpenGroup(5, "tiny", &tiny).ok());
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim_->SetDevice(2).ok());
    rt::Context* stage = sim_->GetCurrentContext();
    std::vector<MbufPtr> held(4);
    for (auto& m : held) {
      ASSERT_TRUE(svc.AllocMbuf(5, "tiny", "deployer", 256, &m).ok());
    }
    MbufPtr dst;
    Status s = svc.CopyMbuf(src, *tiny, "deployer", &dst);
    EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
    EXPECT_EQ(sim_->GetCurrentContext(), stage);
    held.clear();
    sim_->MarkDeviceLost(5);
    s = svc.CopyMbuf(src, *tiny, "deployer", &dst);
    EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("device 5"));
    EXPECT_EQ(dst, nullptr);
    EXPECT_EQ(tiny->Stats().in_use_bytes, 0u) << "the failed copy's block";
    EXPECT_EQ(sim_->GetCurrentContext(), stage);
    ASSERT_TRUE(sim_->ResetDevice(2).ok());
  });
}

TEST_F(ExchangeServiceTest, CopyMbufErrors) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "a", 1 << 16);
  MakeGroup(svc, 5, "tiny", 128);
  MbufPtr src, dst;
  ASSERT_TRUE(svc.AllocMbuf(2, "a", "deployer", 1000, &src).ok());
  EXPECT_EQ(svc.CopyMbuf(nullptr, 5, "tiny", "deployer", &dst).code(),
            StatusCode::kInvalidArgument);
  Status s = svc.CopyMbuf(src, 5, "missing", "deployer", &dst);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("'missing'"), HasSubstr("device 5")));
  s = svc.CopyMbuf(src, 5, "tiny", "stranger", &dst);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  s = svc.CopyMbuf(src, 5, "tiny", "deployer", &dst);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_EQ(dst, nullptr);
  // Copy within a device works too.
  ASSERT_TRUE(svc.CopyMbuf(src, 2, "a", "deployer", &dst).ok());
  EXPECT_EQ(dst->device(), 2);
  EXPECT_NE(dst->data(), src->data());
}

TEST_F(ExchangeServiceTest, WriteAndReadMbufAreBoundsChecked) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "g", 1 << 16, 4096, 1024);
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(3, "g", "deployer", 100, &m).ok());  // block 128
  auto data = Pattern(200, 9);
  std::vector<uint8_t> back(200, 0);
  // In bounds.
  ASSERT_TRUE(svc.WriteMbuf(m, data.data(), 100).ok());
  ASSERT_TRUE(svc.ReadMbuf(m, back.data(), 100).ok());
  EXPECT_TRUE(std::equal(back.begin(), back.begin() + 100, data.begin()));
  ASSERT_TRUE(svc.WriteMbuf(m, data.data() + 150, 50, 50).ok());
  ASSERT_TRUE(svc.ReadMbuf(m, back.data(), 50, 50).ok());
  EXPECT_TRUE(std::equal(back.begin(), back.begin() + 50, data.begin() + 150));
  EXPECT_TRUE(svc.WriteMbuf(m, data.data(), 0, 100).ok());  // empty at the end
  EXPECT_TRUE(svc.ReadMbuf(m, back.data(), 0, 100).ok());
  // Out of bounds, although the 128-byte block would hold them.
  struct Range {
    uint64_t bytes, offset;
  };
  for (Range r :
       {Range{101, 0}, Range{1, 100}, Range{50, 51}, Range{0, 101},
        Range{1, UINT64_MAX}, Range{UINT64_MAX, 1}, Range{UINT64_MAX, 0}}) {
    Status w = svc.WriteMbuf(m, data.data(), r.bytes, r.offset);
    EXPECT_EQ(w.code(), StatusCode::kInvalidArgument)
        << r.bytes << "@" << r.offset;
    EXPECT_THAT(w.message(), HasSubstr("WriteMbuf"));
    Status rd = svc.ReadMbuf(m, back.data(), r.bytes, r.offset);
    EXPECT_EQ(rd.code(), StatusCode::kInvalidArgument)
        << r.bytes << "@" << r.offset;
    EXPECT_THAT(rd.message(), HasSubstr("ReadMbuf"));
  }
  EXPECT_EQ(svc.WriteMbuf(nullptr, data.data(), 1).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(svc.ReadMbuf(nullptr, back.data(), 1).code(),
            StatusCode::kInvalidArgument);
  // The failed writes changed nothing.
  ASSERT_TRUE(svc.ReadMbuf(m, back.data(), 100).ok());
  EXPECT_TRUE(std::equal(back.begin(), back.begin() + 50, data.begin()));
  EXPECT_TRUE(
      std::equal(back.begin() + 50, back.begin() + 100, data.begin() + 150));
}

// --- Device loss
// ------------------------------------------------------------------

TEST_F(ExchangeServiceTest, DeviceLossFailsSubmitOnThatDevice) {
  {
    ExchangeService svc(sim_.get());
    MakeGroup(svc, 3, "g", 1 << 16, 4096, 1024);
    MakeGroup(svc, 3, "d", 1 << 16);
    MakeGroup(svc, 4, "g", 1 << 16);
    MbufPtr cached, direct;
    ASSERT_TRUE(svc.AllocMbuf(3, "g", "deployer", 64, &cached).ok());
    ASSERT_TRUE(svc.AllocMbuf(3, "d", "deployer", 64, &direct).ok());

    sim_->MarkDeviceLost(3);
    for (const EventRequest& r :
         {EventRequest{CreateGroupRequest{"new", 4096}},
          EventRequest{AllocMbufRequest{"g", 64}},
          EventRequest{AddGroupRequest{"g", "m", kPermRead}}}) {
      EventReply reply;
      Status s = svc.SubmitEventSync(3, r, &reply, 1000);
      EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
      EXPECT_THAT(s.message(),
                  AllOf(HasSubstr("event on device 3"), HasSubstr("lost")));
      EXPECT_EQ(reply.mbuf, nullptr);
    }
    uint8_t byte = 1;
    EXPECT_EQ(svc.WriteMbuf(direct, &byte, 1).code(), StatusCode::kDeviceLost);
    // A never-used device that is lost fails the same way.
    sim_->MarkDeviceLost(5);
    Status s =
        svc.SubmitEventSync(5, CreateGroupRequest{"g", 4096}, nullptr, 1000);
    EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("device 5"));
    // Others are unaffected.
    EventReply reply;
    s = svc.SubmitEventSync(4, AllocMbufRequest{"g", 64}, &reply, 1000);
    EXPECT_TRUE(s.ok()) << s.ToString();
    // Cleanup after the loss still returns every byte.
    cached.reset();
    direct.reset();
  }
  for (int32_t d : devices_) {
    EXPECT_EQ(DevStats(*sim_, d).mem_used_bytes, 0u) << d;
    EXPECT_EQ(DevStats(*sim_, d).live_allocations, 0u) << d;
  }
}

TEST_F(ExchangeServiceTest, DeviceLossFailsEventsQueuedBehindABlockedOne) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 5, "in", 1 << 16);
  uint32_t q5src = 0, q5dst = 0;
  ASSERT_TRUE(svc.CreateQueue(5, 2, "src5", &q5src).ok());
  ASSERT_TRUE(svc.CreateQueue(5, 2, "dst5", &q5dst).ok());
  // The agent of 5 blocks on an empty queue of its own device...
  auto blocked = std::async(std::launch::async, [&] {
    return svc.SubmitEventSync(
        5, CopyQMbufRequest{q5src, q5dst, "in", "deployer", -1}, nullptr, -1);
  });
  std::this_thread::sleep_for(kSettle);
  // ...and a second event waits behind it.
  auto queued = std::async(std::launch::async, [&] {
    return svc.SubmitEventSync(5, CreateGroupRequest{"later", 4096}, nullptr,
                               -1);
  });
  std::this_thread::sleep_for(kSettle);
  sim_->MarkDeviceLost(5);
  ASSERT_EQ(blocked.wait_for(kPrompt), std::future_status::ready);
  Status s = blocked.get();
  EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
  ASSERT_EQ(queued.wait_for(kPrompt), std::future_status::ready);
  s = queued.get();
  EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("device 5"), HasSubstr("lost")));
}

// --- Devices never used
// -------------------------------------------------------------

TEST(ExchangeServiceClusterTest, DevicesNeverUsedHaveNoContexts) {
  const std::vector<int32_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  auto sim = MakeSim(all);
  ASSERT_EQ(sim->DefaultDevice(), 0);
  {
    ExchangeService svc(sim.get());
    RunOnFreshThread(
        [&] {
          for (int32_t d : {2, 5}) {
            MakeGroup(svc, d, "g", 1 << 20, 1 << 16, 4096);
            ASSERT_TRUE(
                Submit(svc, d, AddGroupRequest{"g", "exec", kPermAlloc}).ok());
          }
          uint32_t q2 = 0, q5 = 0;
          ASSERT_TRUE(svc.CreateQueue(2, 4, "q2", &q2).ok());
          ASSERT_TRUE(svc.CreateQueue(5, 4, "q5", &q5).ok());
          EventReply reply;
          ASSERT_TRUE(
              Submit(svc, 2, AllocMbufRequest{"g", 512, "exec"}, &reply).ok());
          const auto data = Pattern(512, 4);
          ASSERT_TRUE(svc.WriteMbuf(reply.mbuf, data.data(), data.size()).ok());
          ASSERT_TRUE(svc.Enqueue(q2, reply.mbuf, 0).ok());
          ASSERT_TRUE(
              Submit(svc, 5, CopyQMbufRequest{q2, q5, "g", "exec", 1000}).ok());
          MbufPtr got, back;
          ASSERT_TRUE(svc.Dequeue(q5, &got, 1000).ok());
          ASSERT_TRUE(svc.CopyMbuf(got, 2, "g", "exec", &back).ok());
          std::vector<uint8_t> read(512);
          ASSERT_TRUE(svc.ReadMbuf(back, read.data(), read.size()).ok());
          EXPECT_EQ(read, data);
          ASSERT_TRUE(
              Submit(svc, 2, FreeMbufRequest{std::move(reply.mbuf)}).ok());
          EXPECT_EQ(sim->GetCurrentContext(), nullptr);
        },
        "deploy-0");
    // Stats only know the used devices.
    std::vector<int32_t> seen;
    for (const auto& st : svc.Stats()) seen.push_back(st.device);
    EXPECT_EQ(seen, (std::vector<int32_t>{2, 5}));
  }
  EXPECT_EQ(ContextsCreated(*sim, {0, 1, 3, 4, 6, 7}), 0u);
  EXPECT_EQ(ImplicitBindings(*sim, all), 0u);
  for (int32_t d : all) {
    rt::DeviceStats st = DevStats(*sim, d);
    EXPECT_EQ(st.mem_used_bytes, 0u) << d;
    EXPECT_EQ(st.live_allocations, 0u) << d;
    EXPECT_EQ(st.default_context_refs, 0) << d;
  }
  EXPECT_GT(ContextsCreated(*sim, {2}), 0u);
  EXPECT_GT(ContextsCreated(*sim, {5}), 0u);
}

TEST(ExchangeServiceClusterTest, AgentThreadRunsEventsBoundToItsDevice) {
  auto sim = MakeSim({0, 1, 2, 3, 4, 5, 6, 7});
  ExchangeService svc(sim.get());
  sim->SetRecordCalls(true);
  RunOnFreshThread(
      [&] {
        ASSERT_TRUE(Submit(svc, 6, CreateGroupRequest{"g", 4096}).ok());
      },
      "submitter");
  sim->SetRecordCalls(false);
  bool host_side = false, agent_side = false;
  for (const rt::CallRecord& r : sim->CallLog()) {
    if (r.op == rt::Op::kEventSubmit || r.op == rt::Op::kGroupCreate) {
      EXPECT_EQ(r.device, 6);
      EXPECT_EQ(r.bound_device, 6) << r.thread << " " << rt::OpName(r.op);
      EXPECT_FALSE(r.implicit_binding);
      EXPECT_EQ(r.result, StatusCode::kOk);
      if (r.thread == "submitter") host_side = true;
      if (r.thread == "esched-6") agent_side = true;
    }
  }
  EXPECT_TRUE(host_side);
  EXPECT_TRUE(agent_side);
  EXPECT_EQ(ImplicitBindings(*sim, {0}), 0u);
}

// --- Stats
// ----------------------------------------------------------------------------

TEST(ExchangeServiceStatsTest, ReportsQueuesAndGroupsPerUsedDevice) {
  auto sim = MakeSim({3, 6, 7});
  ExchangeService svc(sim.get());
  EXPECT_TRUE(svc.Stats().empty());
  uint32_t a = 0, b = 0, c = 0;
  ASSERT_TRUE(svc.CreateQueue(3, 2, "a", &a).ok());
  ASSERT_TRUE(svc.CreateQueue(3, 2, "b", &b).ok());
  ASSERT_TRUE(svc.CreateQueue(6, 2, "c", &c).ok());
  MakeGroup(svc, 3, "g", 4096);
  MakeGroup(svc, 7, "g1", 4096);
  MakeGroup(svc, 7, "g2", 4096, 2048, 256);
  MbufPtr m1, m2;
  ASSERT_TRUE(svc.AllocMbuf(7, "g1", "deployer", 64, &m1).ok());
  ASSERT_TRUE(svc.AllocMbuf(7, "g2", "deployer", 64, &m2).ok());

  auto stats = svc.Stats();
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].device, 3);
  EXPECT_EQ(stats[0].queues, 2u);
  EXPECT_EQ(stats[0].groups, 1u);
  EXPECT_EQ(stats[0].live_mbufs, 0u);
  EXPECT_EQ(stats[1].device, 6);
  EXPECT_EQ(stats[1].queues, 1u);
  EXPECT_EQ(stats[1].groups, 0u);
  EXPECT_EQ(stats[2].device, 7);
  EXPECT_EQ(stats[2].queues, 0u);
  EXPECT_EQ(stats[2].groups, 2u);
  EXPECT_EQ(stats[2].live_mbufs, 2u);

  ASSERT_TRUE(svc.DestroyQueue(a).ok());
  m1.reset();
  ASSERT_TRUE(svc.DestroyGroup(7, "g1").ok());
  stats = svc.Stats();
  ASSERT_EQ(stats.size(), 3u);
  EXPECT_EQ(stats[0].queues, 1u);
  EXPECT_EQ(stats[2].groups, 1u);
  EXPECT_EQ(stats[2].live_mbufs, 1u);
}

// --- Bugs found (disabled so the suite stays green; see the report)
// ----------------

// Regression (fixed): ExchangeService::CopyQMbuf (exchange_service.cc) dequeues
// the source mbuf before it looks up the destination group or allocates there;
// when CopyMbuf then fails (unknown group, no permission, group budget), the
// dequeued mbuf is simply dropped: the message is lost. Validate the
// destination (group, member's alloc permission) before dequeuing, and on a
// later failure give the mbuf back to the source queue (e.g. a
// DeviceQueue::PushFront) instead of dropping it.
TEST_F(ExchangeServiceTest, FailedCopyQMbufKeepsTheSourceMbuf) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "out", 1 << 16);
  MakeGroup(svc, 5, "in", 1 << 16);
  uint32_t q2 = 0, q5 = 0;
  ASSERT_TRUE(svc.CreateQueue(2, 2, "src", &q2).ok());
  ASSERT_TRUE(svc.CreateQueue(5, 2, "dst", &q5).ok());
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(2, "out", "deployer", 64, &m).ok());
  m->head().trans_id = 31;
  ASSERT_TRUE(svc.Enqueue(q2, std::move(m), 0).ok());
  Status s = Submit(svc, 5, CopyQMbufRequest{q2, q5, "typo", "deployer", 0});
  ASSERT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  MbufPtr still;
  s = svc.Dequeue(q2, &still, 0);
  ASSERT_TRUE(s.ok()) << "the source mbuf was lost: " << s.ToString();
  EXPECT_EQ(still->head().trans_id, 31u);
}

// Regression (fixed): device loss does not fail an event that the agent is
// already running. OnDeviceLost (exchange_service.cc) closes the lost device's
// queues and calls DeviceAgent::Fail, which fails only *queued* events
// (event_scheduler.cc, Fail). A CopyQMbuf on device 5 blocked on a source
// queue of device 2 keeps its SubmitEventSync caller waiting after device 5
// is lost (forever with timeout -1; here until the 1 s timeout). Fix: let
// Fail also complete the in-flight event (e.g. Pending gets a once-only
// completion that Fail and the handler race for, and the waiting caller is
// woken with the reason), or have CopyQMbuf wait on the source with a
// cancellation tied to the agent's failure.
TEST_F(ExchangeServiceTest, DeviceLossFailsAnInFlightEvent) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 5, "in", 1 << 16);
  uint32_t q2 = 0, q5 = 0;
  ASSERT_TRUE(svc.CreateQueue(2, 2, "src-on-2", &q2).ok());
  ASSERT_TRUE(svc.CreateQueue(5, 2, "dst-on-5", &q5).ok());
  auto in_flight = std::async(std::launch::async, [&] {
    return svc.SubmitEventSync(
        5, CopyQMbufRequest{q2, q5, "in", "deployer", -1}, nullptr, 1000);
  });
  std::this_thread::sleep_for(kSettle);
  auto t0 = Clock::now();
  sim_->MarkDeviceLost(5);
  Status s = in_flight.get();
  EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
  EXPECT_LT(Since(t0), milliseconds(500));
}

// Regression (a race, fixed): SubmitEventSync(FreeMbuf) can return before the
// device side has dropped its reference. DeviceAgent::Loop (event_scheduler.cc)
// fulfils the promise and only then, at the end of the loop iteration, destroys
// its `p` (the Pending holding the request's MbufPtr), so a caller that frees
// its last mbuf and immediately destroys the group intermittently gets
// kFailedPrecondition "1 mbufs are still alive". Fix: in Loop, move the
// request out and destroy it (e.g. `p->request = EventRequest{};` or
// std::exchange) before `p->done.set_value(...)`, and likewise clear the
// caller-side copy in Call before returning.
TEST_F(ExchangeServiceTest, FreeMbufHasDroppedTheReferenceOnReturn) {
  ExchangeService svc(sim_.get());
  int still_alive = 0;
  for (int i = 0; i < 500; ++i) {
    MakeGroup(svc, 3, "g", 4096, 1024, 64);
    EventReply reply;
    ASSERT_TRUE(Submit(svc, 3, AllocMbufRequest{"g", 64}, &reply).ok());
    ASSERT_TRUE(Submit(svc, 3, FreeMbufRequest{std::move(reply.mbuf)}).ok());
    Status s = svc.DestroyGroup(3, "g");
    if (!s.ok()) {
      ++still_alive;
      // Let the agent finish the iteration, then destroy for real.
      ASSERT_TRUE(Submit(svc, 3, AddGroupRequest{"g", "sync", kPermRead}).ok());
      ASSERT_TRUE(svc.DestroyGroup(3, "g").ok());
    }
  }
  EXPECT_EQ(still_alive, 0);
}

// Questionable: DestroyQueue on a lost device fails in its driver call
// (exchange_service.cc, DestroyQueue) before it closes and unregisters the
// queue, so cleanup after a device loss can never remove the queue (it stays
// in Stats() until the service dies). Sim's Free deliberately succeeds on a
// lost device for this reason (architecture.md); DestroyQueue should
// likewise close and erase the queue when the device is lost.
TEST_F(ExchangeServiceTest, DestroyQueueOnLostDeviceUnregistersIt) {
  ExchangeService svc(sim_.get());
  uint32_t q = 0;
  ASSERT_TRUE(svc.CreateQueue(4, 2, "doomed", &q).ok());
  sim_->MarkDeviceLost(4);
  (void)svc.DestroyQueue(q);
  EXPECT_EQ(svc.DestroyQueue(q).code(), StatusCode::kNotFound);
  EXPECT_TRUE(svc.Stats().empty());
}

}  // namespace
}  // namespace services
}  // namespace hflow
