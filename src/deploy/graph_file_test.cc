// Graph file tests: docs/formats.md's example loads from a real file with paths
// resolved against it; every extension (input/output maps, batch attrs,
// deploy path, "node" for output 0) parses; every malformed field, dangling
// reference, duplicate, arity error and cycle is rejected naming the file
// and the JSON path or node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "deploy/graph_def.h"
#include "util/sanitizers.h"

namespace hflow {
namespace deploy {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The "Graph file" example of docs/formats.md, verbatim.
constexpr char kExample[] = R"({"name": "add_pipeline",
 "inputs": ["a", "b"],
 "nodes": [
   {"name": "add", "inputs": ["a", "b"], "outputs": 1,
    "function": "Add", "compile_config": "add_func.json",
    "init_params": {"out_type": "DT_INT32"}},
   {"name": "twice", "inputs": ["add:0", "add:0"], "outputs": 1,
    "function": "Add", "compile_config": "add_func.json"}],
 "outputs": ["twice:0"],
 "exception_catch": false,
 "deploy": {"batch_deploy_info": [{"flow_node_list": ["add"], "logic_device_list": "0:0:2"}]}})";

class GraphFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hflow_graph_file_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "graphs");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& rel, const std::string& text) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }

  fs::path dir_;
};

TEST_F(GraphFileTest, LoadsFormatsExampleWithPathsResolved) {
  Write("graphs/add_func.json", R"({"func_list": [{"func_name": "Add"}],
                                    "target_bin": "libadd.so"})");
  const std::string path = Write("graphs/g.json", kExample);
  GraphDef g;
  Status s = LoadGraphFile(path, &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.name, "add_pipeline");
  EXPECT_EQ(g.source, path);
  EXPECT_EQ(g.base_dir, (dir_ / "graphs").string());
  EXPECT_THAT(g.inputs, ElementsAre("a", "b"));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_THAT(g.nodes[0].inputs,
              ElementsAre(OutputRef{"a", 0}, OutputRef{"b", 0}));
  EXPECT_THAT(g.nodes[1].inputs,
              ElementsAre(OutputRef{"add", 0}, OutputRef{"add", 0}));
  EXPECT_EQ(g.nodes[0].output_num, 1u);
  EXPECT_EQ(g.nodes[0].pp.name, "add");
  EXPECT_EQ(g.nodes[0].pp.function, "Add");
  EXPECT_EQ(g.nodes[0].pp.compile_config,
            (dir_ / "graphs" / "add_func.json").string());
  FlowFunc::TensorDataType dt;
  ASSERT_EQ(g.nodes[0].pp.init_params.count("out_type"), 1u);
  EXPECT_EQ(g.nodes[0].pp.init_params.at("out_type")->GetVal(dt), 0);
  EXPECT_EQ(dt, FlowFunc::TensorDataType::DT_INT32);
  EXPECT_TRUE(g.nodes[1].pp.init_params.empty());
  EXPECT_THAT(g.outputs, ElementsAre(OutputRef{"twice", 0}));
  EXPECT_FALSE(g.exception_catch);
  EXPECT_EQ(Json::parse(g.deploy_info_json), Json::parse(kExample)["deploy"]);
  EXPECT_TRUE(g.deploy_info_path.empty());
  EXPECT_TRUE(g.nodes[0].input_map.empty());
  EXPECT_TRUE(g.nodes[0].input_attrs.empty());
}

TEST_F(GraphFileTest, MissingFileIsNotFoundNamingIt) {
  GraphDef g;
  Status s = LoadGraphFile((dir_ / "nope.json").string(), &g);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("nope.json: cannot read the graph file"));
}

TEST_F(GraphFileTest, DeployPathAndCompileConfigResolveAgainstTheFile) {
  Json j = Json::parse(kExample);
  j["deploy"] = "../deploy/d.json";
  j["nodes"][1]["compile_config"] = "../udf/./twice.json";
  j["exception_catch"] = true;
  GraphDef g;
  ASSERT_TRUE(LoadGraphFile(Write("graphs/g.json", j.dump()), &g).ok());
  EXPECT_EQ(g.deploy_info_path, (dir_ / "deploy" / "d.json").string());
  EXPECT_TRUE(g.deploy_info_json.empty());
  EXPECT_EQ(g.nodes[1].pp.compile_config,
            (dir_ / "udf" / "twice.json").string());
  EXPECT_TRUE(g.exception_catch);
  j["nodes"][1]["compile_config"] = "/abs/twice.json";
  ASSERT_TRUE(LoadGraphFile(Write("graphs/g.json", j.dump()), &g).ok());
  EXPECT_EQ(g.nodes[1].pp.compile_config, "/abs/twice.json");
}

// ---- Extensions, parsed from text (no files needed). ----

GraphDef MustParse(const Json& j) {
  GraphDef g;
  Status s = ParseGraphJson(j.dump(), "g.json", "/graphs", &g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g;
}

TEST(GraphFileExtTest, BareNodeNameIsOutputZeroAndGraphInputMayTakeZero) {
  Json j = Json::parse(kExample);
  j["nodes"][1]["inputs"] = {"add", "a:0"};
  j["outputs"] = {"twice", "add:0"};
  j["inputs"] = {"a", "b"};
  GraphDef g = MustParse(j);
  EXPECT_THAT(g.nodes[1].inputs,
              ElementsAre(OutputRef{"add", 0}, OutputRef{"a", 0}));
  EXPECT_THAT(g.outputs,
              ElementsAre(OutputRef{"twice", 0}, OutputRef{"add", 0}));
}

TEST(GraphFileExtTest, FunctionOnlyCompileConfigOnlySourceNodesNoInputs) {
  Json j = Json::parse(R"({"name": "s", "nodes": [
      {"name": "src", "inputs": [], "outputs": 2, "compile_config": "c.json"},
      {"name": "f", "inputs": ["src:1"], "outputs": 1, "function": "_BuiltIn_Identity",
       "description": "ignored", "_note": "ignored"}],
      "outputs": ["f"], "comment": "ignored"})");
  GraphDef g = MustParse(j);
  EXPECT_TRUE(g.inputs.empty());
  EXPECT_EQ(g.nodes[0].pp.compile_config, "/graphs/c.json");
  EXPECT_TRUE(g.nodes[0].pp.function.empty());
  EXPECT_EQ(g.nodes[1].pp.function, "_BuiltIn_Identity");
  EXPECT_TRUE(g.nodes[1].pp.compile_config.empty());
}

TEST(GraphFileExtTest, NodesUnreachableFromOutputsAreKept) {
  Json j = Json::parse(kExample);
  j["nodes"].push_back(
      {{"name", "side"}, {"inputs", {"a"}}, {"outputs", 1}, {"function", "F"}});
  GraphDef g = MustParse(j);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[2].name, "side");
}

TEST(GraphFileExtTest, InputOutputMapsAndBatchAttrs) {
  Json j = Json::parse(R"({"name": "m", "inputs": ["a", "b", "c"], "nodes": [
      {"name": "n", "inputs": ["a", "b", "c"], "outputs": 2, "function": "F",
       "input_map": [2, 0, 1], "output_map": [1, 0],
       "input_attrs": {
         "0": {"count_batch": {"batch_size": 4, "slide_stride": 2,
               "timeout": 100, "padding": true, "batch_dim": 0,
               "drop_remainder": true}},
         "2": {"time_batch": {"time_window": -1, "timeout": 5,
               "batch_dim": 1, "padding": true, "drop_remainder": true}}}},
      {"name": "d", "inputs": ["n:1"], "outputs": 1, "function": "F",
       "input_attrs": {"0": {"count_batch": {"batch_size": 3}}}}],
      "outputs": ["n:0", "d"]})");
  GraphDef g = MustParse(j);
  const NodeDef& n = g.nodes[0];
  EXPECT_THAT(n.input_map, ElementsAre(2u, 0u, 1u));
  EXPECT_THAT(n.output_map, ElementsAre(1u, 0u));
  ASSERT_EQ(n.input_attrs.size(), 3u);
  EXPECT_TRUE(n.input_attrs[1].empty());
  const auto& cb = std::get<CountBatch>(n.input_attrs[0].at(0));
  EXPECT_EQ(cb.batch_size, 4);
  EXPECT_EQ(cb.slide_stride, 2);
  EXPECT_EQ(cb.timeout, 100);
  EXPECT_TRUE(cb.padding);
  EXPECT_EQ(cb.batch_dim, 0);
  EXPECT_TRUE(cb.drop_remainder);
  const auto& tb = std::get<TimeBatch>(n.input_attrs[2].at(0));
  EXPECT_EQ(tb.time_window, -1);
  EXPECT_EQ(tb.timeout, 5);
  EXPECT_EQ(tb.batch_dim, 1);
  EXPECT_TRUE(tb.padding);
  EXPECT_TRUE(tb.drop_remainder);
  const auto& d = std::get<CountBatch>(g.nodes[1].input_attrs[0].at(0));
  EXPECT_EQ(d.batch_size, 3);
  EXPECT_EQ(d.slide_stride, 0);
  EXPECT_EQ(d.batch_dim, -1);
  EXPECT_FALSE(d.padding);
}

// ---- Malformed fields: (mutation of the example, expected message). ----

struct BadCase {
  std::function<void(Json&)> mutate;
  const char* message;
};

void ExpectRejected(const BadCase& c) {
  Json j = Json::parse(kExample);
  c.mutate(j);
  GraphDef g;
  Status s = ParseGraphJson(j.dump(), "g.json", "/graphs", &g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.message;
  EXPECT_THAT(s.message(), HasSubstr(c.message)) << j.dump();
}

TEST(GraphFileErrorTest, NotJsonOrNotObject) {
  GraphDef g;
  Status s = ParseGraphJson("{\"name\": ", "g.json", "/", &g);
  EXPECT_THAT(s.message(),
              HasSubstr("g.json: (document): malformed JSON: parse error at "
                        "line 1"));
  EXPECT_THAT(
      s.message(),
      HasSubstr("; check brackets, commas and quotes at that position"));
  s = ParseGraphJson("[1]", "g.json", "/", &g);
  EXPECT_EQ(s.message(),
            "g.json: (document): must be an object, got array [1]; write "
            "{\"name\": ..., \"nodes\": [...], \"outputs\": [...]}");
}

TEST(GraphFileErrorTest, DanglingReferenceNamesFilePathAndKnownNames) {
  Json j = Json::parse(kExample);
  j["nodes"][1]["inputs"][0] = "ad:0";
  GraphDef g;
  Status s = ParseGraphJson(j.dump(), "g.json", "/graphs", &g);
  EXPECT_EQ(s.message(),
            "g.json: nodes[1].inputs[0]: 'ad:0' is neither a "
            "graph input nor a node; name one of: a, b, add, twice");
}

TEST(GraphFileErrorTest, TopLevelFields) {
  const BadCase cases[] = {
      {[](Json& j) { j.erase("name"); }, "g.json: name: is missing"},
      {[](Json& j) { j["name"] = ""; },
       "g.json: name: must be a non-empty string"},
      {[](Json& j) { j["name"] = 3; },
       "g.json: name: must be a non-empty string"},
      {[](Json& j) { j["inputs"] = "a"; }, "g.json: inputs: must be an array"},
      {[](Json& j) {
         j["inputs"] = {"a", 1};
       },
       "g.json: inputs[1]: must be a non-empty"},
      {[](Json& j) {
         j["inputs"] = {"a", "b", "a"};
       },
       "g.json: inputs[2]: graph input 'a' is declared twice"},
      {[](Json& j) { j.erase("nodes"); },
       "g.json: nodes: must be a non-empty array"},
      {[](Json& j) { j["nodes"] = Json::array(); },
       "g.json: nodes: must be a non-empty"},
      {[](Json& j) { j["nodes"][0] = 1; },
       "g.json: nodes[0]: must be an object"},
      {[](Json& j) { j.erase("outputs"); },
       "g.json: outputs: must be a non-empty array"},
      {[](Json& j) { j["outputs"] = Json::array(); },
       "g.json: outputs: must be a non-empty"},
      {[](Json& j) { j["outputs"] = {"twice:1"}; },
       "g.json: outputs[0]: 'twice:1' is out of range: node 'twice' has 1 "
       "output(s)"},
      {[](Json& j) { j["outputs"] = {"a"}; },
       "g.json: outputs[0]: 'a' is a graph input; graph outputs must be node"},
      {[](Json& j) { j["outputs"] = {"nope:0"}; },
       "g.json: outputs[0]: 'nope:0' is neither a graph input nor a node"},
      {[](Json& j) { j["exception_catch"] = "yes"; },
       "g.json: exception_catch: must be true or false"},
      {[](Json& j) { j["deploy"] = 5; },
       "g.json: deploy: must be a deploy info object"},
      {[](Json& j) { j["deploy"] = ""; },
       "g.json: deploy: must be a deploy info object"},
      {[](Json& j) { j["exception_cach"] = true; },
       "g.json: exception_cach: unknown field; known fields: name, inputs"},
  };
  for (const auto& c : cases) ExpectRejected(c);
}

TEST(GraphFileErrorTest, NodeFields) {
  const BadCase cases[] = {
      {[](Json& j) { j["nodes"][1].erase("name"); },
       "g.json: nodes[1].name: is missing"},
      {[](Json& j) { j["nodes"][1]["name"] = "add"; },
       "g.json: nodes[1].name: 'add' is already the name of a graph input or "
       "node"},
      {[](Json& j) { j["nodes"][1]["name"] = "b"; },
       "g.json: nodes[1].name: 'b' is already the name"},
      {[](Json& j) { j["nodes"][1]["name"] = "t:w"; },
       "g.json: nodes[1].name: 't:w': names may not contain ':'"},
      {[](Json& j) { j["nodes"][0].erase("inputs"); },
       "g.json: nodes[0].inputs: must be an array of references"},
      {[](Json& j) { j["nodes"][0].erase("outputs"); },
       "g.json: nodes[0].outputs: is missing"},
      {[](Json& j) { j["nodes"][0]["outputs"] = -1; },
       "g.json: nodes[0].outputs: must be in [0, "},
      {[](Json& j) { j["nodes"][0]["outputs"] = "1"; },
       "g.json: nodes[0].outputs: must be an integer"},
      {[](Json& j) {
         j["nodes"][0].erase("function");
         j["nodes"][0].erase("compile_config");
       },
       "g.json: nodes[0]: node 'add' needs \"function\""},
      {[](Json& j) { j["nodes"][0]["function"] = ""; },
       "g.json: nodes[0].function: must be a non-empty string"},
      {[](Json& j) { j["nodes"][0]["compile_config"] = 7; },
       "g.json: nodes[0].compile_config: must be a non-empty string"},
      {[](Json& j) {
         j["nodes"][0]["init_params"] = {{"bias", {{"x", 1}}}};
       },
       "g.json: nodes[0].init_params.bias: must be a number"},
      {[](Json& j) { j["nodes"][0]["init_params"] = 3; },
       "g.json: nodes[0].init_params: must be an object"},
      {[](Json& j) { j["nodes"][0]["input"] = {"a"}; },
       "g.json: nodes[0].input: unknown field"},
      {[](Json& j) { j["nodes"][1]["inputs"][1] = 3; },
       "g.json: nodes[1].inputs[1]: must be a graph input name or "
       "'node:output_index'"},
      {[](Json& j) { j["nodes"][1]["inputs"][1] = "add:x"; },
       "g.json: nodes[1].inputs[1]: 'add:x': the output index after ':' must "
       "be"},
      {[](Json& j) { j["nodes"][1]["inputs"][1] = "add:"; },
       "'add:': the output index after ':' must be"},
      {[](Json& j) { j["nodes"][1]["inputs"][1] = "add:1"; },
       "g.json: nodes[1].inputs[1]: 'add:1' is out of range: node 'add' has 1"},
      {[](Json& j) { j["nodes"][1]["inputs"][1] = "a:1"; },
       "g.json: nodes[1].inputs[1]: 'a:1': graph input 'a' has a single "
       "output; "
       "write 'a'"},
  };
  for (const auto& c : cases) ExpectRejected(c);
}

TEST(GraphFileErrorTest, MapsAndAttrs) {
  const BadCase cases[] = {
      {[](Json& j) { j["nodes"][0]["input_map"] = 1; },
       "g.json: nodes[0].input_map: must be an array"},
      {[](Json& j) {
         j["nodes"][0]["input_map"] = {0, -1};
       },
       "g.json: nodes[0].input_map[1]: must be in [0, "},
      {[](Json& j) { j["nodes"][0]["input_map"] = {0}; },
       "g.json: node 'add': input_map has 1 entries but the node has 2"},
      {[](Json& j) {
         j["nodes"][0]["input_map"] = {0, 0};
       },
       "g.json: node 'add': input_map[1]: pp index 0 is mapped twice"},
      {[](Json& j) { j["nodes"][0]["output_map"] = {1}; },
       "g.json: node 'add': output_map[0]: pp index 1 is out of range"},
      {[](Json& j) { j["nodes"][0]["input_attrs"] = Json::array(); },
       "g.json: nodes[0].input_attrs: must be an object"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"] = {{"2", Json::object()}};
       },
       "g.json: nodes[0].input_attrs.2: the key must be a node input index "
       "below 2"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"] = {{"x", Json::object()}};
       },
       "g.json: nodes[0].input_attrs.x: the key must be a node input index"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"] = {{"0", {{"batch", 1}}}};
       },
       "g.json: nodes[0].input_attrs.0: must be {\"count_batch\""},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["0"] = {
             {"count_batch", {{"batch_size", 1}}},
             {"time_batch", {{"time_window", 1}}}};
       },
       "g.json: nodes[0].input_attrs.0: must be {\"count_batch\""},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["1"]["count_batch"] = Json::object();
       },
       "g.json: nodes[0].input_attrs.1.count_batch.batch_size: is missing"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["1"]["count_batch"] = {{"batch_size", 0}};
       },
       "g.json: nodes[0].input_attrs.1.count_batch.batch_size: must be in "
       "[1, "},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["1"]["count_batch"] = {{"batch_size", 2},
                                                             {"padding", 1}};
       },
       "g.json: nodes[0].input_attrs.1.count_batch.padding: must be true or "
       "false"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["1"]["count_batch"] = {{"batch_size", 2},
                                                             {"slide", 1}};
       },
       "g.json: nodes[0].input_attrs.1.count_batch.slide: unknown field"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["1"]["count_batch"] = {
             {"batch_size", 2}, {"slide_stride", 3}};
       },
       "g.json: node 'add': input 1: count batch slide_stride must be in [0, "
       "batch_size]"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["0"]["time_batch"] = {{"timeout", 1}};
       },
       "g.json: nodes[0].input_attrs.0.time_batch.time_window: is missing"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["0"]["time_batch"] = {{"time_window", 0}};
       },
       "g.json: nodes[0].input_attrs.0.time_batch.time_window: must be > 0 ms"},
      {[](Json& j) {
         j["nodes"][0]["input_attrs"]["0"]["time_batch"] = {{"time_window", 5},
                                                            {"batch_dim", -2}};
       },
       "g.json: nodes[0].input_attrs.0.time_batch.batch_dim: must be in [-1, "},
  };
  for (const auto& c : cases) ExpectRejected(c);
}

TEST(GraphFileErrorTest, CyclesNameFileAndNodes) {
  const BadCase cases[] = {
      {[](Json& j) { j["nodes"][0]["inputs"][1] = "twice:0"; },
       "g.json: cycle: add -> twice -> add"},
      {[](Json& j) { j["nodes"][1]["inputs"][1] = "twice"; },
       "g.json: cycle: twice -> twice"},
  };
  for (const auto& c : cases) ExpectRejected(c);
}

// References used to resolve by a linear search over every node, so a
// generated graph of n nodes parsed in O(n^2); they resolve through a hash
// map now (the time bound is generous, for sanitizer builds).
TEST(GraphFileExtTest, LongChainParsesInLinearTime) {
  constexpr int kNodes = 50000;
  Json j = {{"name", "long"}, {"inputs", {"a"}}, {"nodes", Json::array()}};
  for (int i = 0; i < kNodes; ++i) {
    j["nodes"].push_back(
        {{"name", "n" + std::to_string(i)},
         {"inputs", {i == 0 ? "a" : "n" + std::to_string(i - 1) + ":0"}},
         {"outputs", 1},
         {"function", "F"}});
  }
  j["outputs"] = {"n" + std::to_string(kNodes - 1)};
  const auto start = std::chrono::steady_clock::now();
  GraphDef g = MustParse(j);
  // A quadratic lookup takes minutes here; linear takes well under a second
  // in a plain build. Sanitizer builds are too slow for any fixed bound.
#if !defined(HFLOW_TSAN) && !defined(HFLOW_ASAN)
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
#else
  (void)start;
#endif
  ASSERT_EQ(g.nodes.size(), static_cast<size_t>(kNodes));
  EXPECT_EQ(g.nodes.back().inputs[0],
            (OutputRef{"n" + std::to_string(kNodes - 2), 0}));
}

// Found by fuzzing (fuzz/regressions/graph_file/deep_deploy_object.json is a
// small stand-in): an inline "deploy" object nested 200000 levels deep
// overflowed the stack when the parser dumped it to text. Documents nested
// deeper than util::kMaxJsonDepth are rejected before any value exists.
TEST(GraphFileErrorTest, DeeplyNestedDocumentIsRejected) {
  const int depth = 200000;
  const std::string text =
      R"({"name": "g", "nodes": [{"name": "n", "inputs": [], "outputs": 1,
          "function": "F"}], "outputs": ["n"], "deploy": {"x": )" +
      std::string(depth, '[') + std::string(depth, ']') + "}}";
  GraphDef g;
  Status s = ParseGraphJson(text, "g.json", "/", &g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("g.json: (document): malformed JSON"));
  EXPECT_THAT(s.message(), HasSubstr("nested deeper than 64 levels"));
}

}  // namespace
}  // namespace deploy
}  // namespace hflow
