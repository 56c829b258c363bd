// UdfInstance tests with UDFs registered inside this binary, creation and
// running: creation from registered names (unknown names, single/multi
// mixing), Init/Proc failures and exceptions, Proc codes and indices. The
// test UDFs, which delegate to per-test hooks (udf_instance_test_util.h), are
// registered here for all the udf_instance_*_test.cc files.
#include <gtest/gtest.h>

#include <memory>
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

using FlowFunc::MetaContext;
using FlowFunc::MetaParams;
using FlowFunc::MetaRunContext;
using FlowFunc::TensorDataType;
using testing::UdfHarness;
using udf_instance_test::Contains;
using udf_instance_test::g_hooks;
using udf_instance_test::kOk;
using udf_instance_test::kParamInvalid;
using udf_instance_test::Msgs;
using udf_instance_test::Queues;
using udf_instance_test::UdfInstanceTest;

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

// stream_input must match the registration (a queue proc), both ways;
// the error names the node and the function (GE fails the first call).
TEST_F(UdfInstanceTest, StreamInputMustMatchTheProcKind) {
  UdfHarness h;
  std::unique_ptr<UdfInstance> inst;
  std::vector<FuncDesc> q =
      Funcs({"UdfInstanceTest_MultiA", "UdfInstanceTest_MultiQ"});
  q[1].stream_input = false;
  Status s = UdfInstance::Create(q, h.Env("no_stream", 1, 1), &inst);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(),
                       "node 'no_stream' function "
                       "'UdfInstanceTest_MultiQ'"))
      << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "stream_input")) << s.ToString();

  std::vector<FuncDesc> a = Funcs({"UdfInstanceTest_MultiA"});
  a[0].stream_input = true;
  s = UdfInstance::Create(a, h.Env("msg_stream", 1, 1), &inst);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(),
                       "node 'msg_stream' function "
                       "'UdfInstanceTest_MultiA'"))
      << s.ToString();

  std::vector<FuncDesc> single = Funcs({"UdfInstanceTest_Single"});
  single[0].stream_input = true;
  s = UdfInstance::Create(single, h.Env("single_stream", 1, 1), &inst);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_TRUE(Contains(s.ToString(), "single_stream")) << s.ToString();
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
  EXPECT_EQ(inst->ProcQueues(*bound, 2, {}), kOk);
  EXPECT_EQ(inst2->Proc(*bound, 0, {}), kOk);
  ASSERT_EQ(g_hooks.objects.size(), 4u);
  EXPECT_EQ(g_hooks.objects[0], g_hooks.objects[1]);
  EXPECT_EQ(g_hooks.objects[0], g_hooks.objects[2]);
  EXPECT_NE(g_hooks.objects[0], g_hooks.objects[3])
      << "instances share an object";
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
