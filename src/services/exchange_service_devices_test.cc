// Unit tests of ExchangeService (docs/architecture.md "Device-side
// services"), devices: device loss failing submits and queued events; no
// contexts on devices never used; agent threads; Stats(); and the disabled
// bug tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
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
using exchange_service_test::kPrompt;
using exchange_service_test::kSettle;
using exchange_service_test::Pattern;
using exchange_service_test::Since;
using ::hflow::testing::ContextsCreated;
using ::hflow::testing::DevStats;
using ::hflow::testing::ImplicitBindings;
using ::hflow::testing::MakeGroup;
using ::hflow::testing::MakeSim;
using ::hflow::testing::RunOnFreshThread;
using ::hflow::testing::Submit;
using std::chrono::milliseconds;
using ::testing::AllOf;
using ::testing::HasSubstr;

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
