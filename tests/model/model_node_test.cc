// Model nodes' semantics and bad input, with GE's rules: the compile
// config's inputs_tensor_desc retypes a model's inputs (GE's add.pb sample
// runs a float32 model as int32); a fed tensor of the wrong dtype or shape,
// or a kernel error, fails that transaction only (the graph goes on); a
// missing, truncated or unsupported model fails the build naming the node,
// file and operators; a model too large for its device fails at load with
// nothing left allocated; several nodes running one model on one device
// share one copy of its weights; replicas run on every device of a range.
//
//   x0, x1 ── m (GraphPp: add.onnx, ...) ── y0
//
// Thread-safety: each test drives its session from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "model/model_test_util.h"
#include "nlohmann/json.hpp"
#include "test_util.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
constexpr int32_t kTimeoutMs = 30000;
constexpr int32_t kParamInvalid = 164000;  // FLOW_FUNC_ERR_PARAM_INVALID
constexpr int32_t kFailed = 564000;        // FLOW_FUNC_FAILED

std::string Model(const std::string& name) {
  return testing::ModelDir() + "/" + name + ".onnx";
}

class ModelNodeTest : public testing::ModelDeviceTest {
 protected:
  // Feeds `in` and fetches the transaction's outputs.
  FlowInfo RunOnce(const std::vector<Tensor>& in, std::vector<Tensor>* out) {
    FlowInfo info, got;
    Status st = s_.FeedData(1, in, info, kTimeoutMs);
    EXPECT_TRUE(st.ok()) << st.ToString();
    st = s_.FetchData(1, out, &got, kTimeoutMs);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return got;
  }
};

// Device memory in use on `d` now (rt::GetMemInfo, on a binding the
// caller's thread takes for the call and gives back).
uint64_t DeviceMemUsed(int32_t d) {
  rt::Context* saved = rt::GetCurrentContext();
  uint64_t free_bytes = 0, total = 0;
  EXPECT_TRUE(rt::SetDevice(d).ok());
  EXPECT_TRUE(rt::GetMemInfo(d, &free_bytes, &total).ok());
  EXPECT_TRUE(rt::ResetDevice(d).ok());
  EXPECT_TRUE(rt::SetCurrentContext(saved).ok());
  return total - free_bytes;
}

Tensor Floats(std::vector<float> v) {
  return Tensor::From(DataType::kFloat, {int64_t(v.size())}, v);
}
Tensor Ints(std::vector<int32_t> v) {
  return Tensor::From(DataType::kInt32, {int64_t(v.size())}, v);
}

TEST_P(ModelNodeTest, RunsAFloatModelAsFloat) {
  ASSERT_TRUE(
      Build(testing::ModelGraphJson(Model("add"), 2, 1, {Device()})).ok());
  std::vector<Tensor> out;
  ASSERT_EQ(RunOnce({Floats({1, 2, 3}), Floats({0.5, 0.25, 4})}, &out).ret_code,
            0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].As<float>(), (std::vector<float>{1.5, 2.25, 7}));
}

// A count batch on a model input, as on a UDF's: two fed [3] tensors
// reach the model as one [6] (batch_dim 0), and the output carries the
// last message's transaction.
TEST_P(ModelNodeTest, CountBatchOnAModelInput) {
  nlohmann::json g = nlohmann::json::parse(
      testing::ModelGraphJson(Model("reshape_dyn"), 1, 1, {Device()}));
  g["nodes"][0]["input_attrs"] = {
      {"0", {{"count_batch", {{"batch_size", 2}, {"batch_dim", 0}}}}}};
  const Status st = Build(g.dump());
  ASSERT_TRUE(st.ok()) << st.ToString();
  FlowInfo info;
  ASSERT_TRUE(s_.FeedData(1, {Floats({1, 2, 3})}, info, kTimeoutMs).ok());
  ASSERT_TRUE(s_.FeedData(1, {Floats({4, 5, 6})}, info, kTimeoutMs).ok());
  std::vector<Tensor> out;
  FlowInfo got;
  ASSERT_TRUE(s_.FetchData(1, &out, &got, kTimeoutMs).ok());
  ASSERT_EQ(got.ret_code, 0);
  EXPECT_EQ(got.transaction_id, 2u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(out[0].As<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// GE's samples rely on this: inputs_tensor_desc overrides each Data
// input's dtype and shape by index.
TEST_P(ModelNodeTest, CompileConfigRetypesTheInputs) {
  const std::string cfg = testing::WriteModelTempFile(
      "int_add.json",
      R"({"build_options":{},"inputs_tensor_desc":[)"
      R"({"data_type":"DT_INT32","shape":[3]},{"data_type":"DT_INT32","shape":[-1]}]})");
  ASSERT_TRUE(
      Build(testing::ModelGraphJson(Model("add"), 2, 1, {Device()},
                                    ",\"compile_config\":\"" + cfg + "\""))
          .ok());
  std::vector<Tensor> out;
  ASSERT_EQ(RunOnce({Ints({1, 2, 3}), Ints({10, 20, 30})}, &out).ret_code, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DataType::kInt32);
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{11, 22, 33}));
}

// GE's own sample: a TensorFlow add.pb of float32 placeholders runs as
// int32 because its compile config says so.
TEST_P(ModelNodeTest, GesTensorFlowAddSampleRunsAsInt32) {
  const std::string cfg = testing::WriteModelTempFile(
      "tf_int_add.json",
      R"({"build_options":{},"inputs_tensor_desc":[)"
      R"({"data_type":"DT_INT32","shape":[3]},{"data_type":"DT_INT32","shape":[3]}]})");
  ASSERT_TRUE(Build(testing::ModelGraphJson(
                        testing::ModelDir() + "/tf_add.pb", 2, 1, {Device()},
                        ",\"compile_config\":\"" + cfg + "\"", "tensorflow"))
                  .ok());
  std::vector<Tensor> out;
  ASSERT_EQ(RunOnce({Ints({1, 2, 3}), Ints({4, 5, 6})}, &out).ret_code, 0);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].dtype, DataType::kInt32);
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{5, 7, 9}));
}

TEST_P(ModelNodeTest, AWrongDtypeOrShapeFailsThatTransactionOnly) {
  ASSERT_TRUE(
      Build(testing::ModelGraphJson(Model("add"), 2, 1, {Device()})).ok());
  std::vector<Tensor> out;
  EXPECT_EQ(RunOnce({Ints({1, 2, 3}), Floats({1, 2, 3})}, &out).ret_code,
            kParamInvalid);
  EXPECT_EQ(RunOnce({Floats({1, 2}), Floats({1, 2})}, &out).ret_code,
            kParamInvalid);
  // The graph goes on.
  ASSERT_EQ(RunOnce({Floats({1, 2, 3}), Floats({1, 1, 1})}, &out).ret_code, 0);
  EXPECT_EQ(out[0].As<float>(), (std::vector<float>{2, 3, 4}));
}

// GE's rule: an input without data, or one that carries a failure, does
// not run the model; its outputs are empty and carry the input's ret_code
// (a failed input is passed on by the executor before Proc, an empty one
// by the model UDF).
TEST_P(ModelNodeTest, FailedOrEmptyInputsDoNotRunTheModel) {
  ASSERT_TRUE(
      Build(testing::ModelGraphJson(Model("add"), 2, 1, {Device()})).ok());
  Message empty;
  empty.empty = true;
  ASSERT_TRUE(s_.FeedMessages(1, {}, {empty, empty}, kTimeoutMs).ok());
  std::vector<Message> out;
  ASSERT_TRUE(s_.FetchMessages(1, {}, &out, kTimeoutMs).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].empty);
  EXPECT_EQ(out[0].info.ret_code, 0);
  Message failed, fine;
  failed.tensors = {Floats({1, 2, 3})};
  failed.info.ret_code = 7;
  fine.tensors = {Floats({1, 1, 1})};
  ASSERT_TRUE(s_.FeedMessages(1, {}, {failed, fine}, kTimeoutMs).ok());
  ASSERT_TRUE(s_.FetchMessages(1, {}, &out, kTimeoutMs).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].info.ret_code, 7);
  EXPECT_TRUE(out[0].tensors.empty());
  // The graph goes on.
  std::vector<Tensor> sum;
  ASSERT_EQ(RunOnce({Floats({1, 2, 3}), Floats({1, 1, 1})}, &sum).ret_code, 0);
  EXPECT_EQ(sum[0].As<float>(), (std::vector<float>{2, 3, 4}));
}

TEST_P(ModelNodeTest, AKernelErrorFailsThatTransactionOnly) {
  ASSERT_TRUE(
      Build(testing::ModelGraphJson(Model("reshape_dyn"), 1, 1, {Device()}))
          .ok());
  std::vector<Tensor> out;
  // Three elements cannot be reshaped to [2, -1].
  EXPECT_EQ(RunOnce({Floats({1, 2, 3})}, &out).ret_code, kFailed);
  ASSERT_EQ(RunOnce({Floats({1, 2, 3, 4})}, &out).ret_code, 0);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out[0].As<float>(), (std::vector<float>{1, 2, 3, 4}));
}

// Replicas on every device of the set: each transaction reaches one, and
// every device loaded the model (a submodel each).
TEST_P(ModelNodeTest, ReplicasRunOnEveryDevice) {
  ASSERT_TRUE(
      Build(testing::ModelGraphJson(Model("add"), 2, 1, GetParam())).ok());
  for (int i = 0; i < 8; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    info.transaction_id = uint64_t(i + 1);
    ASSERT_TRUE(s_.FeedData(1, {Floats({float(i), 1, 2}), Floats({1, 1, 1})},
                            info, kTimeoutMs)
                    .ok());
  }
  for (int i = 0; i < 8; ++i) {
    std::vector<Tensor> out;
    FlowInfo got;
    ASSERT_TRUE(s_.FetchData(1, &out, &got, kTimeoutMs).ok());
    ASSERT_EQ(got.ret_code, 0);
    EXPECT_EQ(out[0].As<float>()[0], float(got.transaction_id - 1) + 1)
        << got.transaction_id;
  }
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s_.DeviceReports(1, &reports).ok());
  for (const DeviceReport& r : reports) {
    EXPECT_GE(r.submodels, 1u) << "device " << r.id;
    EXPECT_EQ(r.implicit_bindings, 0u) << "device " << r.id;
  }
}

// Four nodes running one model on one device hold one copy of its
// weights: the device's memory in use is about one model's, not four.
TEST_P(ModelNodeTest, NodesOfOneModelOnOneDeviceShareItsWeights) {
  auto graph = [&](int nodes) {
    std::string json = R"({"name":"shared","inputs":["x"],"nodes":[)";
    std::string outs;
    for (int i = 0; i < nodes; ++i) {
      json +=
          std::string(i ? "," : "") + R"({"name":"m)" + std::to_string(i) +
          R"(","inputs":["x"],"outputs":1,"model_pp":{"name":"net","type":"GraphPp","graph_file":")" +
          testing::FindModelCase("resnet18")->file + R"("}})";
      outs += std::string(i ? "," : "") + "\"m" + std::to_string(i) + ":0\"";
    }
    return json + "],\"outputs\":[" + outs +
           R"(],"deploy":{"batch_deploy_info":[{"flow_node_list":["m0","m1","m2","m3"],"logic_device_list":"0:0:)" +
           std::to_string(Device()) + "\"}]}}";
  };
  auto used = [&](int nodes) -> uint64_t {
    Session s;
    std::string json = graph(nodes);
    if (nodes == 1) {
      json.replace(json.find(R"(["m0","m1","m2","m3"])"), 21, R"(["m0"])");
    }
    Status st = s.AddGraphJson(1, json, "shared", "");
    EXPECT_TRUE(st.ok()) << st.ToString();
    st = s.BuildGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    const uint64_t bytes = DeviceMemUsed(Device());
    EXPECT_TRUE(s.RemoveGraph(1).ok());
    return bytes;
  };
  const uint64_t none = DeviceMemUsed(Device());
  const uint64_t one = used(1) - none;
  const uint64_t four = used(4) - none;
  EXPECT_GT(one, 40u << 20) << "resnet18's weights (46 MB) are on the device";
  EXPECT_LE(double(four), 1.2 * double(one))
      << "one " << one << ", four " << four;
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, ModelNodeTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1, 2}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

// ---- Bad models: the build fails before anything is deployed. ----

class ModelBuildErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::ModelDir().empty());
    Options o;
    o.cluster = MakeLocalCluster({2, 3, 4, 5});
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }

  Status Build(const std::string& file, size_t inputs, size_t outputs,
               const std::string& extra = "",
               const std::string& framework = "onnx") {
    Session s;
    HFLOW_RETURN_IF_ERROR(s.AddGraphJson(
        1,
        testing::ModelGraphJson(file, inputs, outputs, {3}, extra, framework),
        "model graph", ""));
    Status st = s.BuildGraph(1);
    (void)s.RemoveGraph(1);
    return st;
  }
};

TEST_F(ModelBuildErrorTest, AMissingFileNamesNodeAndFile) {
  Status st = Build("/nonexistent/net.onnx", 1, 1);
  EXPECT_EQ(st.code(), StatusCode::kNotFound) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("node 'm'"));
  EXPECT_THAT(st.message(), HasSubstr("/nonexistent/net.onnx"));
}

TEST_F(ModelBuildErrorTest, ATruncatedFileIsNotAModel) {
  std::ifstream in(Model("add"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  const std::string cut = testing::WriteModelTempFile(
      "cut.onnx", bytes.substr(0, bytes.size() / 2));
  Status st = Build(cut, 2, 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("node 'm'"));
  EXPECT_THAT(st.message(), HasSubstr(cut));
  const std::string junk =
      testing::WriteModelTempFile("junk.onnx", "not a model at all");
  st = Build(junk, 2, 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
}

TEST_F(ModelBuildErrorTest, UnsupportedOperatorsAreAllNamed) {
  Status st = Build(Model("unsupported"), 1, 3);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("node 'm'"));
  EXPECT_THAT(st.message(), HasSubstr("Det (node 'Det_0' and 1 more)"));
  EXPECT_THAT(st.message(), HasSubstr("NonZero"));
  EXPECT_THAT(st.message(), HasSubstr("Model nodes"));
}

TEST_F(ModelBuildErrorTest, TensorFlowOperatorsNotMappedAreAllNamed) {
  Status st =
      Build(testing::ModelDir() + "/tf_unsupported.pb", 1, 1, "", "tensorflow");
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("node 'm'"));
  EXPECT_THAT(st.message(), HasSubstr("Erf (node 'erf')"));
  EXPECT_THAT(st.message(), HasSubstr("Lgamma (node 'lgamma')"));
  const std::string junk =
      testing::WriteModelTempFile("junk.pb", "\x0a\xff\xff");
  st = Build(junk, 1, 1, "", "tensorflow");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("not a TensorFlow GraphDef"));
}

TEST_F(ModelBuildErrorTest, OpsetsOutsideTheRangeAreRefused) {
  for (const char* name : {"opset9", "opset18"}) {
    Status st = Build(Model(name), 1, 1);
    EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr("opset " + std::string(name + 5)));
    EXPECT_THAT(st.message(), HasSubstr("11 to 17"));
  }
}

TEST_F(ModelBuildErrorTest, TheNodeMustBeWiredAsItsModel) {
  Status st = Build(Model("add"), 1, 1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("takes 2 input(s)"));
}

TEST_F(ModelBuildErrorTest, ACompileConfigThatDoesNotFitIsRefused) {
  const std::string three = testing::WriteModelTempFile(
      "three.json", R"({"inputs_tensor_desc":[{"data_type":"DT_INT32"},)"
                    R"({"data_type":"DT_INT32"},{"data_type":"DT_INT32"}]})");
  Status st =
      Build(Model("add"), 2, 1, ",\"compile_config\":\"" + three + "\"");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("lists 3 inputs"));
  const std::string bad = testing::WriteModelTempFile(
      "bad.json", R"({"inputs_tensor_desc":[{"data_type":"DT_WHAT"}]})");
  st = Build(Model("add"), 2, 1, ",\"compile_config\":\"" + bad + "\"");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("inputs_tensor_desc[0].data_type"));
}

TEST_F(ModelBuildErrorTest, AnUnknownFrameworkIsAGraphFileError) {
  Session s;
  Status st = s.AddGraphJson(
      1, testing::ModelGraphJson(Model("add"), 2, 1, {3}), "g", "");
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::string json = testing::ModelGraphJson(Model("add"), 2, 1, {3});
  json.replace(json.find("\"onnx\""), 6, "\"caffe\"");  // not TF either
  st = s.AddGraphJson(2, json, "g", "");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("model_pp.framework"));
}

// A model larger than its device's memory fails at load, and leaves
// nothing allocated: the same session then builds a graph that fits.
TEST(ModelLoadTest, AModelTooLargeForItsDeviceFailsAtLoad) {
  ASSERT_FALSE(testing::ModelDir().empty());
  Options o;
  o.cluster = MakeLocalCluster({2, 3}, 40u << 20);  // resnet18 needs 46 MB
  o.mbuf_pool_bytes = 4u << 20;
  o.max_message_bytes = 1u << 20;
  ASSERT_TRUE(Initialize(o).ok());
  {
    Session s;
    ASSERT_TRUE(
        s.AddGraphJson(1,
                       testing::ModelGraphJson(
                           testing::FindModelCase("resnet18")->file, 1, 1, {3}),
                       "big", "")
            .ok());
    Status st = s.BuildGraph(1);
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("node 'm'"));
    (void)s.RemoveGraph(1);
    ASSERT_TRUE(s.AddGraphJson(2,
                               testing::ModelGraphJson(Model("add"), 2, 1, {3}),
                               "small", "")
                    .ok());
    st = s.BuildGraph(2);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(s.RemoveGraph(2).ok());
  }
  EXPECT_TRUE(Finalize().ok());
}

}  // namespace
}  // namespace hflow
