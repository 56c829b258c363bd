// Scenario: two UDF libraries register the same function name with
// different code (tests/udf_projects/same_name_a: +1000, same_name_b:
// +2000). Through a Session, each node runs its own compile config's
// library's function, on device sets with and without device 0; a node
// whose config's library lacks the function (only the other one has it) and
// a node that names the shared function without any config both fail to
// build naming the libraries; no node ever runs the other library's code.
//
// Thread-safety: single-threaded tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "test_util.h"

namespace hflow {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Project(const std::string& rel) {
  return std::string(HFLOW_TEST_UDF_DIR) + "/" + rel;
}

// A graph file under the test's temp folder; nodes are JSON objects.
std::string WriteGraph(const std::string& name, const std::string& nodes,
                       const std::string& outputs) {
  // One folder per process: ctest runs the device sets' cases at once.
  const fs::path dir = fs::temp_directory_path() /
                       ("hflow_same_name_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / (name + ".json");
  std::ofstream(file) << R"({"name": ")" << name
                      << R"(", "inputs": ["x"], "nodes": [)" << nodes
                      << R"(], "outputs": [)" << outputs << "]}";
  return file.string();
}

std::string Node(const std::string& name, const std::string& config,
                 const std::string& function) {
  std::string n = R"({"name": ")" + name + R"(", "inputs": ["x"], )" +
                  R"("outputs": 1, "function": ")" + function + "\"";
  if (!config.empty()) n += R"(, "compile_config": ")" + Project(config) + "\"";
  return n + "}";
}

class SameNameTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    const fs::path build = fs::path(HFLOW_BUILD_SDK_DIR).parent_path();
    setenv("HFLOW_UDF_BUILD_DIR", (build / "udf_test_builds").c_str(), 0);
    setenv("HFLOW_SDK_DIR", HFLOW_BUILD_SDK_DIR, 0);
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    Status s = Initialize(o);
    ASSERT_TRUE(s.ok()) << s.ToString();
    session_ = std::make_unique<Session>();
  }
  void TearDown() override {
    session_.reset();
    (void)Finalize();
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  }
  Status Build(const std::string& graph_file) {
    HFLOW_RETURN_IF_ERROR(session_->AddGraphFile(1, graph_file));
    return session_->BuildGraph(1);
  }

  std::unique_ptr<Session> session_;
};

TEST_P(SameNameTest, EachNodeRunsItsOwnLibrarysFunction) {
  const std::string graph = WriteGraph(
      "two_libs",
      Node("a", "same_name_a/echo_func.json", "SameNameEcho") + ", " +
          Node("b", "same_name_b/echo_func.json", "SameNameEcho"),
      R"("a:0", "b:0")");
  Status s = Build(graph);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (uint64_t trans = 1; trans <= 3; ++trans) {
    const int32_t v = static_cast<int32_t>(trans);
    FlowInfo info;
    info.transaction_id = trans;
    s = session_->FeedData(
        1, {Tensor::From<int32_t>(DataType::kInt32, {2}, {v, -v})}, info, 5000);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::vector<Tensor> out;
    s = session_->FetchData(1, &out, &info, 10000);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(info.ret_code, 0);
    EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{1000 + v, 1000 - v}))
        << "node a must run same_name_a's SameNameEcho";
    EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{2000 + v, 2000 - v}))
        << "node b must run same_name_b's SameNameEcho";
  }
}

TEST_P(SameNameTest, FunctionOnlyInTheOtherLibraryIsAClearError) {
  // Node a loads library a (which registers OnlyInA); node b's config names
  // OnlyInA in library b, which does not register it.
  const std::string graph = WriteGraph(
      "only_in_other",
      Node("a", "same_name_a/echo_func.json", "SameNameEcho") + ", " +
          Node("b", "same_name_b/only_in_a_func.json", "OnlyInA"),
      R"("a:0", "b:0")");
  Status s = Build(graph);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("node 'b'"));
  EXPECT_THAT(s.message(), HasSubstr("only_in_a_func.json"));
  EXPECT_THAT(s.message(), HasSubstr("'OnlyInA' is not registered by"));
  EXPECT_THAT(s.message(), HasSubstr("libsame_name_b.so"));
  EXPECT_THAT(s.message(), HasSubstr("only "));
  EXPECT_THAT(s.message(), HasSubstr("libsame_name_a.so registers it"));
}

TEST_P(SameNameTest, NameWithoutConfigRegisteredByTwoLibrariesIsAmbiguous) {
  const std::string graph = WriteGraph(
      "ambiguous",
      Node("a", "same_name_a/echo_func.json", "SameNameEcho") + ", " +
          Node("b", "same_name_b/echo_func.json", "SameNameEcho") + ", " +
          Node("c", "", "SameNameEcho"),
      R"("a:0", "b:0", "c:0")");
  Status s = Build(graph);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("node 'c'"));
  EXPECT_THAT(s.message(), HasSubstr("several UDF libraries"));
  EXPECT_THAT(s.message(), HasSubstr("libsame_name_a.so"));
  EXPECT_THAT(s.message(), HasSubstr("libsame_name_b.so"));
  EXPECT_THAT(s.message(), HasSubstr("compile_config"));
}

INSTANTIATE_TEST_SUITE_P(
    Sets, SameNameTest,
    ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                      std::vector<int32_t>{3, 6, 7},
                      std::vector<int32_t>{0, 1, 2, 3}),
    [](const ::testing::TestParamInfo<std::vector<int32_t>>& info) {
      return testing::DevicesName(info.param);
    });

}  // namespace
}  // namespace hflow
