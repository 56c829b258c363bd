// Compile config tests: GE's format parsed, the library's locations in GE's
// order (the working directory, then the config file's folder); every
// malformed field rejected naming the file and field.
#include "flow_func/compile_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace hflow {
namespace flow_func {
namespace {

using ::testing::HasSubstr;

Status Parse(const std::string& text, CompileConfig* cfg) {
  return ParseCompileConfig(text, "add_func.json", "/work/graphs", cfg,
                            "/run/here");
}

// "path (field, GE|fallback, load|build)" for each location, in order.
std::vector<std::string> Where(const CompileConfig& cfg) {
  std::vector<std::string> out;
  for (const UdfLocation& l : cfg.Locations()) {
    out.push_back(l.path + " " + l.field + (l.ge_rule ? " GE" : " fallback") +
                  (l.prebuilt ? " load" : " build"));
  }
  return out;
}

TEST(CompileConfigTest, ParsesGeFormatAndResolvesPaths) {
  CompileConfig cfg;
  ASSERT_TRUE(Parse(R"({"func_list": [{"func_name": "Proc1",
      "inputs_index": [0, 1], "outputs_index": [0]}],
      "input_num": 4, "output_num": 2, "target_bin": "libadd.so",
      "workspace": "../udf_workspace", "cmakelist_path": "01_udf_add/CMakeLists.txt"})",
                    &cfg)
                  .ok());
  ASSERT_EQ(cfg.funcs.size(), 1u);
  EXPECT_EQ(cfg.funcs[0].name, "Proc1");
  EXPECT_EQ(cfg.funcs[0].inputs_index, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(cfg.input_num, 4);
  EXPECT_EQ(cfg.output_num, 2);
  EXPECT_EQ(cfg.TargetLibName(), "add");
  EXPECT_EQ(cfg.workspace, "../udf_workspace");
  EXPECT_EQ(cfg.work_dir, "/run/here");
  EXPECT_EQ(cfg.config_dir, "/work/graphs");
  // GE: the workspace from the working directory, everything inside it;
  // then the config-relative fallback.
  EXPECT_THAT(
      Where(cfg),
      ::testing::ElementsAre(
          "/run/udf_workspace/libadd.so target_bin GE load",
          "/run/udf_workspace/01_udf_add/CMakeLists.txt cmakelist_path GE "
          "build",
          "/work/graphs/libadd.so target_bin fallback load",
          "/work/udf_workspace/01_udf_add/CMakeLists.txt cmakelist_path "
          "fallback build"));
}

// GE builds <workspace>/CMakeLists.txt when cmakelist_path is not given; an
// absolute workspace is the same from both bases (listed once).
TEST(CompileConfigTest, DefaultCmakelistsAndAbsoluteWorkspace) {
  CompileConfig cfg;
  ASSERT_TRUE(Parse(R"({"func_list": [{"func_name": "F"}],
      "target_bin": "libf.so", "workspace": "/ws"})",
                    &cfg)
                  .ok());
  EXPECT_THAT(Where(cfg), ::testing::ElementsAre(
                              "/ws/libf.so target_bin GE load",
                              "/ws/CMakeLists.txt workspace GE build",
                              "/work/graphs/libf.so target_bin fallback load"));
}

// GE's FunctionPp fields hflow does not model pass (and are ignored); any
// other key is a typo, rejected naming the file and the key.
TEST(CompileConfigTest, AcceptsGeFieldsAndRejectsUnknownKeys) {
  CompileConfig cfg;
  Status s = Parse(R"({"func_list": [{"func_name": "F", "stream_input": true}],
      "input_num": 1, "output_num": 1, "target_bin": "libf.so",
      "workspace": ".", "cmakelist_path": "CMakeLists.txt",
      "compiler": "toolchain.json", "heavy_load": true,
      "visible_device_enable": false, "built_in_flow_func": false,
      "running_resources_info": [{"type": "cpu", "num": 2}],
      "buf_cfg": [{"total_size": 2097152, "blk_size": 256,
                   "max_buf_size": 8192, "page_type": "normal"}],
      "comment": "annotations pass"})",
                   &cfg);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(cfg.funcs[0].name, "F");

  s = Parse(R"({"func_list": [{"func_name": "F"}], "target_bin": "libf.so",
      "heavy_lod": true})",
            &cfg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("add_func.json: heavy_lod: unknown field"));
  EXPECT_THAT(s.message(), HasSubstr("accepted and ignored: compiler"));
  s = Parse(R"({"func_list": [{"func_name": "F", "input_index": [0]}],
      "target_bin": "libf.so"})",
            &cfg);
  EXPECT_THAT(
      s.message(),
      HasSubstr("add_func.json: func_list[0].input_index: unknown field"));
}

// stream_input marks a queue proc; anything but a boolean is refused with
// GE's wording, naming the file and the field.
TEST(CompileConfigTest, StreamInputIsABoolean) {
  CompileConfig cfg;
  ASSERT_TRUE(Parse(R"({"func_list": [{"func_name": "F", "stream_input": true},
      {"func_name": "G"}], "target_bin": "libf.so"})",
                    &cfg)
                  .ok());
  EXPECT_TRUE(cfg.funcs[0].stream_input);
  EXPECT_FALSE(cfg.funcs[1].stream_input);
  Status s = Parse(R"({"func_list": [{"func_name": "F",
      "stream_input": "Queue"}], "target_bin": "libf.so"})",
                   &cfg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("add_func.json: func_list[0].stream_input"));
  EXPECT_THAT(s.message(), HasSubstr("value type should be boolean"));
}

// Without a workspace the base folders stand for it, and nothing is built
// unless cmakelist_path names the project.
TEST(CompileConfigTest, WithoutWorkspaceTheBaseFoldersStandForIt) {
  CompileConfig cfg;
  ASSERT_TRUE(Parse(R"({"func_list": [{"func_name": "F"}],
      "target_bin": "libf.so", "cmakelist_path": "udf/CMakeLists.txt"})",
                    &cfg)
                  .ok());
  EXPECT_THAT(
      Where(cfg),
      ::testing::ElementsAre(
          "/run/here/libf.so target_bin GE load",
          "/run/here/udf/CMakeLists.txt cmakelist_path GE build",
          "/work/graphs/libf.so target_bin fallback load",
          "/work/graphs/udf/CMakeLists.txt cmakelist_path fallback build"));
  EXPECT_EQ(cfg.input_num, -1);
  ASSERT_TRUE(
      Parse(R"({"func_list": [{"func_name": "F"}], "target_bin": "libf.so"})",
            &cfg)
          .ok());
  EXPECT_THAT(Where(cfg), ::testing::ElementsAre(
                              "/run/here/libf.so target_bin GE load",
                              "/work/graphs/libf.so target_bin fallback load"));
}

// Nothing found: the error names the file, the fields and every path tried.
TEST(CompileConfigTest, NothingFoundNamesEveryPathTried) {
  CompileConfig cfg;
  ASSERT_TRUE(Parse(R"({"func_list": [{"func_name": "F"}],
      "target_bin": "libf.so", "workspace": "udf"})",
                    &cfg)
                  .ok());
  Status s = cfg.NothingFound(false);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("add_func.json: target_bin, workspace"));
  for (const UdfLocation& l : cfg.Locations()) {
    EXPECT_THAT(s.message(), HasSubstr(l.path));
  }
  EXPECT_THAT(s.message(), HasSubstr("/run/here/udf/CMakeLists.txt (workspace"
                                     ", GE: from the working directory)"));
  s = cfg.NothingFound(true);
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("libf.so (")));
  EXPECT_THAT(s.message(), HasSubstr("/work/graphs/udf/CMakeLists.txt"));
}

struct BadCase {
  const char* json;
  const char* field;
};

TEST(CompileConfigTest, RejectsMalformedFieldsNamingThem) {
  const BadCase cases[] = {
      {R"({"func_list": [)", "(document)"},
      {R"([1])", "(document)"},
      {R"({"target_bin": "liba.so"})", "func_list"},
      {R"({"func_list": [], "target_bin": "liba.so"})", "func_list"},
      {R"({"func_list": [{}], "target_bin": "liba.so"})",
       "func_list[0].func_name"},
      {R"({"func_list": [{"func_name": ""}], "target_bin": "liba.so"})",
       "func_list[0].func_name"},
      {R"({"func_list": [{"func_name": "A"}, {"func_name": "A"}],
           "target_bin": "liba.so"})",
       "func_list[1].func_name"},
      {R"({"func_list": [{"func_name": "A", "inputs_index": [0, 0]}],
           "target_bin": "liba.so"})",
       "func_list[0].inputs_index"},
      {R"({"func_list": [{"func_name": "A", "inputs_index": [-1]}],
           "target_bin": "liba.so"})",
       "func_list[0].inputs_index[0]"},
      {R"({"func_list": [{"func_name": "A", "inputs_index": [2]}],
           "input_num": 2, "target_bin": "liba.so"})",
       "func_list[0].inputs_index"},
      {R"({"func_list": [{"func_name": "A", "outputs_index": [1]}],
           "output_num": 1, "target_bin": "liba.so"})",
       "func_list[0].outputs_index"},
      {R"({"func_list": [{"func_name": "A"}], "input_num": "2",
           "target_bin": "liba.so"})",
       "input_num"},
      {R"({"func_list": [{"func_name": "A"}]})", "target_bin"},
      {R"({"func_list": [{"func_name": "A"}], "target_bin": "liba.a"})",
       "target_bin"},
      {R"({"func_list": [{"func_name": "A"}], "target_bin": "liba.so",
           "workspace": 3})",
       "workspace"},
  };
  for (const BadCase& c : cases) {
    CompileConfig cfg;
    Status s = Parse(c.json, &cfg);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(s.message(),
                HasSubstr(std::string("add_func.json: ") + c.field + ":"))
        << c.json;
  }
}

TEST(CompileConfigTest, LoadsFileRelativeToItsDirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "hflow_cc_test";
  fs::create_directories(dir / "sub");
  {
    std::ofstream f(dir / "sub" / "f.json");
    f << R"({"func_list": [{"func_name": "F"}], "target_bin": "libf.so"})";
  }
  CompileConfig cfg;
  ASSERT_TRUE(
      LoadCompileConfigFile((dir / "sub" / "f.json").string(), &cfg).ok());
  EXPECT_EQ(cfg.config_dir, (dir / "sub").string());
  EXPECT_EQ(cfg.work_dir, fs::current_path().lexically_normal().string());
  Status s = LoadCompileConfigFile((dir / "missing.json").string(), &cfg);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("missing.json"));
  fs::remove_all(dir);
}

// Found by fuzzing (fuzz/regressions/compile_config/): numbers beyond int32
// were narrowed silently, so "input_num": 4294967296 became 0 and an index
// 4294967296 became index 0.
TEST(CompileConfigTest, RejectsNumbersBeyondInt32) {
  const BadCase cases[] = {
      {R"({"func_list": [{"func_name": "A"}], "input_num": 4294967296,
           "target_bin": "liba.so"})",
       "input_num"},
      {R"({"func_list": [{"func_name": "A"}], "output_num": 2147483648,
           "target_bin": "liba.so"})",
       "output_num"},
      {R"({"func_list": [{"func_name": "A", "inputs_index": [4294967296]}],
           "target_bin": "liba.so"})",
       "func_list[0].inputs_index[0]"},
      {R"({"func_list": [{"func_name": "A",
           "outputs_index": [18446744073709551615]}], "target_bin": "liba.so"})",
       "func_list[0].outputs_index[0]"},
  };
  for (const BadCase& c : cases) {
    CompileConfig cfg;
    Status s = Parse(c.json, &cfg);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.json;
    EXPECT_THAT(s.message(), HasSubstr(std::string("add_func.json: ") +
                                       c.field + ": must be"))
        << c.json;
  }
  CompileConfig cfg;
  ASSERT_TRUE(Parse(R"({"func_list": [{"func_name": "A", "inputs_index":
                        [2147483646]}], "input_num": 2147483647,
                        "target_bin": "liba.so"})",
                    &cfg)
                  .ok());
  EXPECT_EQ(cfg.input_num, 2147483647);
  EXPECT_THAT(cfg.funcs[0].inputs_index, ::testing::ElementsAre(2147483646));
}

// A config named without a directory has an empty parent path, and
// std::filesystem::absolute("") throws: the load threw instead of parsing.
TEST(CompileConfigTest, LoadsBareFileNameFromTheWorkingDirectory) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "hflow_cc_bare_test";
  fs::create_directories(dir);
  {
    std::ofstream f(dir / "f.json");
    f << R"({"func_list": [{"func_name": "F"}], "target_bin": "libf.so"})";
  }
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  CompileConfig cfg;
  Status s = LoadCompileConfigFile("f.json", &cfg);
  fs::current_path(cwd);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(cfg.config_dir, fs::absolute(dir).lexically_normal().string());
  ASSERT_TRUE(
      ParseCompileConfig(
          R"({"func_list": [{"func_name": "F"}], "target_bin": "libf.so"})",
          "f.json", "", &cfg)
          .ok());
  EXPECT_EQ(cfg.config_dir, fs::current_path().lexically_normal().string());
  fs::remove_all(dir);
}

TEST(CompileConfigTest, DeeplyNestedDocumentIsRejected) {
  CompileConfig cfg;
  Status s = Parse("{\"func_list\": " + std::string(100000, '[') +
                       std::string(100000, ']') + "}",
                   &cfg);
  EXPECT_THAT(s.message(), HasSubstr("add_func.json: (document): malformed "
                                     "JSON: nested deeper than 64 levels"));
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
