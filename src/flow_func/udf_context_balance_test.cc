// SetOutput / SetMultiOutputs with OutOptions through both contexts
// (MetaContext, MetaRunContext): a failed balance check sends nothing, a
// passing one labels every message, sends continue after a failed send,
// new messages inherit the labels of the input being processed, and an
// input passed on is relabelled in a copy (its head may be shared).
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/udf_instance.h"
#include "flow_func/udf_instance_test_util.h"
#include "flow_msg_fakes.h"
#include "udf_test_util.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::AffinityPolicy;
using FlowFunc::MetaContext;
using FlowFunc::MetaRunContext;
using FlowFunc::TensorDataType;
using testing::UdfHarness;
using udf_instance_test::g_hooks;
using udf_instance_test::kOk;
using udf_instance_test::kParamInvalid;
using udf_instance_test::Msgs;
using udf_instance_test::UdfInstanceTest;

FlowFunc::OutOptions Grid(AffinityPolicy policy,
                          std::vector<std::pair<int32_t, int32_t>> pos) {
  FlowFunc::OutOptions o;
  auto* c = o.MutableBalanceConfig();
  c->SetAffinityPolicy(policy);
  FlowFunc::BalanceWeight w;
  w.rowNum = 3;
  w.colNum = 4;
  c->SetBalanceWeight(w);
  c->SetDataPos(pos);
  return o;
}

// UdfInstanceTest::Make is protected; RunBoth reaches it through this.
class BalanceContextTest : public UdfInstanceTest {
 public:
  using UdfInstanceTest::Make;
};

// Runs `send` once in a single-function and once in a multi-function UDF
// of balance kind `kind`, and `check` on each run's codes and outputs
// (while the harness that owns their memory is alive).
struct RunResult {
  std::shared_ptr<MbufFlowMsg> input;  // labels (5, 7) given
  std::vector<int32_t> codes;
  std::vector<std::pair<uint32_t, std::shared_ptr<MbufFlowMsg>>> outputs;
};
template <typename Send>
void RunBoth(BalanceKind kind, Send send,
             const std::function<void(const RunResult&)>& check) {
  for (int multi = 0; multi < 2; ++multi) {
    UdfHarness h;
    RunResult r;
    r.input = std::static_pointer_cast<MbufFlowMsg>(
        h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {1}, 42));
    r.input->head().route_label = 5;
    r.input->head().data_label = 7;
    InstanceEnv env = h.Env("bal", 1, 1);
    env.balance = kind;
    std::unique_ptr<UdfInstance> inst;
    if (multi == 0) {
      g_hooks.single_proc = [&](MetaContext* ctx, const Msgs& in) {
        auto alloc = [ctx] {
          return ctx->AllocTensorMsg({1}, TensorDataType::DT_INT32);
        };
        r.codes = send(alloc, in,
                       [ctx](const Msgs& m, const FlowFunc::OutOptions& o) {
                         return ctx->SetMultiOutputs(0, m, o);
                       });
        return kOk;
      };
      inst = BalanceContextTest::Make(h, {"UdfInstanceTest_Single"}, env);
    } else {
      g_hooks.proc_a = [&](const std::shared_ptr<MetaRunContext>& ctx,
                           const Msgs& in) {
        auto alloc = [ctx] {
          return ctx->AllocTensorMsg({1}, TensorDataType::DT_INT32);
        };
        r.codes = send(alloc, in,
                       [ctx](const Msgs& m, const FlowFunc::OutOptions& o) {
                         return m.size() == 1 ? ctx->SetOutput(0, m[0], o)
                                              : ctx->SetMultiOutputs(0, m, o);
                       });
        return kOk;
      };
      inst = BalanceContextTest::Make(h, {"UdfInstanceTest_MultiA"}, env);
    }
    auto bound = h.Bind();
    EXPECT_EQ(inst->Proc(*bound, 0, {r.input}), kOk);
    r.outputs = h.outputs();
    check(r);
    r = RunResult();
    inst.reset();
  }
}

TEST_F(BalanceContextTest, AFailedCheckSendsNothing) {
  using Alloc = std::function<std::shared_ptr<FlowFunc::FlowMsg>()>;
  using SendFn =
      std::function<int32_t(const Msgs&, const FlowFunc::OutOptions&)>;
  // Scatter node with ROW affinity; a position count that does not match;
  // a custom FlowMsg among context messages.
  RunBoth(
      BalanceKind::kScatter,
      [](Alloc alloc, const Msgs&, SendFn send) {
        std::vector<int32_t> codes;
        codes.push_back(
            send({alloc()}, Grid(AffinityPolicy::ROW_AFFINITY, {{0, 0}})));
        codes.push_back(send({alloc(), alloc()},
                             Grid(AffinityPolicy::NO_AFFINITY, {{0, 0}})));
        codes.push_back(
            send({alloc(), std::make_shared<testing::BareMsg>()},
                 Grid(AffinityPolicy::NO_AFFINITY, {{0, 0}, {0, 1}})));
        return codes;
      },
      [](const RunResult& r) {
        EXPECT_EQ(r.codes, (std::vector<int32_t>{kParamInvalid, kParamInvalid,
                                                 kParamInvalid}));
        EXPECT_TRUE(r.outputs.empty());
      });
  // A node that is no balance node may not use a config at all.
  RunBoth(
      BalanceKind::kNone,
      [](Alloc alloc, const Msgs&, SendFn send) {
        return std::vector<int32_t>{
            send({alloc()}, Grid(AffinityPolicy::NO_AFFINITY, {{0, 0}})),
            send({alloc()}, FlowFunc::OutOptions())};
      },
      [](const RunResult& r) {
        EXPECT_EQ(r.codes, (std::vector<int32_t>{kParamInvalid, kOk}));
        ASSERT_EQ(r.outputs.size(), 1u) << "only the message without a config";
        EXPECT_EQ(r.outputs[0].second->head().route_label, 5u) << "inherited";
      });
}

TEST_F(BalanceContextTest, LabelsEveryMessageAndNewMessagesInheritThem) {
  using Alloc = std::function<std::shared_ptr<FlowFunc::FlowMsg>()>;
  using SendFn =
      std::function<int32_t(const Msgs&, const FlowFunc::OutOptions&)>;
  RunBoth(
      BalanceKind::kGather,
      [](Alloc alloc, const Msgs& in, SendFn send) {
        auto plain = alloc();    // inherits (5, 7)
        auto cleared = alloc();  // SetRouteLabel(0) clears the route
        cleared->SetRouteLabel(0);
        std::vector<int32_t> codes{
            send({plain, cleared}, FlowFunc::OutOptions()),
            send({alloc(), alloc()},
                 Grid(AffinityPolicy::ROW_AFFINITY, {{1, 2}, {2, 0}})),
            // The input itself: relabelled in a copy.
            send({in[0]}, Grid(AffinityPolicy::COL_AFFINITY, {{2, 3}}))};
        return codes;
      },
      [](const RunResult& r) {
        EXPECT_EQ(r.codes, (std::vector<int32_t>{kOk, kOk, kOk}));
        ASSERT_EQ(r.outputs.size(), 5u);
        std::vector<std::pair<uint32_t, uint32_t>> labels;
        for (const auto& o : r.outputs) {
          labels.push_back(
              {o.second->head().route_label, o.second->head().data_label});
        }
        EXPECT_EQ(labels, (std::vector<std::pair<uint32_t, uint32_t>>{
                              {5, 7}, {0, 7}, {2, 7}, {3, 9}, {4, 12}}));
        EXPECT_NE(r.outputs[4].second->mbuf(), r.input->mbuf());
        EXPECT_EQ(r.outputs[4].second->head().trans_id, 42u);
        EXPECT_EQ(r.input->head().route_label, 5u)
            << "the shared input's head is untouched";
        EXPECT_EQ(r.input->head().data_label, 7u);
      });
}

TEST_F(BalanceContextTest, SendsContinueAfterAFailedSend) {
  UdfHarness h;
  InstanceEnv env = h.Env("bal", 1, 1);
  env.balance = BalanceKind::kScatter;
  std::vector<uint32_t> sent;
  int calls = 0;
  env.output = [&](uint32_t, std::shared_ptr<MbufFlowMsg> m) {
    ++calls;
    if (calls == 2) return FlowFunc::FLOW_FUNC_ERR_QUEUE_ERROR;
    sent.push_back(m->head().data_label);
    return kOk;
  };
  int32_t rc = kOk;
  g_hooks.single_proc = [&](MetaContext* ctx, const Msgs&) {
    Msgs m;
    for (int i = 0; i < 3; ++i) {
      m.push_back(ctx->AllocTensorMsg({1}, TensorDataType::DT_INT32));
    }
    rc = ctx->SetMultiOutputs(
        0, m, Grid(AffinityPolicy::NO_AFFINITY, {{0, 0}, {0, 1}, {0, 2}}));
    return kOk;
  };
  auto inst = Make(h, {"UdfInstanceTest_Single"}, env);
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0,
                       {h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {1})}),
            kOk);
  EXPECT_EQ(rc, FlowFunc::FLOW_FUNC_ERR_QUEUE_ERROR);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(sent, (std::vector<uint32_t>{1, 3}));
}

// A queue keeps what was sent: relabelling a message sent already, or one
// listed twice in one call, must go to a copy, or the queued message's
// labels would change under its consumer.
TEST_F(BalanceContextTest,
       AMessageSentAlreadyOrListedTwiceIsRelabelledInACopy) {
  UdfHarness h;
  InstanceEnv env = h.Env("bal", 1, 1);
  env.balance = BalanceKind::kScatter;
  std::vector<services::MbufPtr> queued;  // what a queue would hold
  env.output = [&](uint32_t, std::shared_ptr<MbufFlowMsg> m) {
    queued.push_back(m->mbuf());
    return kOk;
  };
  std::vector<int32_t> codes;
  g_hooks.single_proc = [&](MetaContext* ctx, const Msgs&) {
    auto m = ctx->AllocTensorMsg({1}, TensorDataType::DT_INT32);
    codes.push_back(ctx->SetMultiOutputs(0, {m}, FlowFunc::OutOptions()));
    codes.push_back(ctx->SetMultiOutputs(
        0, {m}, Grid(AffinityPolicy::NO_AFFINITY, {{0, 1}})));
    auto twice = ctx->AllocTensorMsg({1}, TensorDataType::DT_INT32);
    codes.push_back(ctx->SetMultiOutputs(
        0, {twice, twice},
        Grid(AffinityPolicy::NO_AFFINITY, {{1, 0}, {1, 1}})));
    return kOk;
  };
  auto inst = Make(h, {"UdfInstanceTest_Single"}, env);
  auto bound = h.Bind();
  ASSERT_EQ(inst->Proc(*bound, 0,
                       {h.Tensor<int32_t>(TensorDataType::DT_INT32, {1}, {1})}),
            kOk);
  EXPECT_EQ(codes, (std::vector<int32_t>{kOk, kOk, kOk}));
  ASSERT_EQ(queued.size(), 4u);
  std::vector<std::pair<uint32_t, uint32_t>> labels;
  for (const auto& m : queued) {
    labels.push_back({m->head().route_label, m->head().data_label});
  }
  EXPECT_EQ(labels, (std::vector<std::pair<uint32_t, uint32_t>>{
                        {0, 0}, {2, 2}, {5, 5}, {6, 6}}));
  EXPECT_NE(queued[0], queued[1]);
  EXPECT_NE(queued[2], queued[3]);
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
