// Scenario: UDF projects written as for CANN DataFlow (GE-style CMakeLists,
// C++11, old string ABI, --whole-archive link of the SDK's libflow_func.so)
// are built through hflow's builder, loaded, and run: a single-function UDF
// (MetaFlowFunc + REGISTER_FLOW_FUNC) and a multi-function one
// (FLOW_FUNC_REGISTRAR chain) reading an attr of every type, with a string
// attr crossing the ABI boundary. Also: Init/Proc failures, a missing
// function name, and a failing build with its compiler output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "flow_func/compile_config.h"
#include "flow_func/init_params.h"
#include "flow_func/lib/flow_func_internal.h"
#include "flow_func/udf_builder.h"
#include "flow_func/udf_library.h"
#include "udf_test_util.h"

namespace hflow {
namespace {

namespace fs = std::filesystem;
using flow_func::CompileConfig;
using FlowFunc::TensorDataType;
using ::testing::HasSubstr;

flow_func::UdfBuildOptions BuildOpts() {
  flow_func::UdfBuildOptions o;
  o.sdk_dir = HFLOW_BUILD_SDK_DIR;
  o.build_root =
      (fs::path(HFLOW_BUILD_SDK_DIR).parent_path() / "udf_test_builds")
          .string();
  return o;
}

CompileConfig Config(const std::string& project, const std::string& file) {
  CompileConfig cfg;
  Status s = flow_func::LoadCompileConfigFile(
      std::string(HFLOW_TEST_UDF_DIR) + "/" + project + "/" + file, &cfg);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return cfg;
}

flow_func::AttrMap Attrs(const char* json) {
  flow_func::AttrMap m;
  Status s = flow_func::AttrMapFromJson(nlohmann::json::parse(json),
                                        "init_params", &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return m;
}

TEST(UdfBuildTest, SingleFunctionUdfBuildsLoadsAndRuns) {
  CompileConfig cfg = Config("single_add", "add_func.json");
  std::string so;
  Status s = flow_func::LoadUdfFromConfig(cfg, BuildOpts(), &so);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(flow_func::IsFunctionRegistered("SingleAdd"));

  testing::UdfHarness h({2, 3, 4, 5}, 4);
  std::unique_ptr<flow_func::UdfInstance> inst;
  ASSERT_TRUE(
      flow_func::UdfInstance::Create(
          cfg.funcs, h.Env("add", 2, 1, Attrs(R"({"bias": 10})")), &inst)
          .ok());
  EXPECT_FALSE(inst->is_multi());
  auto bound = h.Bind();
  ASSERT_TRUE(inst->Init(*bound).ok());
  auto a = h.Tensor<int32_t>(TensorDataType::DT_INT32, {3}, {1, 2, 3});
  auto b = h.Tensor<int32_t>(TensorDataType::DT_INT32, {3}, {10, 20, 30});
  ASSERT_EQ(inst->Proc(*bound, 0, {a, b}), FlowFunc::FLOW_FUNC_SUCCESS);
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].first, 0u);
  EXPECT_EQ(testing::UdfHarness::Values<int32_t>(*out[0].second),
            (std::vector<int32_t>{21, 32, 43}));
  EXPECT_EQ(out[0].second->mbuf()->device(), 4);  // allocated on its device

  // Proc failure: the UDF's code comes back as is.
  auto f = h.Tensor<float>(TensorDataType::DT_FLOAT, {3}, {1, 2, 3});
  EXPECT_EQ(inst->Proc(*bound, 0, {f, b}),
            FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
}

TEST(UdfBuildTest, InitFailureNamesNodeFunctionAndCode) {
  CompileConfig cfg = Config("single_add", "add_func.json");
  ASSERT_TRUE(flow_func::LoadUdfFromConfig(cfg, BuildOpts()).ok());
  testing::UdfHarness h;
  std::unique_ptr<flow_func::UdfInstance> inst;
  ASSERT_TRUE(flow_func::UdfInstance::Create(
                  cfg.funcs,
                  h.Env("adder", 2, 1, Attrs(R"({"fail_init": true})")), &inst)
                  .ok());
  auto bound = h.Bind();
  Status s = inst->Init(*bound);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("node 'adder'"));
  EXPECT_THAT(s.message(), HasSubstr("function 'SingleAdd'"));
  EXPECT_THAT(
      s.message(),
      HasSubstr(std::to_string(FlowFunc::FLOW_FUNC_ERR_USER_DEFINE_START + 1)));
}

TEST(UdfBuildTest, MultiFunctionUdfSharesOneInstanceAndReadsEveryAttrType) {
  CompileConfig cfg = Config("multi_attrs", "multi_func.json");
  ASSERT_TRUE(flow_func::LoadUdfFromConfig(cfg, BuildOpts()).ok());
  testing::UdfHarness h({3, 6, 7}, 6);
  std::unique_ptr<flow_func::UdfInstance> inst;
  auto attrs = Attrs(R"({"name": "hflow-udf", "names": ["a", "b"], "count": 42,
      "ints": [1, 2, 3], "shape_list": [[1, 2], [3, 4]], "scale": 0.5,
      "scales": [1.5, 2.5], "enabled": true, "flags": [false, true],
      "out_type": "DT_INT32", "types": ["DT_FLOAT", "DT_INT8"]})");
  ASSERT_TRUE(flow_func::UdfInstance::Create(cfg.funcs,
                                             h.Env("multi", 2, 3, attrs), &inst)
                  .ok());
  EXPECT_TRUE(inst->is_multi());
  auto bound = h.Bind();
  ASSERT_TRUE(inst->Init(*bound).ok());
  auto x = h.Tensor<float>(TensorDataType::DT_FLOAT, {2}, {1.5f, -2});
  ASSERT_EQ(inst->Proc(*bound, 0, {x}), FlowFunc::FLOW_FUNC_SUCCESS);
  ASSERT_EQ(inst->Proc(*bound, 1, {x}), FlowFunc::FLOW_FUNC_SUCCESS);
  auto out = h.outputs();
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].first, 0u);
  EXPECT_EQ(testing::UdfHarness::Values<float>(*out[0].second),
            (std::vector<float>{3.0f, -4.0f}));
  auto report = testing::UdfHarness::Values<int64_t>(*out[1].second);
  ASSERT_EQ(report.size(), 2u);
  EXPECT_EQ(report[0], (1 << 14) - 1)
      << std::hex << report[0];  // all 14 checks
  EXPECT_EQ(report[1], 1);       // ProcDouble ran once on the shared instance
  auto text = testing::UdfHarness::Values<uint8_t>(*out[2].second);
  EXPECT_EQ(std::string(text.begin(), text.end()), "hflow-udf");
}

TEST(UdfBuildTest, LibraryRegistersIntoTheOneRegistry) {
  CompileConfig cfg = Config("single_add", "add_func.json");
  std::string so;
  ASSERT_TRUE(flow_func::ResolveUdfBinary(cfg, BuildOpts(), &so).ok());
  std::vector<std::string> names;
  ASSERT_TRUE(flow_func::LoadUdfLibrary(so, &names).ok());
  // Either this process loaded it just now (and saw the registration) or an
  // earlier test did; in both cases the name is in libflow_func's registry.
  if (!names.empty()) {
    EXPECT_EQ(names, std::vector<std::string>{"SingleAdd"});
  }
  FlowFunc::FLOW_FUNC_CREATOR_FUNC creator;
  EXPECT_TRUE(FlowFunc::internal::LookupFlowFunc("SingleAdd", &creator));
}

TEST(UdfBuildTest, MissingFunctionNameIsNamed) {
  CompileConfig cfg = Config("single_add", "add_func.json");
  cfg.funcs[0].name = "NoSuchFunc";
  Status s = flow_func::LoadUdfFromConfig(cfg, BuildOpts());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("add_func.json"));
  EXPECT_THAT(s.message(), HasSubstr("'NoSuchFunc'"));
  EXPECT_THAT(s.message(), HasSubstr("SingleAdd"));  // what is registered
}

TEST(UdfBuildTest, FailingBuildReportsCompilerOutput) {
  CompileConfig cfg = Config("broken", "broken_func.json");
  Status s = flow_func::LoadUdfFromConfig(cfg, BuildOpts());
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("broken_func.json"));
  EXPECT_THAT(s.message(), HasSubstr("broken.cpp"));
  EXPECT_THAT(s.message(), HasSubstr("error"));
}

TEST(UdfBuildTest, UnloadableLibraryIsNamed) {
  fs::path bogus = fs::temp_directory_path() / "hflow_not_a_library.so";
  { std::ofstream(bogus) << "not an ELF file"; }
  Status s = flow_func::LoadUdfLibrary(bogus.string());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("hflow_not_a_library.so"));
  fs::remove(bogus);
}

}  // namespace
}  // namespace hflow
