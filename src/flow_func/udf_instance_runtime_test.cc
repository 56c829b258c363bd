// UdfInstance tests with UDFs registered inside this binary (see
// udf_instance_create_test.cc), what a Proc runs with: FlowBufferFactory
// inside and outside Proc, the log ext header, the binding token's device
// check, and queue-style procs.
#include <gtest/gtest.h>

#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/lib/flow_func_internal.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/udf_instance.h"
#include "flow_func/udf_instance_test_util.h"
#include "flow_msg_fakes.h"
#include "udf_test_util.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::FlowMsg;
using FlowFunc::MetaContext;
using FlowFunc::MetaParams;
using FlowFunc::MetaRunContext;
using FlowFunc::TensorDataType;
using testing::UdfHarness;
using udf_instance_test::Contains;
using udf_instance_test::FlowMsgQueue;
using udf_instance_test::g_hooks;
using udf_instance_test::kOk;
using udf_instance_test::kParamInvalid;
using udf_instance_test::Msgs;
using udf_instance_test::Queues;
using udf_instance_test::UdfInstanceTest;

// ---- FlowBufferFactory ----

uint64_t MemUsed(rt::SimRuntime& sim, int32_t device) {
  rt::DeviceStats st;
  EXPECT_TRUE(sim.GetDeviceStats(device, &st).ok());
  return st.mem_used_bytes;
}

TEST_F(UdfInstanceTest, FlowBufferFactoryInsideProcAllocatesOnTheDevice) {
  UdfHarness h({3, 6, 7}, 6);
  // A group without caches: every allocation shows in the device's memory.
  ASSERT_TRUE(
      h.svc()
          .SubmitEventSync(6, services::CreateGroupRequest{"direct", 16 << 20},
                           nullptr)
          .ok());
  InstanceEnv env = h.Env("fbf", 1, 1);
  env.allocator =
      std::make_shared<MsgAllocator>(&h.svc(), 6, "direct", "deployer");
  const uint64_t base6 = MemUsed(h.sim(), 6);
  const uint64_t base3 = MemUsed(h.sim(), 3);

  std::shared_ptr<FlowFunc::Tensor> tensor;
  uint64_t used_in_proc = 0;
  int32_t out_rc = -1;
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& c, const Msgs&) {
    tensor = FlowFunc::FlowBufferFactory::AllocTensor({4, 256},
                                                      TensorDataType::DT_INT32);
    if (!tensor) return FlowFunc::FLOW_FUNC_FAILED;
    auto* p = static_cast<int32_t*>(tensor->GetData());
    for (int i = 0; i < 1024; ++i) p[i] = i;
    used_in_proc = MemUsed(h.sim(), 6);
    auto msg = c->ToFlowMsg(tensor);
    out_rc = c->SetOutput(0, msg);
    return kOk;
  };
  auto inst = Make(h, {"UdfInstanceTest_MultiA"}, env);
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {}), kOk);
  ASSERT_NE(tensor, nullptr);
  auto* mt = dynamic_cast<MbufTensor*>(tensor.get());
  ASSERT_NE(mt, nullptr) << "FlowBufferFactory inside Proc gave a host tensor";
  EXPECT_EQ(mt->mbuf()->device(), 6);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tensor->GetData()) % 512, 0u);
  EXPECT_GE(used_in_proc, base6 + 4096);
  EXPECT_EQ(MemUsed(h.sim(), 3), base3);
  EXPECT_EQ(out_rc, kOk);
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_NE(out[0].second->GetTensor(), nullptr);
  EXPECT_EQ(out[0].second->GetTensor()->GetShape(),
            (std::vector<int64_t>{4, 256}));
  EXPECT_EQ(out[0].second->GetTensor()->GetData(), tensor->GetData())
      << "ToFlowMsg of a runtime tensor should not copy";
  auto values = UdfHarness::Values<int32_t>(*out[0].second);
  ASSERT_EQ(values.size(), 1024u);
  EXPECT_EQ(values[1023], 1023);
  // Everything dropped: the device memory returns.
  tensor.reset();
  h.ClearOutputs();
  out.clear();
  EXPECT_EQ(MemUsed(h.sim(), 6), base6);
}

TEST_F(UdfInstanceTest, FlowBufferFactoryOutsideProcFallsBackToHostMemory) {
  UdfHarness h({3, 6, 7}, 6);
  auto inst = Make(h, "UdfInstanceTest_Single");
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {}), kOk);
  const uint64_t base = MemUsed(h.sim(), 6);
  auto t =
      FlowFunc::FlowBufferFactory::AllocTensor({8}, TensorDataType::DT_FLOAT);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(dynamic_cast<MbufTensor*>(t.get()), nullptr);
  EXPECT_EQ(t->GetDataSize(), 32u);
  EXPECT_EQ(MemUsed(h.sim(), 6), base);
  // The host tensor becomes a device message by copy inside Proc.
  static_cast<float*>(t->GetData())[7] = 7.5f;
  std::shared_ptr<FlowMsg> msg;
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& c, const Msgs&) {
    msg = c->ToFlowMsg(t);
    return c->SetOutput(0, msg);
  };
  auto multi = Make(h, {"UdfInstanceTest_MultiA"}, h.Env("host", 1, 1));
  ASSERT_EQ(multi->Proc(*bound, 0, {}), kOk);
  ASSERT_NE(msg, nullptr);
  EXPECT_NE(msg->GetTensor()->GetData(), t->GetData());
  EXPECT_EQ(UdfHarness::Values<float>(*msg)[7], 7.5f);
  EXPECT_EQ(std::dynamic_pointer_cast<MbufFlowMsg>(msg)->mbuf()->device(), 6);
  // And once more outside: still host memory.
  auto t2 =
      FlowFunc::FlowBufferFactory::AllocTensor({8}, TensorDataType::DT_FLOAT);
  EXPECT_EQ(dynamic_cast<MbufTensor*>(t2.get()), nullptr);
}

// ---- Log header ----

class LogCapture {
 public:
  LogCapture() {
    FlowFunc::internal::SetLogLevel(FlowFunc::FlowFuncLogLevel::DEBUG);
    FlowFunc::internal::SetLogSink(
        [this](FlowFunc::FlowFuncLogLevel, const std::string& line) {
          std::lock_guard<std::mutex> lock(mu_);
          lines_.push_back(line);
        });
  }
  ~LogCapture() {
    FlowFunc::internal::SetLogSink({});
    FlowFunc::internal::ReloadLogLevelFromEnvironment();
  }
  std::vector<std::string> lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

TEST_F(UdfInstanceTest, LogHeaderDuringProcNamesNodeAndDevice) {
  UdfHarness h({3, 6, 7}, 7);
  LogCapture capture;
  std::string header_in_init, header_in_proc;
  g_hooks.single_init = [&](MetaContext*) {
    header_in_init = FlowFunc::FlowFuncLogger::GetLogExtHeader();
    return kOk;
  };
  g_hooks.single_proc = [&](MetaContext*, const Msgs&) {
    header_in_proc = FlowFunc::FlowFuncLogger::GetLogExtHeader();
    FLOW_FUNC_LOG_INFO("hello from proc %d", 42);
    throw std::runtime_error("logged failure");
    return kOk;
  };
  auto inst = Make(h, {"UdfInstanceTest_Single"}, h.Env("log_node", 1, 1));
  auto bound = h.Bind();
  EXPECT_EQ(inst->Proc(*bound, 0, {}), FlowFunc::FLOW_FUNC_FAILED);
  EXPECT_TRUE(Contains(header_in_init, "log_node")) << header_in_init;
  EXPECT_TRUE(Contains(header_in_init, "7")) << header_in_init;
  EXPECT_TRUE(Contains(header_in_proc, "log_node")) << header_in_proc;
  EXPECT_TRUE(Contains(header_in_proc, "device7")) << header_in_proc;
  bool hello = false, failure = false;
  for (const std::string& line : capture.lines()) {
    if (Contains(line, "hello from proc 42")) {
      hello = true;
      EXPECT_TRUE(Contains(line, "log_node")) << line;
      EXPECT_TRUE(Contains(line, "device7")) << line;
    }
    if (Contains(line, "logged failure")) {
      failure = true;
      EXPECT_TRUE(Contains(line, "log_node")) << line;
      EXPECT_TRUE(Contains(line, "UdfInstanceTest_Single")) << line;
    }
  }
  EXPECT_TRUE(hello);
  EXPECT_TRUE(failure) << "the escaping exception was not logged";
  // After the call the thread's header is cleared.
  EXPECT_STREQ(FlowFunc::FlowFuncLogger::GetLogExtHeader(), "");
}

// ---- The binding token ----

TEST_F(UdfInstanceTest, WrongDeviceBindingIsRejected) {
  UdfHarness h({2, 3, 4, 5}, 4);
  rt::DeviceContexts contexts(&h.sim());
  int init_calls = 0, proc_calls = 0;
  g_hooks.single_init = [&](MetaContext*) {
    ++init_calls;
    return kOk;
  };
  g_hooks.single_proc = [&](MetaContext*, const Msgs&) {
    ++proc_calls;
    return kOk;
  };
  std::unique_ptr<UdfInstance> inst;
  ASSERT_TRUE(UdfInstance::Create(Funcs({"UdfInstanceTest_Single"}),
                                  h.Env("bind_node", 1, 1), &inst)
                  .ok());
  {
    rt::ScopedDevice wrong(&contexts, 5);
    ASSERT_TRUE(wrong.status().ok()) << wrong.status().ToString();
    Status s = inst->Init(wrong);
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(init_calls, 0);
    EXPECT_EQ(inst->Proc(wrong, 0, {}), kParamInvalid);
    EXPECT_EQ(proc_calls, 0);
  }
  {
    // A token whose binding failed (no such device) proves nothing either.
    rt::ScopedDevice none(&contexts, 9);
    EXPECT_FALSE(none.status().ok());
    EXPECT_FALSE(inst->Init(none).ok());
    EXPECT_EQ(inst->Proc(none, 0, {}), kParamInvalid);
  }
  EXPECT_EQ(init_calls, 0);
  EXPECT_EQ(proc_calls, 0);
  // The right token works.
  rt::ScopedDevice right(&contexts, 4);
  EXPECT_TRUE(inst->Init(right).ok());
  EXPECT_EQ(inst->Proc(right, 0, {}), kOk);
  EXPECT_EQ(init_calls, 1);
  EXPECT_EQ(proc_calls, 1);
  // No context appeared on devices the instance does not use.
  for (int32_t d : {2, 3}) {
    rt::DeviceStats st;
    ASSERT_TRUE(h.sim().GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.contexts_created, 0u) << "device " << d;
  }
}

TEST_F(UdfInstanceTest, WrongDeviceBindingIsRejectedForMultiFunctions) {
  UdfHarness h({3, 6, 7}, 6);
  rt::DeviceContexts contexts(&h.sim());
  int calls = 0;
  g_hooks.multi_init = [&](const std::shared_ptr<MetaParams>&) {
    ++calls;
    return kOk;
  };
  g_hooks.proc_q = [&](const std::shared_ptr<MetaRunContext>&, const Queues&) {
    ++calls;
    return kOk;
  };
  std::unique_ptr<UdfInstance> inst;
  ASSERT_TRUE(UdfInstance::Create(Funcs({"UdfInstanceTest_MultiQ"}),
                                  h.Env("bind_multi", 1, 1), &inst)
                  .ok());
  rt::ScopedDevice wrong(&contexts, 3);
  EXPECT_FALSE(inst->Init(wrong).ok());
  EXPECT_EQ(inst->ProcQueues(wrong, 0, {}), kParamInvalid);
  EXPECT_EQ(calls, 0);
}

// ---- Stream functions (queue procs) ----

// A FlowMsgQueue with a fixed content (the executor's StreamQueue is tested
// in src/exec/stream_worker_test.cc).
class ListQueue final : public FlowMsgQueue {
 public:
  explicit ListQueue(std::vector<std::shared_ptr<FlowMsg>> m) : m_(m) {}
  int32_t Dequeue(std::shared_ptr<FlowMsg>& out, int32_t) override {
    if (m_.empty()) return FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR;
    out = m_.front();
    m_.erase(m_.begin());
    return kOk;
  }
  int32_t Depth() const override { return 8; }
  int32_t Size() const override { return static_cast<int32_t>(m_.size()); }

 private:
  std::vector<std::shared_ptr<FlowMsg>> m_;
};

TEST_F(UdfInstanceTest, StreamFunctionGetsTheQueuesAndOutputs) {
  UdfHarness h;
  auto a = h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {10});
  auto b = h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {20});
  std::vector<std::shared_ptr<FlowMsg>> got;
  g_hooks.proc_q = [&](const std::shared_ptr<MetaRunContext>& ctx,
                       const Queues& qs) {
    for (const auto& q : qs) {
      std::shared_ptr<FlowMsg> m;
      while (q->Dequeue(m, 0) == kOk) got.push_back(m);
    }
    return ctx->SetOutput(0, got.back());
  };
  auto inst = Make(h, {"UdfInstanceTest_MultiQ"}, h.Env("queues", 2, 1));
  auto bound = h.Bind();
  Queues qs{std::make_shared<ListQueue>(Msgs{a, b}),
            std::make_shared<ListQueue>(Msgs{b})};
  ASSERT_EQ(inst->ProcQueues(*bound, 0, qs), kOk);
  EXPECT_EQ(got, (Msgs{a, b, b}));
  ASSERT_EQ(h.outputs().size(), 1u);
  EXPECT_EQ(UdfHarness::Values<int32_t>(*h.outputs()[0].second),
            std::vector<int32_t>{20});
  // A stream function is not called per message, nor a message proc with
  // queues.
  EXPECT_EQ(inst->Proc(*bound, 0, {a}), FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT);
}

TEST_F(UdfInstanceTest, QueueAndMessageProcsInOneInstance) {
  UdfHarness h;
  int a_calls = 0;
  size_t q_inputs = 0;
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>&, const Msgs&) {
    ++a_calls;
    return kOk;
  };
  g_hooks.proc_q = [&](const std::shared_ptr<MetaRunContext>&,
                       const Queues& qs) {
    q_inputs = qs.size();
    return kOk;
  };
  auto inst = Make(h, {"UdfInstanceTest_MultiA", "UdfInstanceTest_MultiQ"},
                   h.Env("mixed_q", 2, 1));
  auto bound = h.Bind();
  auto x = h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {1});
  Queues qs{std::make_shared<ListQueue>(Msgs{x}),
            std::make_shared<ListQueue>(Msgs{x})};
  EXPECT_EQ(inst->ProcQueues(*bound, 1, qs), kOk);
  EXPECT_EQ(q_inputs, 2u);
  EXPECT_EQ(a_calls, 0);
  EXPECT_EQ(inst->ProcQueues(*bound, 0, qs),
            FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT);
  EXPECT_EQ(inst->Proc(*bound, 0, {x, x}), kOk);
  EXPECT_EQ(a_calls, 1);
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
