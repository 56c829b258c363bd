// The paths the GE host API takes into the core: Session::AddGraphJson (a
// graph as graph-file text), model process points that fail at build
// (GE's GraphPp / FlowGraphPp / invoked closures), and FlowInfo::
// raised_exception telling a raised exception from a UDF's error code, and
// a node's inline "func_list" of functions registered in the process (the
// Python package's UDFs take it). On device sets with and without 0.
//
//   a ─┐
//      ├─[add: _BuiltIn_Add / raise / fail]── out
//   b ─┘
//
//   a ──[twin: Double(in 0 -> out 0), Negate(in 1 -> out 1)]── 2a
//   b ──┘                                                   └── -b
//
// Thread-safety: single-threaded tests; every wait is bounded.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "hflow/hflow.h"
#include "test_util.h"

namespace hflow {
namespace {

constexpr int32_t kRaised = 7711001;
constexpr int32_t kFailed = 7711002;

// Raises for transactions whose first value is odd, returns an error code
// for even ones.
class RaiseOrFail : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    const int32_t v =
        static_cast<const int32_t*>(in[0]->GetTensor()->GetData())[0];
    if (v % 2 != 0) {
      context_->RaiseException(kRaised, in[0]->GetTransactionId());
      return FlowFunc::FLOW_FUNC_SUCCESS;
    }
    return kFailed;
  }
};
REGISTER_FLOW_FUNC("GraphJsonTest_RaiseOrFail", RaiseOrFail);

// Two functions of one instance, each writing its own output.
class Twin : public FlowFunc::MetaMultiFunc {
 public:
  using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;
  int32_t Double(const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
                 const Msgs& in) {
    return Map(ctx, in, 0, 2);
  }
  int32_t Negate(const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
                 const Msgs& in) {
    return Map(ctx, in, 1, -1);
  }

 private:
  static int32_t Map(const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
                     const Msgs& in, uint32_t output, int32_t factor) {
    if (in.size() != 1) return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
    FlowFunc::Tensor* t = in[0]->GetTensor();
    auto out = ctx->AllocTensorMsg(t->GetShape(), t->GetDataType());
    const auto* src = static_cast<const int32_t*>(t->GetData());
    auto* dst = static_cast<int32_t*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < t->GetElementCnt(); ++i) dst[i] = src[i] * factor;
    return ctx->SetOutput(output, out);
  }
};
FLOW_FUNC_REGISTRAR(Twin)
    .RegProcFunc("GraphJsonTest_Double", &Twin::Double)
    .RegProcFunc("GraphJsonTest_Negate", &Twin::Negate);

std::string TwinGraph(const std::string& func_list) {
  return std::string(R"({"name": "g", "inputs": ["a", "b"], "nodes": [)") +
         R"({"name": "twin", "inputs": ["a", "b"], "outputs": 2, )" +
         R"("func_list": )" + func_list + "}], " +
         R"("outputs": ["twin:0", "twin:1"]})";
}

constexpr const char* kTwinFuncs =
    R"([{"func_name": "GraphJsonTest_Double", "inputs_index": [0],)"
    R"( "outputs_index": [0]}, {"func_name": "GraphJsonTest_Negate",)"
    R"( "inputs_index": [1], "outputs_index": [1]}])";

std::string Graph(const std::string& node_fields, bool catch_exceptions) {
  return std::string(R"({"name": "g", "inputs": ["a", "b"], "nodes": [)") +
         R"({"name": "add", "inputs": ["a", "b"], "outputs": 1, )" +
         node_fields + "}], " + R"("outputs": ["add:0"], "exception_catch": )" +
         (catch_exceptions ? "true" : "false") + "}";
}

Tensor Ints(std::vector<int32_t> v) {
  return Tensor::From<int32_t>(DataType::kInt32,
                               {static_cast<int64_t>(v.size())}, v);
}

class GraphJsonTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }
  Session s_;
};

TEST_P(GraphJsonTest, AddsAndRunsAGraphGivenAsText) {
  ASSERT_TRUE(s_.AddGraphJson(1, Graph(R"("function": "_BuiltIn_Add")", false),
                              "FlowGraph 'g'", "")
                  .ok());
  ASSERT_TRUE(s_.FeedData(1, {Ints({1, 2}), Ints({10, 20})}, {}, 5000).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  ASSERT_TRUE(s_.FetchData(1, &out, &info, 5000).ok());
  EXPECT_EQ(out.at(0).As<int32_t>(), (std::vector<int32_t>{11, 22}));
  EXPECT_EQ(info.transaction_id, 1u);
}

TEST_P(GraphJsonTest, BadTextNamesItsSource) {
  Status st = s_.AddGraphJson(1, "{\"name\": ", "FlowGraph 'g'", "");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("FlowGraph 'g'"), std::string::npos)
      << st.ToString();
}

TEST_P(GraphJsonTest, AModelNodeFailsAtBuildNamingNodeAndProcessPoint) {
  ASSERT_TRUE(
      s_.AddGraphJson(
            1,
            Graph(R"("model_pp": {"name": "add_pp", "type": "GraphPp"})",
                  false),
            "FlowGraph 'g'", "")
          .ok());
  Status st = s_.BuildGraph(1);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  EXPECT_NE(st.message().find("node 'add'"), std::string::npos);
  EXPECT_NE(st.message().find("GraphPp 'add_pp'"), std::string::npos);
  // A feed builds first, and fails the same way; nothing is deployed.
  st = s_.FeedData(1, {Ints({1}), Ints({2})}, {}, 1000);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
}

TEST_P(GraphJsonTest, AnInvokedModelFailsAtBuild) {
  ASSERT_TRUE(
      s_.AddGraphJson(1,
                      Graph(R"("function": "_BuiltIn_Add", "invoked_closures":)"
                            R"( {"nn": {"name": "m", "type": "FlowGraphPp"}})",
                            false),
                      "FlowGraph 'g'", "")
          .ok());
  Status st = s_.BuildGraph(1);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  EXPECT_NE(st.message().find("FlowGraphPp 'm' invoked as 'nn'"),
            std::string::npos)
      << st.ToString();
}

TEST_P(GraphJsonTest, AnUnknownModelTypeIsRefusedWhenAdded) {
  Status st = s_.AddGraphJson(
      1, Graph(R"("model_pp": {"name": "p", "type": "OmPp"})", false),
      "FlowGraph 'g'", "");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("model_pp.type"), std::string::npos)
      << st.ToString();
}

TEST_P(GraphJsonTest, RaisedExceptionIsToldFromAnErrorCode) {
  ASSERT_TRUE(
      s_.AddGraphJson(1,
                      Graph(R"("function": "GraphJsonTest_RaiseOrFail")", true),
                      "FlowGraph 'g'", "")
          .ok());
  std::vector<Tensor> out;
  FlowInfo info;
  ASSERT_TRUE(s_.FeedData(1, {Ints({1}), Ints({0})}, {}, 5000).ok());
  ASSERT_TRUE(s_.FetchData(1, &out, &info, 5000).ok());
  EXPECT_EQ(info.ret_code, kRaised);
  EXPECT_TRUE(info.raised_exception);
  ASSERT_TRUE(s_.FeedData(1, {Ints({2}), Ints({0})}, {}, 5000).ok());
  ASSERT_TRUE(s_.FetchData(1, &out, &info, 5000).ok());
  EXPECT_EQ(info.ret_code, kFailed);
  EXPECT_FALSE(info.raised_exception);
  EXPECT_EQ(info.error_node, "add");
}

TEST_P(GraphJsonTest, AnInlineFuncListRunsEachFunctionOnItsIndexes) {
  Status st = s_.AddGraphJson(1, TwinGraph(kTwinFuncs), "FlowGraph 'g'", "");
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<Tensor> out;
  FlowInfo info;
  // One input at a time: each function runs on its own input alone.
  ASSERT_TRUE(s_.FeedData(1, {0}, {Ints({3, 4})}, {}, 5000).ok());
  ASSERT_TRUE(s_.FetchData(1, {0}, &out, &info, 5000).ok());
  EXPECT_EQ(out.at(0).As<int32_t>(), (std::vector<int32_t>{6, 8}));
  ASSERT_TRUE(s_.FeedData(1, {1}, {Ints({5})}, {}, 5000).ok());
  ASSERT_TRUE(s_.FetchData(1, {1}, &out, &info, 5000).ok());
  EXPECT_EQ(out.at(0).As<int32_t>(), (std::vector<int32_t>{-5}));
}

TEST_P(GraphJsonTest, AnInlineFuncListWithAFunctionIsRefusedNamingTheField) {
  std::string g = TwinGraph(kTwinFuncs);
  g.replace(g.find("\"func_list\""), 0, R"("function": "_BuiltIn_Add", )");
  Status st = s_.AddGraphJson(1, g, "FlowGraph 'g'", "");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("nodes[0].func_list"), std::string::npos)
      << st.ToString();
}

TEST_P(GraphJsonTest, AnInlineFuncListIndexPastTheNodeIsRefused) {
  Status st = s_.AddGraphJson(
      1,
      TwinGraph(
          R"([{"func_name": "GraphJsonTest_Double", "inputs_index": [2]}])"),
      "FlowGraph 'g'", "");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("nodes[0].func_list[0].inputs_index"),
            std::string::npos)
      << st.ToString();
}

TEST_P(GraphJsonTest, AnUnregisteredInlineFunctionFailsTheBuildNamingIt) {
  ASSERT_TRUE(
      s_.AddGraphJson(1, TwinGraph(R"([{"func_name": "GraphJsonTest_Nope"}])"),
                      "FlowGraph 'g'", "")
          .ok());
  Status st = s_.BuildGraph(1);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("'GraphJsonTest_Nope'"), std::string::npos)
      << st.ToString();
}

INSTANTIATE_TEST_SUITE_P(Devices, GraphJsonTest,
                         ::testing::Values(std::vector<int32_t>{0, 1, 2, 3},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
