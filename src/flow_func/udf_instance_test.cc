// UdfInstance tests with UDFs registered inside this binary: creation from
// registered names (unknown names, single/multi mixing), Init/Proc failures
// and exceptions, Proc codes, the contexts' view of the env (SetOutput
// range, user data, ids and counts, attributes, the exception channel,
// RunFlowModel), FlowBufferFactory inside and outside Proc, the log ext
// header, the binding token's device check, and queue-style procs.
//
// The test UDFs delegate to per-test hooks (globals reset by the fixture).
#include "flow_func/udf_instance.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/lib/flow_func_internal.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_msg_fakes.h"
#include "udf_test_util.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::FlowMsg;
using FlowFunc::FlowMsgQueue;
using FlowFunc::MetaContext;
using FlowFunc::MetaParams;
using FlowFunc::MetaRunContext;
using FlowFunc::TensorDataType;
using testing::UdfHarness;
using Msgs = std::vector<std::shared_ptr<FlowMsg>>;
using Queues = std::vector<std::shared_ptr<FlowMsgQueue>>;

constexpr int32_t kOk = FlowFunc::FLOW_FUNC_SUCCESS;
constexpr int32_t kParamInvalid = FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;

// ---- Hooks the test UDFs call ----

struct Hooks {
  std::function<int32_t(MetaContext*)> single_init;
  std::function<int32_t(MetaContext*, const Msgs&)> single_proc;
  std::function<int32_t(const std::shared_ptr<MetaParams>&)> multi_init;
  std::function<int32_t(const std::shared_ptr<MetaRunContext>&, const Msgs&)>
      proc_a;
  std::function<int32_t(const std::shared_ptr<MetaRunContext>&, const Msgs&)>
      proc_b;
  std::function<int32_t(const std::shared_ptr<MetaRunContext>&, const Queues&)>
      proc_q;
  std::vector<const void*> objects;  // the HookMulti each multi proc ran on
};
Hooks g_hooks;

class HookFlowFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override {
    return g_hooks.single_init ? g_hooks.single_init(context_) : kOk;
  }
  int32_t Proc(const Msgs& in) override {
    return g_hooks.single_proc ? g_hooks.single_proc(context_, in) : kOk;
  }
};
REGISTER_FLOW_FUNC("UdfInstanceTest_Single", HookFlowFunc);

class AlwaysThrowsOnInit : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { throw std::runtime_error("init exploded"); }
  int32_t Proc(const Msgs&) override { return kOk; }
};
REGISTER_FLOW_FUNC("UdfInstanceTest_Thrower", AlwaysThrowsOnInit);

class HookMulti : public FlowFunc::MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<MetaParams>& p) override {
    return g_hooks.multi_init ? g_hooks.multi_init(p) : kOk;
  }
  int32_t ProcA(const std::shared_ptr<MetaRunContext>& c, const Msgs& in) {
    g_hooks.objects.push_back(this);
    return g_hooks.proc_a ? g_hooks.proc_a(c, in) : kOk;
  }
  int32_t ProcB(const std::shared_ptr<MetaRunContext>& c, const Msgs& in) {
    g_hooks.objects.push_back(this);
    return g_hooks.proc_b ? g_hooks.proc_b(c, in) : kOk;
  }
  int32_t ProcQ(const std::shared_ptr<MetaRunContext>& c, const Queues& in) {
    g_hooks.objects.push_back(this);
    return g_hooks.proc_q ? g_hooks.proc_q(c, in) : kOk;
  }
};
FLOW_FUNC_REGISTRAR(HookMulti)
    .RegProcFunc("UdfInstanceTest_MultiA", &HookMulti::ProcA)
    .RegProcFunc("UdfInstanceTest_MultiB", &HookMulti::ProcB)
    .RegProcFunc("UdfInstanceTest_MultiQ", &HookMulti::ProcQ);

// ---- Fixture ----

class UdfInstanceTest : public ::testing::Test {
 protected:
  void SetUp() override { g_hooks = Hooks(); }
  void TearDown() override { g_hooks = Hooks(); }

  static std::vector<FuncDesc> Funcs(std::initializer_list<const char*> names) {
    std::vector<FuncDesc> v;
    for (const char* n : names) v.push_back(FuncDesc{n, {}, {}, {}});
    return v;
  }

  // Creates and Inits; fails the test on error.
  static std::unique_ptr<UdfInstance> Make(
      UdfHarness& h, std::initializer_list<const char*> names,
      InstanceEnv env) {
    std::unique_ptr<UdfInstance> inst;
    Status s = UdfInstance::Create(Funcs(names), std::move(env), &inst);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!inst) return nullptr;
    auto bound = h.Bind();
    s = inst->Init(*bound);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return inst;
  }
  static std::unique_ptr<UdfInstance> Make(UdfHarness& h, const char* name,
                                           size_t in = 1, size_t out = 1) {
    return Make(h, {name}, h.Env("node_" + std::string(name), in, out));
  }
};

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// ---- Creation ----

TEST_F(UdfInstanceTest, UnknownFunctionIsNotFoundNamingNodeAndFunction) {
  UdfHarness h;
  std::unique_ptr<UdfInstance> inst;
  Status s = UdfInstance::Create(Funcs({"UdfInstanceTest_NoSuchFunc"}),
                                 h.Env("my_node", 1, 1), &inst);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "my_node")) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "UdfInstanceTest_NoSuchFunc"))
      << s.ToString();
  EXPECT_EQ(inst, nullptr);

  // An unknown second function of a multi-function UDF, too.
  s = UdfInstance::Create(
      Funcs({"UdfInstanceTest_MultiA", "UdfInstanceTest_Nope"}),
      h.Env("multi_node", 1, 1), &inst);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "multi_node")) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "UdfInstanceTest_Nope")) << s.ToString();
  EXPECT_EQ(inst, nullptr);
}

TEST_F(UdfInstanceTest, NoFunctionsOrNoAllocatorIsInvalid) {
  UdfHarness h;
  std::unique_ptr<UdfInstance> inst;
  Status s = UdfInstance::Create({}, h.Env("empty_node", 1, 1), &inst);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "empty_node")) << s.ToString();
  InstanceEnv env = h.Env("no_alloc", 1, 1);
  env.allocator = nullptr;
  s = UdfInstance::Create(Funcs({"UdfInstanceTest_Single"}), env, &inst);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_EQ(inst, nullptr);
}

TEST_F(UdfInstanceTest, SingleFunctionCannotBeMixedWithOthers) {
  UdfHarness h;
  std::unique_ptr<UdfInstance> inst;
  for (auto names :
       {Funcs({"UdfInstanceTest_Single", "UdfInstanceTest_MultiA"}),
        Funcs({"UdfInstanceTest_Single", "UdfInstanceTest_Single"}),
        Funcs({"UdfInstanceTest_Single", "UdfInstanceTest_Thrower"})}) {
    Status s = UdfInstance::Create(names, h.Env("mixed", 1, 1), &inst);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_TRUE(Contains(s.ToString(), "mixed")) << s.ToString();
    EXPECT_TRUE(Contains(s.ToString(), "UdfInstanceTest_Single"))
        << s.ToString();
    EXPECT_EQ(inst, nullptr);
  }
}

// Regression: the same mix with the multi-function proc first is the same
// invalid combination (it was once reported as kNotFound).
TEST_F(UdfInstanceTest, SingleFunctionAfterAMultiProcIsInvalidArgument) {
  UdfHarness h;
  std::unique_ptr<UdfInstance> inst;
  Status s = UdfInstance::Create(
      Funcs({"UdfInstanceTest_MultiA", "UdfInstanceTest_Single"}),
      h.Env("mixed2", 1, 1), &inst);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "mixed2")) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "UdfInstanceTest_Single")) << s.ToString();
}

TEST_F(UdfInstanceTest, KindsAreReported) {
  UdfHarness h;
  auto single = Make(h, "UdfInstanceTest_Single");
  ASSERT_NE(single, nullptr);
  EXPECT_FALSE(single->is_multi());
  auto multi = Make(h, {"UdfInstanceTest_MultiA", "UdfInstanceTest_MultiQ"},
                    h.Env("m", 1, 1));
  ASSERT_NE(multi, nullptr);
  EXPECT_TRUE(multi->is_multi());
  EXPECT_EQ(multi->funcs().size(), 2u);
}

// ---- Init ----

TEST_F(UdfInstanceTest, InitThatThrowsFailsNamingNodeAndFunction) {
  UdfHarness h;
  std::unique_ptr<UdfInstance> inst;
  ASSERT_TRUE(UdfInstance::Create(Funcs({"UdfInstanceTest_Thrower"}),
                                  h.Env("throw_node", 1, 1), &inst)
                  .ok());
  auto bound = h.Bind();
  Status s = inst->Init(*bound);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.ToString(), "throw_node")) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "UdfInstanceTest_Thrower"))
      << s.ToString();
  EXPECT_TRUE(
      Contains(s.ToString(), std::to_string(FlowFunc::FLOW_FUNC_FAILED)))
      << s.ToString();
}

TEST_F(UdfInstanceTest, InitReturningACodeFailsWithThatCode) {
  UdfHarness h;
  g_hooks.single_init = [](MetaContext*) { return 123; };
  std::unique_ptr<UdfInstance> inst;
  ASSERT_TRUE(UdfInstance::Create(Funcs({"UdfInstanceTest_Single"}),
                                  h.Env("code_node", 1, 1), &inst)
                  .ok());
  auto bound = h.Bind();
  Status s = inst->Init(*bound);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.ToString(), "code_node")) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "UdfInstanceTest_Single")) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "123")) << s.ToString();
}

TEST_F(UdfInstanceTest, MultiInitThatThrowsOrFailsIsReported) {
  UdfHarness h;
  g_hooks.multi_init = [](const std::shared_ptr<MetaParams>&) -> int32_t {
    throw 42;  // not even a std::exception
  };
  std::unique_ptr<UdfInstance> inst;
  ASSERT_TRUE(UdfInstance::Create(Funcs({"UdfInstanceTest_MultiA"}),
                                  h.Env("multi_throw", 1, 1), &inst)
                  .ok());
  auto bound = h.Bind();
  Status s = inst->Init(*bound);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.ToString(), "multi_throw")) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "UdfInstanceTest_MultiA")) << s.ToString();

  g_hooks.multi_init = [](const std::shared_ptr<MetaParams>&) { return 7; };
  s = inst->Init(*bound);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.ToString(), "7")) << s.ToString();
}

// ---- Proc ----

TEST_F(UdfInstanceTest, ProcThatThrowsFailsAndTheInstanceKeepsWorking) {
  UdfHarness h;
  int mode = 0;
  g_hooks.single_proc = [&](MetaContext* ctx, const Msgs& in) -> int32_t {
    if (mode == 1) throw std::runtime_error("proc exploded");
    if (mode == 2) throw "a C string";
    return ctx->SetOutput(0, in[0]);
  };
  auto inst = Make(h, "UdfInstanceTest_Single");
  auto bound = h.Bind();
  auto x = h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {5});
  mode = 1;
  EXPECT_EQ(inst->Proc(*bound, 0, {x}), FlowFunc::FLOW_FUNC_FAILED);
  mode = 2;
  EXPECT_EQ(inst->Proc(*bound, 0, {x}), FlowFunc::FLOW_FUNC_FAILED);
  mode = 0;
  EXPECT_EQ(inst->Proc(*bound, 0, {x}), kOk);
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(UdfHarness::Values<int32_t>(*out[0].second),
            std::vector<int32_t>{5});
}

TEST_F(UdfInstanceTest, MultiProcThatThrowsFailsAndKeepsWorking) {
  UdfHarness h;
  bool boom = true;
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& ctx,
                       const Msgs& in) -> int32_t {
    if (boom) throw std::logic_error("bad");
    return ctx->SetOutput(0, in[0]);
  };
  auto inst = Make(h, {"UdfInstanceTest_MultiA"}, h.Env("ma", 1, 1));
  auto bound = h.Bind();
  auto x = h.Tensor<int8_t>(TensorDataType::DT_INT8, {2}, {1, 2});
  EXPECT_EQ(inst->Proc(*bound, 0, {x}), FlowFunc::FLOW_FUNC_FAILED);
  boom = false;
  EXPECT_EQ(inst->Proc(*bound, 0, {x}), kOk);
  EXPECT_EQ(h.outputs().size(), 1u);
}

TEST_F(UdfInstanceTest, ProcReturnCodeIsReturnedUnchanged) {
  UdfHarness h;
  int32_t code = 0;
  g_hooks.single_proc = [&](MetaContext*, const Msgs&) { return code; };
  g_hooks.proc_b = [&](const std::shared_ptr<MetaRunContext>&, const Msgs&) {
    return code;
  };
  auto single = Make(h, "UdfInstanceTest_Single");
  auto multi = Make(h, {"UdfInstanceTest_MultiA", "UdfInstanceTest_MultiB"},
                    h.Env("mb", 1, 1));
  auto bound = h.Bind();
  for (int32_t c :
       {0, 1, -1, 9900001, FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR,
        FlowFunc::FLOW_FUNC_FAILED, FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID,
        INT32_MIN, INT32_MAX}) {
    code = c;
    EXPECT_EQ(single->Proc(*bound, 0, {}), c);
    EXPECT_EQ(multi->Proc(*bound, 1, {}), c);  // ProcB
  }
}

TEST_F(UdfInstanceTest, ProcIndexSelectsTheFunctionAndOutOfRangeIsInvalid) {
  UdfHarness h;
  g_hooks.proc_a = [](const std::shared_ptr<MetaRunContext>&, const Msgs&) {
    return 1;
  };
  g_hooks.proc_b = [](const std::shared_ptr<MetaRunContext>&, const Msgs&) {
    return 2;
  };
  auto multi = Make(h, {"UdfInstanceTest_MultiA", "UdfInstanceTest_MultiB"},
                    h.Env("mab", 1, 1));
  auto bound = h.Bind();
  EXPECT_EQ(multi->Proc(*bound, 0, {}), 1);
  EXPECT_EQ(multi->Proc(*bound, 1, {}), 2);
  EXPECT_EQ(multi->Proc(*bound, 2, {}), kParamInvalid);
  auto single = Make(h, "UdfInstanceTest_Single");
  EXPECT_EQ(single->Proc(*bound, 1, {}), kParamInvalid);
}

TEST_F(UdfInstanceTest, MultiProcsShareOneObjectPerInstance) {
  UdfHarness h;
  auto inst = Make(h,
                   {"UdfInstanceTest_MultiA", "UdfInstanceTest_MultiB",
                    "UdfInstanceTest_MultiQ"},
                   h.Env("share", 1, 1));
  auto inst2 = Make(h, {"UdfInstanceTest_MultiA"}, h.Env("share2", 1, 1));
  auto bound = h.Bind();
  EXPECT_EQ(inst->Proc(*bound, 0, {}), kOk);
  EXPECT_EQ(inst->Proc(*bound, 1, {}), kOk);
  EXPECT_EQ(inst->Proc(*bound, 2, {}), kOk);
  EXPECT_EQ(inst2->Proc(*bound, 0, {}), kOk);
  ASSERT_EQ(g_hooks.objects.size(), 4u);
  EXPECT_EQ(g_hooks.objects[0], g_hooks.objects[1]);
  EXPECT_EQ(g_hooks.objects[0], g_hooks.objects[2]);
  EXPECT_NE(g_hooks.objects[0], g_hooks.objects[3])
      << "instances share an object";
}

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

TEST_F(UdfInstanceTest, RunFlowModelIsNotSupported) {
  UdfHarness h;
  int32_t single_rc = 0, multi_rc = 0;
  g_hooks.single_proc = [&](MetaContext* c, const Msgs& in) {
    Msgs out;
    single_rc = c->RunFlowModel("model", in, out, 100);
    return kOk;
  };
  g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& c,
                       const Msgs& in) {
    Msgs out;
    multi_rc = c->RunFlowModel(nullptr, in, out, -1);
    return kOk;
  };
  auto single = Make(h, "UdfInstanceTest_Single");
  auto multi = Make(h, {"UdfInstanceTest_MultiA"}, h.Env("rfm", 1, 1));
  auto bound = h.Bind();
  ASSERT_EQ(single->Proc(*bound, 0, {}), kOk);
  ASSERT_EQ(multi->Proc(*bound, 0, {}), kOk);
  EXPECT_EQ(single_rc, FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT);
  EXPECT_EQ(multi_rc, FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT);
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
  EXPECT_EQ(inst->Proc(wrong, 0, {}), kParamInvalid);
  EXPECT_EQ(calls, 0);
}

// ---- Queue-style procs ----

TEST_F(UdfInstanceTest, QueueProcGetsOneQueuePerInput) {
  UdfHarness h;
  auto a = h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {10});
  auto b = h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {20});
  auto c = h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {30});
  std::vector<std::shared_ptr<FlowMsg>> got;
  std::vector<int32_t> sizes_before, sizes_after, second_rc;
  size_t queue_count = 0;
  g_hooks.proc_q = [&](const std::shared_ptr<MetaRunContext>& ctx,
                       const Queues& qs) {
    queue_count = qs.size();
    for (const auto& q : qs) {
      sizes_before.push_back(q->Size());
      std::shared_ptr<FlowMsg> m;
      if (q->Dequeue(m, 0) != kOk) return FlowFunc::FLOW_FUNC_FAILED;
      got.push_back(m);
      sizes_after.push_back(q->Size());
      std::shared_ptr<FlowMsg> none;
      second_rc.push_back(q->Dequeue(none, 0));
      EXPECT_GE(q->Depth(), 1);
    }
    return ctx->SetOutput(0, got.back());
  };
  auto inst = Make(h, {"UdfInstanceTest_MultiQ"}, h.Env("queues", 3, 1));
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0, {a, b, c}), kOk);
  EXPECT_EQ(queue_count, 3u);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], a);
  EXPECT_EQ(got[1], b);
  EXPECT_EQ(got[2], c);
  EXPECT_EQ(sizes_before, (std::vector<int32_t>{1, 1, 1}));
  EXPECT_EQ(sizes_after, (std::vector<int32_t>{0, 0, 0}));
  for (int32_t rc : second_rc) EXPECT_NE(rc, kOk);
  ASSERT_EQ(h.outputs().size(), 1u);
  EXPECT_EQ(UdfHarness::Values<int32_t>(*h.outputs()[0].second),
            std::vector<int32_t>{30});

  // A second call gets fresh queues with that call's messages.
  got.clear();
  queue_count = 0;
  ASSERT_EQ(inst->Proc(*bound, 0, {c, a, b}), kOk);
  EXPECT_EQ(queue_count, 3u);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], c);
  EXPECT_EQ(got[2], b);
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
  EXPECT_EQ(inst->Proc(*bound, 1, {x, x}), kOk);
  EXPECT_EQ(q_inputs, 2u);
  EXPECT_EQ(a_calls, 0);
  EXPECT_EQ(inst->Proc(*bound, 0, {x, x}), kOk);
  EXPECT_EQ(a_calls, 1);
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
