// Numerics of the ONNX, TensorFlow and GE-graph front-ends and the ATen
// executor, end to end: each
// model made at test time by tests/models/make_onnx_models.py (torchvision's
// resnet18 and mobilenet_v2, a TransformerEncoder at opsets 11 and 17, and
// models that exercise the element-wise, reduction, shape and nn operators
// and integer arithmetic; and TensorFlow GraphDefs written by
// tests/models/make_tf_models.py: a small NHWC CNN and the other mapped
// operators; and GE graph files written by tests/models/make_ge_graphs.py:
// NHWC and NCHW CNNs, and between them every GE operator the front-end
// lowers) runs as a model node of a graph, fed the
// generator's inputs; every output must match PyTorch eager's on the same
// inputs (fp32 max abs difference <= 1e-4, integers exact). Every case on
// device sets with and without device 0:
//
//   x0..xn ── m (GraphPp: the ONNX file) ── y0..yk
//
// Thread-safety: each test drives its session from the test thread.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "hflow/hflow.h"
#include "model/model_test_util.h"
#include "test_util.h"

namespace hflow {
namespace {

constexpr double kTolerance = 1e-4;
constexpr int32_t kTimeoutMs = 60000;

using Param = std::tuple<std::string, std::vector<int32_t>>;

class ModelOnnxTest : public ::testing::TestWithParam<Param> {
 protected:
  void TearDown() override { (void)Finalize(); }
};

TEST_P(ModelOnnxTest, MatchesPyTorchEager) {
  const auto& [name, devices] = GetParam();
  const testing::ModelCase* c = testing::FindModelCase(name);
  ASSERT_NE(c, nullptr);
  Options o;
  o.cluster = MakeLocalCluster(devices);
  ASSERT_TRUE(Initialize(o).ok());
  Session s;
  // The last device of the set: never the first, so not device 0 by luck.
  Status st = s.AddGraphJson(
      1,
      testing::ModelGraphJson(c->file, c->inputs.size(), c->outputs.size(),
                              {devices.back()}, "", c->framework),
      "model graph " + name, "");
  ASSERT_TRUE(st.ok()) << st.ToString();
  st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<Tensor> in;
  for (const std::string& f : c->inputs) in.push_back(testing::LoadNpy(f));
  FlowInfo info;
  st = s.FeedData(1, in, info, kTimeoutMs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<Tensor> out;
  FlowInfo got;
  st = s.FetchData(1, &out, &got, kTimeoutMs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(got.ret_code, 0) << "the model failed on its inputs";
  ASSERT_EQ(out.size(), c->outputs.size());
  for (size_t i = 0; i < out.size(); ++i) {
    std::string why;
    EXPECT_TRUE(testing::TensorsMatch(out[i], testing::LoadNpy(c->outputs[i]),
                                      kTolerance, &why))
        << name << " output " << i << ": " << why;
  }
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
  for (const DeviceReport& r : reports) {
    EXPECT_EQ(r.implicit_bindings, 0u) << "device " << r.id;
  }
  EXPECT_TRUE(s.RemoveGraph(1).ok());
}

std::vector<std::string> CaseNames() {
  return {"resnet18",
          "mobilenet_v2",
          "transformer_opset17",
          "transformer_opset11",
          "elementwise",
          "elementwise_opset17",
          "reductions",
          "reductions_opset11",
          "shapes",
          "nn",
          "more_ops",
          "integers",
          "integers32",
          "tf_cnn",
          "tf_ops",
          "tf_add",
          "ge_cnn",
          "ge_nn",
          "ge_elementwise",
          "ge_shapes"};
}

std::string ParamName(const ::testing::TestParamInfo<Param>& info) {
  return std::get<0>(info.param) + "_" +
         testing::DevicesName(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ModelOnnxTest,
    ::testing::Combine(::testing::ValuesIn(CaseNames()),
                       ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                         std::vector<int32_t>{3, 6, 7},
                                         std::vector<int32_t>{0, 1, 2})),
    ParamName);

}  // namespace
}  // namespace hflow
