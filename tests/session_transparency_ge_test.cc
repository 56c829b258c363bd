// The transparency matrix (invariant 2) and the stray-context rule
// (invariant 3) for the GE configuration entry points of hflow/ge_options.h
// (ClusterConfigFromEnvironment, ApplyGeOptions, ApplyGeGraphOptions): on
// success and on error, called from a fresh thread in each caller state,
// each call leaves the thread's context as it found it, creates no context
// on the unused device and never fires the default-device quirk; on
// {2,3,4,5} (+7 unused) and {3,6,7} (7 unused). They do no device work
// today; the matrix keeps it so. The machinery is transparency_matrix.h.
//
// Thread-safety: single-threaded tests (RunMatrix joins its thread); the
// test sets RESOURCE_CONFIG_PATH only around calls it makes itself.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "hflow/ge_options.h"
#include "hflow/hflow.h"
#include "transparency_matrix.h"

namespace hflow {
namespace {

using transparency::ClusterSpec;
using transparency::MakeCase;
using transparency::RunMatrix;

// Its own name: gtest ties a parameterized suite to one fixture class.
class GeOptionsTransparencyTest : public transparency::SessionTransparencyTest {
 protected:
  void SetUp() override {
    transparency::SessionTransparencyTest::SetUp();
    const char* old = getenv(kResourceConfigPathEnv);
    if (old != nullptr) saved_ = old;
    cluster_file_ = ::testing::TempDir() + "hflow_ge_transparency_" +
                    std::to_string(getpid()) + ".json";
    std::ofstream(cluster_file_) << R"({"devices": [3, 6, 7]})";
  }
  void TearDown() override {
    if (saved_) {
      setenv(kResourceConfigPathEnv, saved_->c_str(), 1);
    } else {
      unsetenv(kResourceConfigPathEnv);
    }
    std::remove(cluster_file_.c_str());
    transparency::SessionTransparencyTest::TearDown();
  }

  std::optional<std::string> saved_;
  std::string cluster_file_;
};

TEST_P(GeOptionsTransparencyTest, ClusterConfigFromEnvironment) {
  RunMatrix(spec_,
            MakeCase(
                "ClusterConfigFromEnvironment ok",
                [&](int) {
                  setenv(kResourceConfigPathEnv, cluster_file_.c_str(), 1);
                },
                [&](int) {
                  ClusterConfig c;
                  bool found = false;
                  return ClusterConfigFromEnvironment(&c, &found);
                },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "ClusterConfigFromEnvironment missing file",
                [&](int) {
                  setenv(kResourceConfigPathEnv, "/no/such/cluster.json", 1);
                },
                [&](int) {
                  ClusterConfig c;
                  return ClusterConfigFromEnvironment(&c, nullptr);
                },
                StatusCode::kNotFound),
            &counter_);
}

TEST_P(GeOptionsTransparencyTest, ApplyGeOptions) {
  RunMatrix(
      spec_,
      MakeCase(
          "ApplyGeOptions ok", [&](int) { unsetenv(kResourceConfigPathEnv); },
          [&](int) {
            Options o;
            GeGraphOptions g;
            std::vector<std::string> notes;
            return ApplyGeOptions({{"ge.exec.deviceId", "3"},
                                   {"ge.graphRunMode", "0"},
                                   {"ge.resourceConfigPath", cluster_file_}},
                                  &o, &notes, &g);
          },
          StatusCode::kOk),
      &counter_);
  RunMatrix(
      spec_,
      MakeCase(
          "ApplyGeOptions unknown key", nullptr,
          [&](int) {
            Options o;
            return ApplyGeOptions({{"ge.exec.deviceID", "3"}}, &o, nullptr);
          },
          StatusCode::kInvalidArgument),
      &counter_);
}

TEST_P(GeOptionsTransparencyTest, ApplyGeGraphOptions) {
  RunMatrix(spec_,
            MakeCase(
                "ApplyGeGraphOptions ok", nullptr,
                [&](int) {
                  GeGraphOptions g;
                  return ApplyGeGraphOptions(
                      {{"ge.experiment.data_flow_deploy_info_path", "d.json"}},
                      &g, nullptr);
                },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "ApplyGeGraphOptions global key", nullptr,
                [&](int) {
                  GeGraphOptions g;
                  return ApplyGeGraphOptions({{"ge.exec.deviceId", "0"}}, &g,
                                             nullptr);
                },
                StatusCode::kInvalidArgument),
            &counter_);
}

INSTANTIATE_TEST_SUITE_P(SessionTransparency, GeOptionsTransparencyTest,
                         ::testing::Values(transparency::TwoToFive(),
                                           transparency::ThreeSixSeven()),
                         [](const ::testing::TestParamInfo<ClusterSpec>& i) {
                           return i.param.name;
                         });

}  // namespace
}  // namespace hflow
