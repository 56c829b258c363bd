// Where ResolveUdfBinary finds a compile config's library, with real
// folders: GE's paths (the working directory, then the workspace) first,
// the config-relative fallback when they do not exist, and an error naming
// every path tried when nothing does. The libraries are empty files (only
// their existence is checked here); the builds run a CMakeLists.txt that
// fails at once, to show which project was picked.
#include "flow_func/udf_builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hflow {
namespace flow_func {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class UdfLocationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("hflow_udf_location_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "cwd" / "udf");
    fs::create_directories(root_ / "cfg" / "udf");
  }
  void TearDown() override { fs::remove_all(root_); }

  static void Touch(const fs::path& p, const std::string& text = "") {
    std::ofstream(p) << text;
  }

  CompileConfig Config(const std::string& extra = "") {
    CompileConfig cfg;
    Status s = ParseCompileConfig(
        R"({"func_list": [{"func_name": "F"}], "target_bin": "libf.so",
            "workspace": "udf")" +
            extra + "}",
        "f.json", (root_ / "cfg").string(), &cfg, (root_ / "cwd").string());
    EXPECT_TRUE(s.ok()) << s.ToString();
    return cfg;
  }

  UdfBuildOptions Opts() const {
    UdfBuildOptions o;
    o.build_root = (root_ / "build").string();
    return o;
  }

  fs::path root_;
};

TEST_F(UdfLocationTest, GePathFirstThenConfigRelativeFallback) {
  Touch(root_ / "cwd" / "udf" / "libf.so");
  Touch(root_ / "cfg" / "libf.so");
  std::string so;
  ASSERT_TRUE(ResolveUdfBinary(Config(), Opts(), &so).ok());
  EXPECT_EQ(so, (root_ / "cwd" / "udf" / "libf.so").string());

  fs::remove(root_ / "cwd" / "udf" / "libf.so");
  ASSERT_TRUE(ResolveUdfBinary(Config(), Opts(), &so).ok());
  EXPECT_EQ(so, (root_ / "cfg" / "libf.so").string());
}

// GE builds from the workspace it finds; a stale library beside the config
// file does not shadow GE's sources.
TEST_F(UdfLocationTest, GeSourcesBeatTheFallbackLibrary) {
  Touch(root_ / "cwd" / "udf" / "CMakeLists.txt",
        "message(FATAL_ERROR \"the GE workspace was built for "
        "${UDF_TARGET_LIB}\")\n");
  Touch(root_ / "cfg" / "libf.so");
  std::string so;
  Status s = ResolveUdfBinary(Config(), Opts(), &so);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_THAT(s.message(),
              HasSubstr((root_ / "cwd" / "udf" / "CMakeLists.txt").string()));
  EXPECT_THAT(s.message(), HasSubstr("the GE workspace was built"));
}

// With "workspace": "." a run from a folder that holds another project
// (hflow's own source tree, say) must not build that project as the UDF: a
// GE-rule CMakeLists.txt without UDF_TARGET_LIB is skipped.
TEST_F(UdfLocationTest, ForeignProjectInTheWorkingDirectoryIsSkipped) {
  Touch(root_ / "cwd" / "udf" / "CMakeLists.txt", "project(other)\n");
  Touch(root_ / "cfg" / "udf" / "CMakeLists.txt",
        "message(FATAL_ERROR \"the fallback was built for "
        "${UDF_TARGET_LIB}\")\n");
  std::string so;
  Status s = ResolveUdfBinary(Config(), Opts(), &so);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("the fallback was built for f"));

  fs::remove(root_ / "cfg" / "udf" / "CMakeLists.txt");
  s = ResolveUdfBinary(Config(), Opts(), &so);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(),
              HasSubstr((root_ / "cwd" / "udf" / "CMakeLists.txt").string() +
                        " (workspace, GE: from the working directory): "
                        "exists, but does not use UDF_TARGET_LIB"));
}

TEST_F(UdfLocationTest, NothingFoundNamesConfigFieldsAndEveryPath) {
  std::string so;
  Status s = ResolveUdfBinary(
      Config(R"(, "cmakelist_path": "p/CMakeLists.txt")"), Opts(), &so);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("f.json: target_bin, workspace, "
                                     "cmakelist_path: neither the library"));
  for (const fs::path& p : {root_ / "cwd" / "udf" / "libf.so",
                            root_ / "cwd" / "udf" / "p" / "CMakeLists.txt",
                            root_ / "cfg" / "libf.so",
                            root_ / "cfg" / "udf" / "p" / "CMakeLists.txt"}) {
    EXPECT_THAT(s.message(), HasSubstr(p.string()));
  }
  // BuildUdf lists the CMakeLists.txt it looked for.
  s = BuildUdf(Config(), Opts(), &so);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("no CMakeLists.txt to build 'libf.so'"));
  EXPECT_THAT(s.message(),
              HasSubstr((root_ / "cfg" / "udf" / "CMakeLists.txt").string()));
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
