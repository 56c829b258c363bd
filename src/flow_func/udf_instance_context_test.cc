// UdfInstance tests with UDFs registered inside this binary (see
// udf_instance_create_test.cc), the contexts' view of the env: SetOutput
// range, user data, ids and counts, attributes, the exception channel,
// RunFlowModel, and context allocations on the instance's device.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/invoked_model.h"
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
using udf_instance_test::g_hooks;
using udf_instance_test::kOk;
using udf_instance_test::kParamInvalid;
using udf_instance_test::Msgs;
using udf_instance_test::UdfInstanceTest;

// ---- The context's view of the env ----

TEST_F(UdfInstanceTest, SetOutputOfAMessageNotFromTheContextIsInvalid) {
  UdfHarness h;
  std::vector<int32_t> codes;
  uint8_t user_data[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  g_hooks.single_proc = [&](MetaContext* ctx, const Msgs&) {
    codes.push_back(ctx->SetOutput(0, std::make_shared<testing::BareMsg>()));
    codes.push_back(
        ctx->SetOutput(0, ctx->AllocTensorMsg({1}, TensorDataType::DT_INT32)));
    return kOk;
  };
  auto inst = Make(h, "UdfInstanceTest_Single", 1, 1);
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {std::make_shared<testing::BareMsg>()}), kOk);
  EXPECT_EQ(codes, (std::vector<int32_t>{kParamInvalid, kOk}));
  EXPECT_EQ(h.outputs().size(), 1u) << "only the context's message goes out";
  // User data of a foreign first input reads as zeros.
  g_hooks.single_proc = [&](MetaContext* ctx, const Msgs&) {
    return ctx->GetUserData(user_data, sizeof(user_data));
  };
  ASSERT_EQ(inst->Proc(*bound, 0, {std::make_shared<testing::BareMsg>()}), kOk);
  for (uint8_t b : user_data) EXPECT_EQ(b, 0);
}

TEST_F(UdfInstanceTest, SetOutputOutOfRangeIsInvalid) {
  UdfHarness h;
  std::vector<int32_t> codes;
  g_hooks.single_proc = [&](MetaContext* ctx, const Msgs& in) {
    codes.push_back(ctx->SetOutput(2, in[0]));
    codes.push_back(ctx->SetOutput(UINT32_MAX, in[0]));
    codes.push_back(ctx->SetOutput(0, nullptr));
    codes.push_back(ctx->SetOutput(1, in[0]));
    codes.push_back(ctx->SetMultiOutputs(3, {in[0]}, FlowFunc::OutOptions()));
    return kOk;
  };
  auto inst = Make(h, "UdfInstanceTest_Single", 1, 2);
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0,
                       {h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {1})}),
            kOk);
  EXPECT_EQ(codes, (std::vector<int32_t>{kParamInvalid, kParamInvalid,
                                         kParamInvalid, kOk, kParamInvalid}));
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, 1u);

  codes.clear();
  h.ClearOutputs();
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& ctx,
                       const Msgs& in) {
    codes.push_back(ctx->SetOutput(2, in[0]));
    codes.push_back(ctx->SetOutput(2, in[0], FlowFunc::OutOptions()));
    codes.push_back(ctx->SetOutput(0, in[0]));
    return kOk;
  };
  auto multi = Make(h, {"UdfInstanceTest_MultiA"}, h.Env("mo", 1, 2));
  ASSERT_EQ(
      multi->Proc(*bound, 0,
                  {h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {1})}),
      kOk);
  EXPECT_EQ(codes, (std::vector<int32_t>{kParamInvalid, kParamInvalid, kOk}));
  EXPECT_EQ(h.outputs().size(), 1u);
}

TEST_F(UdfInstanceTest, GetUserDataReadsTheFirstInput) {
  UdfHarness h;
  auto first = std::static_pointer_cast<MbufFlowMsg>(
      h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {1}));
  auto second = std::static_pointer_cast<MbufFlowMsg>(
      h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {2}));
  uint8_t bytes[64];
  for (int i = 0; i < 64; ++i) bytes[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(first->head().SetUserData(bytes, 64).ok());
  uint8_t other[64];
  std::memset(other, 0xEE, sizeof(other));
  ASSERT_TRUE(second->head().SetUserData(other, 64).ok());

  struct Read {
    size_t size, offset;
    int32_t rc;
    std::vector<uint8_t> data;
  };
  auto reads = [](auto* ctx) {
    std::vector<Read> v;
    for (auto [size, offset] :
         std::vector<std::pair<size_t, size_t>>{{8, 0},
                                                {4, 60},
                                                {64, 0},
                                                {0, 64},
                                                {1, 64},
                                                {8, 60},
                                                {65, 0},
                                                {SIZE_MAX, 1},
                                                {1, SIZE_MAX}}) {
      std::vector<uint8_t> buf(size > 0 && size < 128 ? size : 1, 0xCC);
      int32_t rc = ctx->GetUserData(buf.data(), size, offset);
      v.push_back(
          Read{size, offset, rc, rc == kOk ? buf : std::vector<uint8_t>{}});
    }
    uint8_t one;
    v.push_back(Read{1, 0, ctx->GetUserData(nullptr, 1, 0), {}});
    (void)one;
    return v;
  };
  auto check = [&](const std::vector<Read>& v) {
    ASSERT_EQ(v.size(), 10u);
    EXPECT_EQ(v[0].rc, kOk);
    EXPECT_EQ(v[0].data, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}));
    EXPECT_EQ(v[1].rc, kOk);
    EXPECT_EQ(v[1].data, (std::vector<uint8_t>{61, 62, 63, 64}));
    EXPECT_EQ(v[2].rc, kOk);
    EXPECT_EQ(v[2].data, std::vector<uint8_t>(bytes, bytes + 64));
    EXPECT_EQ(v[3].rc, kOk);  // nothing, right at the end
    for (size_t i = 4; i < v.size(); ++i) {
      EXPECT_EQ(v[i].rc, kParamInvalid)
          << "size " << v[i].size << " offset " << v[i].offset;
    }
  };

  std::vector<Read> single_reads, multi_reads;
  g_hooks.single_proc = [&](MetaContext* ctx, const Msgs&) {
    single_reads = reads(ctx);
    return kOk;
  };
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& ctx,
                       const Msgs&) {
    multi_reads = reads(ctx.get());
    return kOk;
  };
  auto single = Make(h, "UdfInstanceTest_Single", 2, 1);
  auto multi = Make(h, {"UdfInstanceTest_MultiA"}, h.Env("ud", 2, 1));
  auto bound = h.Bind();
  ASSERT_EQ(single->Proc(*bound, 0, {first, second}), kOk);
  ASSERT_EQ(multi->Proc(*bound, 0, {first, second}), kOk);
  check(single_reads);
  check(multi_reads);
}

TEST_F(UdfInstanceTest, GetUserDataWithoutInputsIsZeros) {
  UdfHarness h;
  std::vector<uint8_t> buf(16, 0xCC);
  int32_t rc = -1;
  g_hooks.single_proc = [&](MetaContext* ctx, const Msgs&) {
    rc = ctx->GetUserData(buf.data(), buf.size(), 0);
    return kOk;
  };
  auto inst = Make(h, "UdfInstanceTest_Single", 0, 1);
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {}), kOk);
  EXPECT_EQ(rc, kOk);
  EXPECT_EQ(buf, std::vector<uint8_t>(16, 0));
}

TEST_F(UdfInstanceTest, IdsCountsAndPathsComeFromTheEnv) {
  UdfHarness h({3, 6, 7}, 6);
  AttrMap attrs;
  ASSERT_TRUE(AttrMapFromJson(nlohmann::json::parse(R"({"k": 5, "s": "v"})"),
                              "attrs", &attrs)
                  .ok());
  InstanceEnv env = h.Env("env_node", 2, 3, attrs);
  env.work_path = "/tmp/udf_work";
  env.instance_id = 3;
  env.instance_num = 5;

  struct Seen {
    int32_t device = -1;
    size_t in = 0, out = 0;
    std::string path, name;
    int32_t id = -1, num = -1;
    int64_t k = 0;
    int32_t missing = 0;
  };
  Seen single_init, single_proc, multi_init;
  auto of = [](auto* c) {
    Seen s;
    s.device = c->GetRunningDeviceId();
    s.in = c->GetInputNum();
    s.out = c->GetOutputNum();
    s.path = c->GetWorkPath();
    return s;
  };
  g_hooks.single_init = [&](MetaContext* c) {
    single_init = of(c);
    c->GetAttr("k", single_init.k);
    int64_t x;
    single_init.missing = c->GetAttr("absent", x);
    return kOk;
  };
  g_hooks.single_proc = [&](MetaContext* c, const Msgs&) {
    single_proc = of(c);
    c->GetAttr("k", single_proc.k);
    return kOk;
  };
  g_hooks.multi_init = [&](const std::shared_ptr<MetaParams>& p) {
    multi_init = of(p.get());
    multi_init.name = p->GetName();
    multi_init.id = p->GetRunningInstanceId();
    multi_init.num = p->GetRunningInstanceNum();
    p->GetAttr("k", multi_init.k);
    int64_t x;
    multi_init.missing = p->GetAttr("absent", x);
    return kOk;
  };
  auto single = Make(h, {"UdfInstanceTest_Single"}, env);
  auto multi = Make(h, {"UdfInstanceTest_MultiA"}, env);
  auto bound = h.Bind();
  ASSERT_EQ(single->Proc(*bound, 0, {}), kOk);

  for (const Seen* s : {&single_init, &single_proc, &multi_init}) {
    EXPECT_EQ(s->device, 6);
    EXPECT_EQ(s->in, 2u);
    EXPECT_EQ(s->out, 3u);
    EXPECT_EQ(s->path, "/tmp/udf_work");
    EXPECT_EQ(s->k, 5);
  }
  EXPECT_EQ(single_init.missing, FlowFunc::FLOW_FUNC_ERR_ATTR_NOT_EXITS);
  EXPECT_EQ(multi_init.missing, FlowFunc::FLOW_FUNC_ERR_ATTR_NOT_EXITS);
  EXPECT_EQ(multi_init.name, "env_node");
  EXPECT_EQ(multi_init.id, 3);
  EXPECT_EQ(multi_init.num, 5);
  EXPECT_EQ(single->env().device, 6);
}

TEST_F(UdfInstanceTest, ExceptionChannelReachesTheEnv) {
  UdfHarness h;
  std::vector<std::pair<int32_t, uint64_t>> raised;
  InstanceEnv env = h.Env("exc", 1, 1);
  env.raise = [&](int32_t code, uint64_t ctx) {
    raised.emplace_back(code, ctx);
  };
  env.get_exception = [](int32_t* code, uint64_t* ctx) {
    *code = -77;
    *ctx = 0xFEEDull;
    return true;
  };
  bool got = false, got_multi = false;
  int32_t code = 0, code_multi = 0;
  uint64_t uctx = 0, uctx_multi = 0;
  g_hooks.single_proc = [&](MetaContext* c, const Msgs&) {
    c->RaiseException(11, 1001);
    got = c->GetException(code, uctx);
    return kOk;
  };
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& c, const Msgs&) {
    c->RaiseException(12, 1002);
    got_multi = c->GetException(code_multi, uctx_multi);
    return kOk;
  };
  auto single = Make(h, {"UdfInstanceTest_Single"}, env);
  auto multi = Make(h, {"UdfInstanceTest_MultiA"}, env);
  auto bound = h.Bind();
  ASSERT_EQ(single->Proc(*bound, 0, {}), kOk);
  ASSERT_EQ(multi->Proc(*bound, 0, {}), kOk);
  EXPECT_EQ(raised, (std::vector<std::pair<int32_t, uint64_t>>{{11, 1001},
                                                               {12, 1002}}));
  EXPECT_TRUE(got);
  EXPECT_EQ(code, -77);
  EXPECT_EQ(uctx, 0xFEEDull);
  EXPECT_TRUE(got_multi);
  EXPECT_EQ(code_multi, -77);
  EXPECT_EQ(uctx_multi, 0xFEEDull);
}

TEST_F(UdfInstanceTest, ExceptionChannelWithoutHandlersIsHarmless) {
  UdfHarness h;
  bool got = true;
  g_hooks.single_proc = [&](MetaContext* c, const Msgs&) {
    c->RaiseException(1, 2);
    int32_t code = 0;
    uint64_t uctx = 0;
    got = c->GetException(code, uctx);
    return kOk;
  };
  auto inst = Make(h, "UdfInstanceTest_Single");
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {}), kOk);
  EXPECT_FALSE(got);
}

// RunFlowModel's plumbing, with a fake model loader (the model library's
// real one is tested in tests/model/model_invoke_test.cc): the instance's
// Init loads each invoked model on its bound thread for its device; a run
// reaches the model with the instance's allocators; an unknown key and a
// run past its timeout fail; without a loader, Init fails saying why.
class FakeModel : public InvokedModel {
 public:
  explicit FakeModel(int sleep_ms) : sleep_ms_(sleep_ms) {}
  int32_t Run(const Msgs& in, const MsgMakers& make, Msgs* out) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
    auto m = make.tensor({static_cast<int64_t>(in.size())},
                         TensorDataType::DT_INT32);
    if (!m) return FlowFunc::FLOW_FUNC_FAILED;
    out->push_back(m);
    return kOk;
  }

 private:
  int sleep_ms_;
};

TEST_F(UdfInstanceTest, RunFlowModelRunsTheInvokedModels) {
  UdfHarness h({3, 6, 7}, 7);
  std::vector<std::pair<std::string, int32_t>> loads;  // key, bound device
  SetInvokedModelLoader([&](const InvokedModelSpec& spec, int32_t device,
                            std::unique_ptr<InvokedModel>* out) {
    int32_t bound = -1;
    (void)h.sim().GetDevice(&bound);
    EXPECT_EQ(bound, device);
    loads.push_back({spec.key, device});
    *out = std::make_unique<FakeModel>(spec.key == "slow" ? 50 : 0);
    return Status::OK();
  });
  int32_t rc_fast = -1, rc_slow = -1, rc_none = -1;
  Msgs got_fast, got_slow;
  g_hooks.single_proc = [&](MetaContext* c, const Msgs& in) {
    rc_fast = c->RunFlowModel("fast", in, got_fast, 1000);
    rc_slow = c->RunFlowModel("slow", in, got_slow, 1);
    Msgs none;
    rc_none = c->RunFlowModel("none", in, none, 1000);
    return kOk;
  };
  InstanceEnv env = h.Env("node_invoke", 1, 1);
  env.invoked.resize(2);
  env.invoked[0].key = "fast";
  env.invoked[1].key = "slow";
  auto inst = Make(h, {"UdfInstanceTest_Single"}, std::move(env));
  ASSERT_NE(inst, nullptr);
  EXPECT_EQ(loads, (std::vector<std::pair<std::string, int32_t>>{{"fast", 7},
                                                                 {"slow", 7}}));
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {}), kOk);
  EXPECT_EQ(rc_fast, kOk);
  ASSERT_EQ(got_fast.size(), 1u);
  EXPECT_EQ(got_fast[0]->GetTensor()->GetDataType(), TensorDataType::DT_INT32);
  EXPECT_EQ(rc_slow, FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR);
  EXPECT_TRUE(got_slow.empty());
  EXPECT_EQ(rc_none, FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);

  // No loader (no model library in the process): Init fails naming the
  // node and the closure.
  SetInvokedModelLoader(nullptr);
  InstanceEnv env2 = h.Env("node_orphan", 1, 1);
  env2.invoked.resize(1);
  env2.invoked[0].key = "m";
  std::unique_ptr<UdfInstance> orphan;
  ASSERT_TRUE(UdfInstance::Create(Funcs({"UdfInstanceTest_Single"}),
                                  std::move(env2), &orphan)
                  .ok());
  const Status s = orphan->Init(*bound);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported) << s.ToString();
  EXPECT_TRUE(udf_instance_test::Contains(s.message(), "node_orphan"))
      << s.ToString();
  EXPECT_TRUE(udf_instance_test::Contains(s.message(), "'m'")) << s.ToString();
}

TEST_F(UdfInstanceTest, ContextAllocationsLiveOnTheInstanceDevice) {
  UdfHarness h({3, 6, 7}, 7);
  std::vector<std::shared_ptr<FlowMsg>> made;
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& c, const Msgs&) {
    made.push_back(c->AllocTensorMsg({2}, TensorDataType::DT_FLOAT));
    made.push_back(
        c->AllocTensorMsgWithAlign({2}, TensorDataType::DT_FLOAT, 1024));
    made.push_back(c->AllocTensorListMsg(
        {{1}, {2}}, {TensorDataType::DT_INT8, TensorDataType::DT_INT8}, 512));
    made.push_back(c->AllocRawDataMsg(10, 512));
    made.push_back(
        c->AllocEmptyDataMsg(FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA));
    // Invalid requests give null, not a crash.
    made.push_back(c->AllocTensorMsg({-1}, TensorDataType::DT_FLOAT));
    made.push_back(c->AllocTensorMsg({1}, TensorDataType::DT_UNDEFINED));
    made.push_back(c->AllocRawDataMsg(-5, 512));
    return kOk;
  };
  auto inst = Make(h, {"UdfInstanceTest_MultiA"}, h.Env("alloc", 1, 1));
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {}), kOk);
  ASSERT_EQ(made.size(), 8u);
  for (size_t i = 0; i < 5; ++i) {
    auto m = std::dynamic_pointer_cast<MbufFlowMsg>(made[i]);
    ASSERT_NE(m, nullptr) << i;
    EXPECT_EQ(m->mbuf()->device(), 7) << i;
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(made[1]->GetTensor()->GetData()) % 1024,
            0u);
  for (size_t i = 5; i < 8; ++i) EXPECT_EQ(made[i], nullptr) << i;
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
