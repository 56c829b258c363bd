// The seed regression (CANN GE dflow): deploy-pool threads that never bound a
// device submitted proxy events to devices 2..5 and failed with EE1018
// ("no valid context"), while device 0 passed through the default-context
// quirk. hflow binds at SubmitEventSync's entry; this test runs all six
// proxy events from such a pool, concurrently on 2..5 of a {0..7} cluster,
// and proves it would catch the bug by switching the entry binding off.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hflow/rt.h"
#include "rt/thread_pool.h"
#include "services/exchange_service.h"
#include "test_util.h"

namespace hflow {
namespace {

using services::AddGroupRequest;
using services::AllocCacheRequest;
using services::AllocMbufRequest;
using services::CopyQMbufRequest;
using services::CreateGroupRequest;
using services::EventReply;
using services::ExchangeService;
using services::FreeMbufRequest;
using ::testing::HasSubstr;

const std::vector<int32_t> kCluster = {0, 1, 2, 3, 4, 5, 6, 7};
const std::vector<int32_t> kUsed = {2, 3, 4, 5};

// All six proxy events against `device`, as GE's deployer issues them. The
// source queue for CopyQMbuf lives on the next used device.
Status SixEvents(ExchangeService& svc, int32_t device, int rep) {
  const std::string g =
      "g" + std::to_string(device) + "_" + std::to_string(rep);
  auto submit = [&](const services::EventRequest& r, EventReply* reply) {
    return svc.SubmitEventSync(device, r, reply, /*timeout_ms=*/5000);
  };
  // The thread must stay unbound throughout: hflow restores "none".
  auto unbound = [&]() -> Status {
    return rt::GetCurrentContext() == nullptr
               ? Status::OK()
               : Status::Internal("pool thread left bound");
  };
  HFLOW_RETURN_IF_ERROR(submit(CreateGroupRequest{g, 1 << 20}, nullptr));
  HFLOW_RETURN_IF_ERROR(unbound());
  HFLOW_RETURN_IF_ERROR(
      submit(AddGroupRequest{g, "executor",
                             services::kPermAlloc | services::kPermRead},
             nullptr));
  HFLOW_RETURN_IF_ERROR(
      submit(AllocCacheRequest{g, 1 << 19, 1 << 12}, nullptr));
  EventReply reply;
  HFLOW_RETURN_IF_ERROR(submit(AllocMbufRequest{g, 256, "executor"}, &reply));
  if (!reply.mbuf || reply.mbuf->device() != device) {
    return Status::Internal("AllocMbuf returned no mbuf of the device");
  }
  HFLOW_RETURN_IF_ERROR(
      submit(FreeMbufRequest{std::move(reply.mbuf)}, nullptr));
  HFLOW_RETURN_IF_ERROR(unbound());

  // CopyQMbuf: an mbuf waits in a queue on a peer device; the event moves it
  // into a queue on `device`.
  int32_t peer = device == 5 ? 2 : device + 1;
  uint32_t src_q = 0, dst_q = 0;
  HFLOW_RETURN_IF_ERROR(svc.CreateQueue(peer, 4, "src", &src_q));
  HFLOW_RETURN_IF_ERROR(svc.CreateQueue(device, 4, "dst", &dst_q));
  const std::string pg = "p" + g;
  HFLOW_RETURN_IF_ERROR(svc.SubmitEventSync(
      peer, CreateGroupRequest{pg, 1 << 16}, nullptr, 5000));
  services::MbufPtr m;
  HFLOW_RETURN_IF_ERROR(svc.AllocMbuf(peer, pg, "deployer", 64, &m));
  m->head().trans_id = 1000 + device;
  HFLOW_RETURN_IF_ERROR(svc.Enqueue(src_q, std::move(m), 0));
  HFLOW_RETURN_IF_ERROR(
      submit(CopyQMbufRequest{src_q, dst_q, g, "deployer", 1000}, nullptr));
  services::MbufPtr got;
  HFLOW_RETURN_IF_ERROR(svc.Dequeue(dst_q, &got, 0));
  if (got->device() != device || got->head().trans_id != 1000u + device) {
    return Status::Internal("CopyQMbuf delivered the wrong mbuf");
  }
  got.reset();
  HFLOW_RETURN_IF_ERROR(svc.DestroyQueue(src_q));
  HFLOW_RETURN_IF_ERROR(svc.DestroyQueue(dst_q));
  return unbound();
}

Status RunFromUnboundPool(ExchangeService& svc) {
  rt::ThreadPool pool("deploy", 4);
  std::vector<std::pair<std::optional<int32_t>, rt::ThreadPool::Task>> tasks;
  for (int rep = 0; rep < 3; ++rep) {
    for (int32_t d : kUsed) {
      // No device on the task: the pool thread stays unbound, as GE's did.
      tasks.emplace_back(std::nullopt,
                         [&svc, d, rep] { return SixEvents(svc, d, rep); });
    }
  }
  return pool.RunAll(std::move(tasks));
}

TEST(SeedRegressionTest, SixProxyEventsFromUnboundPoolOnDevices2To5) {
  auto sim = testing::InstallSim(kCluster);
  sim->SetRecordCalls(true);
  {
    ExchangeService svc(sim.get());
    Status s = RunFromUnboundPool(svc);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Every device call was made on a thread bound to its target device,
  // never through the default-context quirk.
  size_t events = 0;
  for (const auto& r : sim->CallLog()) {
    // Context operations change the binding; only device-dependent calls
    // are checked against it.
    if (r.op <= rt::Op::kSetCurrentContext) continue;
    EXPECT_EQ(r.bound_device, r.device)
        << rt::OpName(r.op) << " on thread " << r.thread;
    EXPECT_FALSE(r.implicit_binding) << rt::OpName(r.op);
    EXPECT_EQ(r.result, StatusCode::kOk) << rt::OpName(r.op);
    if (r.op == rt::Op::kEventSubmit) ++events;
  }
  EXPECT_GE(events, 3u * 4u * 6u);
  // No stray contexts: 0, 1, 6 and 7 were never touched.
  EXPECT_EQ(testing::ContextsCreated(*sim, {0, 1, 6, 7}), 0u);
  EXPECT_EQ(testing::ImplicitBindings(*sim, kCluster), 0u);
  for (int32_t d : kUsed) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.contexts_created, 1u) << d;  // one default context, reused
    EXPECT_EQ(st.mem_used_bytes, 0u) << d;
    EXPECT_EQ(st.contexts_alive, 0u) << d;
  }
}

TEST(SeedRegressionTest, WithoutEntryBindingTheTestCatchesTheBug) {
  auto sim = testing::InstallSim(kCluster);
  services::ExchangeOptions opts;
  opts.bind_at_entry = false;  // GE's bug
  ExchangeService svc(sim.get(), opts);
  Status s = RunFromUnboundPool(svc);
  ASSERT_EQ(s.code(), StatusCode::kNoContext) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("no valid context is bound"));
  EXPECT_THAT(s.message(), HasSubstr("CreateGroup event on device"));
  EXPECT_THAT(s.message(), HasSubstr("deploy-"));  // the pool thread's name
}

TEST(SeedRegressionTest, DeviceZeroPassesByLuckWithoutEntryBinding) {
  // Why GE's tests on device 0 never saw it: the quirk binds device 0.
  auto sim = testing::InstallSim(kCluster);
  services::ExchangeOptions opts;
  opts.bind_at_entry = false;
  ExchangeService svc(sim.get(), opts);
  rt::ThreadPool pool("deploy", 2);
  Status s = pool.Submit([&] {
                   return svc.SubmitEventSync(0, CreateGroupRequest{"g", 1024},
                                              nullptr, 5000);
                 })
                 .get();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(testing::ImplicitBindings(*sim, {0}), 1u);  // and it shows
}

}  // namespace
}  // namespace hflow
