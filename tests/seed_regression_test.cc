// The seed regression (CANN GE dflow): deploy-pool threads that never bound a
// device submitted proxy events to devices 2..5 and failed with EE1018
// ("no valid context"), while device 0 passed through the default-context
// quirk. hflow binds at SubmitEventSync's entry; this test runs all six
// proxy events from such a pool, concurrently on 2..5 of a {0..7} cluster,
// and proves it would catch the bug by switching the entry binding off.
// The same for the seed's own path, a model's load on deploy threads (where
// model nodes are built): its weights go to device memory on the loading
// thread's binding, so an unbound pool fails on 2..5 and passes on 0 by
// luck, and the deployer's bound tasks pass everywhere.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#ifdef HFLOW_HAVE_MODELS
#include <dlfcn.h>

#include "deploy/deployer.h"
#include "flow_func/udf_library.h"
#include "model/model_test_util.h"
#include "rt/device_binding.h"
#endif

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

#ifdef HFLOW_HAVE_MODELS
// The model library's load entries (src/model/model_c_api.cc): the load
// the model UDF's Init makes on its deploy thread.
struct ModelLoad {
  using Acquire = void* (*)(const char*, const char*, const char*, const char*,
                            int, int*, char*, size_t);
  Acquire acquire = nullptr;
  void (*release)(void*) = nullptr;

  // Loads the model on `device` on the calling thread's binding.
  Status Load(const std::string& file, int32_t device, void** held) const {
    char error[2048] = {0};
    int code = 0;
    *held = acquire("onnx", file.c_str(), "{}", "", device, &code, error,
                    sizeof error);
    return *held ? Status::OK() : Status(StatusCode(code), error);
  }
};

ModelLoad FindModelLoad() {
  ModelLoad api;
  std::string path;
  EXPECT_TRUE(deploy::FindModelLibrary(&path).ok());
  EXPECT_TRUE(flow_func::LoadUdfLibrary(path).ok());
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(h, nullptr) << path;
  if (h == nullptr) return api;
  api.acquire =
      reinterpret_cast<ModelLoad::Acquire>(dlsym(h, "hflow_model_acquire"));
  api.release =
      reinterpret_cast<void (*)(void*)>(dlsym(h, "hflow_model_release"));
  dlclose(h);
  return api;
}

// A model with weights (its Reshape's shape), which go to device memory.
std::string WeightedModel() {
  return testing::ModelDir() + "/reshape_dyn.onnx";
}

// The binding switched off: pool threads that never bound load the model on
// 2..5 and fail as Ascend's runtime does (EE1018).
TEST(SeedRegressionTest, ModelLoadFromUnboundPoolFailsOnDevices2To5) {
  auto sim = testing::InstallSim(kCluster);
  const ModelLoad api = FindModelLoad();
  ASSERT_NE(api.acquire, nullptr);
  rt::ThreadPool pool("deploy", 4);
  std::vector<std::pair<std::optional<int32_t>, rt::ThreadPool::Task>> tasks;
  for (int32_t d : kUsed) {
    tasks.emplace_back(std::nullopt, [&api, d]() -> Status {
      void* held = nullptr;
      Status s = api.Load(WeightedModel(), d, &held);
      if (s.ok()) api.release(held);
      return s.ok() ? Status::Internal("device " + std::to_string(d) +
                                       " loaded without a binding")
                    : s;
    });
  }
  Status s = pool.RunAll(std::move(tasks));
  ASSERT_EQ(s.code(), StatusCode::kNoContext) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("no valid context is bound"));
  EXPECT_EQ(testing::ImplicitBindings(*sim, kCluster), 0u);
  for (int32_t d : kUsed) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, 0u) << "device " << d << ": nothing left";
  }
}

TEST(SeedRegressionTest, ModelLoadOnDeviceZeroPassesByLuckWithoutBinding) {
  auto sim = testing::InstallSim(kCluster);
  const ModelLoad api = FindModelLoad();
  ASSERT_NE(api.acquire, nullptr);
  rt::ThreadPool pool("deploy", 2);
  Status s = pool.Submit([&]() -> Status {
                   void* held = nullptr;
                   HFLOW_RETURN_IF_ERROR(api.Load(WeightedModel(), 0, &held));
                   api.release(held);
                   return Status::OK();
                 })
                 .get();
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(testing::ImplicitBindings(*sim, {0}), 1u);  // and it shows
}

// The fix, as the deployer runs it: each task binds its device first.
TEST(SeedRegressionTest, ModelLoadFromBoundPoolOnDevices2To5) {
  auto sim = testing::InstallSim(kCluster);
  const ModelLoad api = FindModelLoad();
  ASSERT_NE(api.acquire, nullptr);
  {
    rt::DeviceContexts contexts(sim.get());
    rt::ThreadPool pool("deploy", 4, &contexts);
    rt::ThreadPool::DeviceTasks tasks;
    for (int32_t d : kUsed) {
      tasks.emplace_back(d, [&api, d](const rt::ScopedDevice&) -> Status {
        void* held = nullptr;
        HFLOW_RETURN_IF_ERROR(api.Load(WeightedModel(), d, &held));
        api.release(held);  // the unload, on the same bound thread
        return Status::OK();
      });
    }
    Status s = pool.RunAll(std::move(tasks));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_EQ(testing::ImplicitBindings(*sim, kCluster), 0u);
  EXPECT_EQ(testing::ContextsCreated(*sim, {0, 1, 6, 7}), 0u);
  for (int32_t d : kUsed) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, 0u) << "device " << d;
  }
}
#endif  // HFLOW_HAVE_MODELS

}  // namespace
}  // namespace hflow
