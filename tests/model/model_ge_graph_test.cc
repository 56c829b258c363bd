// The GE-graph front-end and the parsers' conversion, end to end:
// - every ONNX and TensorFlow case of the model tests converted as GE's
//   parsers convert it (ConvertModelToGeGraph: the model parsed, written as
//   a GE graph file of ai.onnx ops) runs as a "ge_graph" model node and
//   matches PyTorch eager as the original file does;
// - a GE graph file written by hand (the JSON form: GE ops, inline
//   weights) runs;
// - a corrupt, truncated or inconsistent GE graph file fails the build
//   naming the file and the op or field.
//
//   x0..xn ── m (GraphPp: the GE graph file) ── y0..yk
//
// Thread-safety: each test drives its session from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "model/model_test_util.h"
#include "nlohmann/json.hpp"
#include "session/model_convert.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
constexpr double kTolerance = 1e-4;
constexpr int32_t kTimeoutMs = 60000;

class ModelGeGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(testing::ModelDir().empty());
    Options o;
    o.cluster = MakeLocalCluster({3, 6, 7});
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }

  // Builds graph `id` around GE graph file `file` on device 7.
  Status Build(uint32_t id, const std::string& file, size_t inputs,
               size_t outputs) {
    HFLOW_RETURN_IF_ERROR(s_.AddGraphJson(
        id, testing::ModelGraphJson(file, inputs, outputs, {7}, "", "ge_graph"),
        "ge graph " + file, ""));
    return s_.BuildGraph(id);
  }

  Session s_;
};

TEST_F(ModelGeGraphTest, ParsedModelsMatchPyTorchEager) {
  uint32_t id = 0;
  size_t ran = 0;
  for (const testing::ModelCase& c : testing::ModelCases()) {
    if (c.framework != "onnx" && c.framework != "tensorflow") continue;
    SCOPED_TRACE(c.name);
    std::string bytes;
    Status st = ConvertModelToGeGraph(c.framework, c.file, {}, c.name, &bytes);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(bytes.compare(0, 8, "HFGRAPH1"), 0);
    const std::string file =
        testing::WriteModelTempFile(c.name + ".hfg", bytes);
    ++id;
    st = Build(id, file, c.inputs.size(), c.outputs.size());
    ASSERT_TRUE(st.ok()) << st.ToString();
    std::vector<Tensor> in;
    for (const std::string& f : c.inputs) in.push_back(testing::LoadNpy(f));
    FlowInfo info;
    ASSERT_TRUE(s_.FeedData(id, in, info, kTimeoutMs).ok());
    std::vector<Tensor> out;
    FlowInfo got;
    st = s_.FetchData(id, &out, &got, kTimeoutMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(got.ret_code, 0);
    ASSERT_EQ(out.size(), c.outputs.size());
    for (size_t i = 0; i < out.size(); ++i) {
      std::string why;
      EXPECT_TRUE(testing::TensorsMatch(out[i], testing::LoadNpy(c.outputs[i]),
                                        kTolerance, &why))
          << c.name << " output " << i << ": " << why;
    }
    std::vector<DeviceReport> reports;
    ASSERT_TRUE(s_.DeviceReports(id, &reports).ok());
    for (const DeviceReport& r : reports) {
      EXPECT_EQ(r.implicit_bindings, 0u) << "device " << r.id;
    }
    ASSERT_TRUE(s_.RemoveGraph(id).ok());
    ++ran;
  }
  EXPECT_GE(ran, 15u) << "the ONNX and TensorFlow cases of the manifest";
}

// A hand-written graph: (a + w) then an ONNX Relu kept as it is.
constexpr char kHandGraph[] = R"({
 "format": "hflow-ge-graph", "version": 1, "name": "hand",
 "inputs": ["a"], "outputs": [{"op": "relu", "index": 0}],
 "ops": [
  {"name": "relu", "type": "ai.onnx::17::Relu", "input_names": ["x0"],
   "output_names": ["y0"], "inputs": [{"index": 0, "op": "add", "output": 0}]},
  {"name": "add", "type": "Add", "input_names": ["x1", "x2"],
   "output_names": ["y"],
   "inputs": [{"index": 0, "op": "a", "output": 0},
              {"index": 1, "op": "w", "output": 0}]},
  {"name": "a", "type": "Data", "input_names": ["x"], "output_names": ["y"],
   "attrs": {"index": {"int": 0}},
   "descs": {"y": {"dtype": "DT_FLOAT", "dims": [4]}}},
  {"name": "w", "type": "Const", "output_names": ["y"],
   "attrs": {"value": {"tensor": {"dtype": "DT_FLOAT", "dims": [4],
                                  "values": [1, -2, 3, -4]}}}}]})";

TEST_F(ModelGeGraphTest, HandWrittenGraphRuns) {
  const std::string file = testing::WriteModelTempFile("hand.json", kHandGraph);
  Status st = Build(1, file, 1, 1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  const Tensor a =
      Tensor::From<float>(DataType::kFloat, {4}, {0.5f, 0.5f, 0.5f, 0.5f});
  FlowInfo info;
  ASSERT_TRUE(s_.FeedData(1, {a}, info, kTimeoutMs).ok());
  std::vector<Tensor> out;
  FlowInfo got;
  ASSERT_TRUE(s_.FetchData(1, &out, &got, kTimeoutMs).ok());
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].data.size(), 16u);
  std::vector<float> y(4);
  std::memcpy(y.data(), out[0].data.data(), 16);
  EXPECT_EQ(y, (std::vector<float>{1.5f, 0.f, 3.5f, 0.f}));
}

// Each bad file fails the build with a message naming the file and what.
TEST_F(ModelGeGraphTest, BadFilesFailTheBuildNamingWhat) {
  const std::string good = kHandGraph;
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  };
  struct Case {
    std::string name, bytes, want;
  };
  std::string container = "HFGRAPH1";
  container += std::string("\xff\x00\x00\x00\x00\x00\x00\x00", 8) + "{}";
  const std::vector<Case> cases = {
      {"not_a_graph", "\x08\x01garbage", "not a GE graph file"},
      {"truncated", container, "the header says 255 bytes"},
      {"version", with("\"version\": 1", "\"version\": 9"), "\"version\""},
      {"unknown_src", with("\"op\": \"w\"", "\"op\": \"nope\""), "'nope'"},
      {"cycle",
       with("\"op\": \"a\", \"output\": 0",
            "\"op\": \"relu\", "
            "\"output\": 0"),
       "cycle"},
      {"unknown_op", with("\"type\": \"Add\"", "\"type\": \"NoSuchOp\""),
       "NoSuchOp"},
      {"few_values", with("[1, -2, 3, -4]", "[1, 2]"), "op 'w'"},
      {"unknown_onnx_op", with("ai.onnx::17::Relu", "ai.onnx::17::Det"), "Det"},
      {"dims_overflow",
       with("\"dims\": [4],\n                                  \"values\": "
            "[1, -2, 3, -4]",
            "\"dims\": [2147483648, 2147483648, 1, 1], \"offset\": 0, "
            "\"size\": 0"),
       "overflow"},
      {"wrong_json_type",
       with("\"dtype\": \"DT_FLOAT\", \"dims\": [4],",
            "\"dtype\": 5, \"dims\": [4],"),
       "wrong JSON type"},
      {"no_outputs",
       with("\"outputs\": [{\"op\": \"relu\", \"index\": 0}]",
            "\"outputs\": []"),
       "\"outputs\""},
  };
  uint32_t id = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string file =
        testing::WriteModelTempFile("bad_" + c.name + ".json", c.bytes);
    const Status st = Build(++id, file, 1, 1);
    ASSERT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr(file));
    EXPECT_THAT(st.message(), HasSubstr(c.want));
    EXPECT_THAT(st.message(), HasSubstr("'m'"));  // the node
    (void)s_.RemoveGraph(id);
  }
}

// GE's parser option input_data_names orders the model's inputs (GE's
// TensorFlow sample passes it); every input must be named.
TEST_F(ModelGeGraphTest, InputDataNamesOrderTheInputs) {
  const std::string pb = testing::ModelDir() + "/tf_add.pb";
  std::string bytes;
  Status st = ConvertModelToGeGraph("tensorflow", pb,
                                    {{"input_data_names", "b,a"}}, "g", &bytes);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_GT(bytes.size(), 16u);
  uint64_t len = 0;
  for (int i = 7; i >= 0; --i) len = (len << 8) | uint8_t(bytes[8 + i]);
  const nlohmann::json header = nlohmann::json::parse(bytes.substr(16, len));
  EXPECT_EQ(header["inputs"], nlohmann::json({"b:0", "a:0"}));
  st = ConvertModelToGeGraph("tensorflow", pb, {{"input_data_names", "a"}}, "g",
                             &bytes);
  EXPECT_THAT(st.message(), HasSubstr("name every input"));
  st = ConvertModelToGeGraph("tensorflow", pb, {{"input_data_names", "a,zz"}},
                             "g", &bytes);
  EXPECT_THAT(st.message(), HasSubstr("'zz'"));
}

TEST_F(ModelGeGraphTest, ConvertNamesTheFileAndTheOp) {
  std::string bytes;
  Status st = ConvertModelToGeGraph(
      "onnx", testing::ModelDir() + "/unsupported.onnx", {}, "g", &bytes);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("unsupported.onnx"));
  EXPECT_THAT(st.message(), HasSubstr("Det"));
  st = ConvertModelToGeGraph("onnx", "/no/such/model.onnx", {}, "g", &bytes);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("/no/such/model.onnx"));
  st = ConvertModelToGeGraph("onnx", testing::ModelDir() + "/add.onnx",
                             {{"no_such_option", "1"}}, "g", &bytes);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr("no_such_option"));
}

}  // namespace
}  // namespace hflow
