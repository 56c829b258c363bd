// Invoked closures: a UDF runs a model with RunFlowModel (GE's
// FunctionPp::AddInvokedClosure; "invoked_closures" in the graph file). The
// model loads with the UDF instance's Init on the deploy thread bound to
// its device (no implicit binding on any device), runs on the UDF's
// thread, and gives GE's results and errors; a closure whose file is bad
// fails the build naming node and closure. On device sets with and
// without device 0.
//
//   x0, x1 ── inv (UDF: RunFlowModel("add", {x0, x1})) ── y
//
// Thread-safety: each test drives its session from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "model/model_test_util.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;
constexpr int32_t kTimeoutMs = 30000;

// Runs the closure named by its init param "key" (default "add") on its
// inputs and sends the first output; a failed run is the transaction's
// code.
class Invoker : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override {
    FlowFunc::AscendString key;
    if (context_->GetAttr("key", key) == FlowFunc::FLOW_FUNC_SUCCESS) {
      key_ = key.GetString();
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Proc(const Msgs& in) override {
    Msgs out;
    const int32_t rc = context_->RunFlowModel(key_.c_str(), in, out, 10000);
    if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
    if (out.size() != 1) return FlowFunc::FLOW_FUNC_FAILED;
    return context_->SetOutput(0, out[0]);
  }

 private:
  std::string key_ = "add";
};
REGISTER_FLOW_FUNC("InvokeTest_Invoker", Invoker);

class ModelInvokeTest : public testing::ModelDeviceTest {
 protected:
  // The graph: node "inv" on the set's last device, its closure "add"
  // running `model` (an ONNX file).
  std::string Graph(const std::string& model, const std::string& key = "") {
    nlohmann::json closure = {{"name", "add_pp"},
                              {"type", "GraphPp"},
                              {"framework", "onnx"},
                              {"graph_file", model}};
    nlohmann::json node = {{"name", "inv"},
                           {"inputs", {"x0", "x1"}},
                           {"outputs", 1},
                           {"function", "InvokeTest_Invoker"},
                           {"invoked_closures", {{"add", closure}}}};
    if (!key.empty()) node["init_params"] = {{"key", key}};
    nlohmann::json g = {
        {"name", "invoke"},
        {"inputs", {"x0", "x1"}},
        {"nodes", {node}},
        {"outputs", {"inv:0"}},
        {"deploy",
         {{"batch_deploy_info",
           {{{"flow_node_list", {"inv"}},
             {"logic_device_list", "0:0:" + std::to_string(Device())}}}}}}};
    return g.dump();
  }

  // Feeds a and b; the fetched floats, or the transaction's code.
  int32_t Run(const Tensor& a, const Tensor& b, std::vector<float>* y) {
    FlowInfo info;
    EXPECT_TRUE(s_.FeedData(1, {a, b}, info, kTimeoutMs).ok());
    std::vector<Tensor> out;
    FlowInfo got;
    const Status st = s_.FetchData(1, &out, &got, kTimeoutMs);
    if (got.ret_code != 0) return got.ret_code;
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (out.size() != 1) return -1;
    y->resize(out[0].data.size() / sizeof(float));
    std::memcpy(y->data(), out[0].data.data(), out[0].data.size());
    return 0;
  }

  static Tensor Floats(const std::vector<float>& v) {
    return Tensor::From<float>(DataType::kFloat,
                               {static_cast<int64_t>(v.size())}, v);
  }
};

TEST_P(ModelInvokeTest, TheUdfRunsItsClosure) {
  Status st = Build(Graph(testing::ModelDir() + "/add.onnx"));
  ASSERT_TRUE(st.ok()) << st.ToString();
  for (int i = 0; i < 3; ++i) {
    std::vector<float> y;
    ASSERT_EQ(Run(Floats({1, 2, 3}), Floats({10.f * i, 20, 30}), &y), 0);
    EXPECT_EQ(y, (std::vector<float>{1.f + 10.f * i, 22, 33}));
  }
  // Loaded on the bound deploy thread, run on the bound executor thread.
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s_.DeviceReports(1, &reports).ok());
  for (const DeviceReport& r : reports) {
    EXPECT_EQ(r.implicit_bindings, 0u) << "device " << r.id;
  }
}

TEST_P(ModelInvokeTest, BadRunsFailTheirTransactionOnly) {
  Status st = Build(Graph(testing::ModelDir() + "/add.onnx"));
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<float> y;
  // int32 inputs to a float32 model: the closure's run fails.
  const Tensor i32 = Tensor::From<int32_t>(DataType::kInt32, {3}, {1, 2, 3});
  EXPECT_EQ(Run(i32, i32, &y), FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
  ASSERT_EQ(Run(Floats({1, 1, 1}), Floats({2, 2, 2}), &y), 0);
  EXPECT_EQ(y, (std::vector<float>{3, 3, 3}));
}

TEST_P(ModelInvokeTest, AnUnknownKeyFailsTheRun) {
  Status st = Build(Graph(testing::ModelDir() + "/add.onnx", "nope"));
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<float> y;
  EXPECT_EQ(Run(Floats({1, 2, 3}), Floats({1, 2, 3}), &y),
            FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
}

TEST_P(ModelInvokeTest, ABadClosureFailsTheBuildNamingIt) {
  Status st = Build(Graph(testing::ModelDir() + "/unsupported.onnx"));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("'inv'"));
  EXPECT_THAT(st.message(), HasSubstr("invoked as 'add'"));
  EXPECT_THAT(st.message(), HasSubstr("Det"));
  (void)s_.RemoveGraph(1);
  st = Build(Graph("/no/such/model.onnx"));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("/no/such/model.onnx"));
}

INSTANTIATE_TEST_SUITE_P(Devices, ModelInvokeTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1, 2}));

}  // namespace
}  // namespace hflow
