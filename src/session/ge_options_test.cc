// GE option and RESOURCE_CONFIG_PATH tests: every ge.* key hflow maps
// changes Options or GeGraphOptions, every ignored key is accepted with a
// note, unknown keys and bad values are errors naming the key, and the
// variable with a good, a missing and a bad file.
#include "hflow/ge_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>

namespace hflow {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Sets or clears RESOURCE_CONFIG_PATH for one test and restores it.
class GeOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = getenv(kResourceConfigPathEnv);
    if (old != nullptr) saved_ = old;
    unsetenv(kResourceConfigPathEnv);
    dir_ = fs::temp_directory_path() /
           ("hflow_ge_options_" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (saved_) {
      setenv(kResourceConfigPathEnv, saved_->c_str(), 1);
    } else {
      unsetenv(kResourceConfigPathEnv);
    }
    fs::remove_all(dir_);
  }
  std::string Write(const std::string& name, const std::string& text) {
    std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }

  std::optional<std::string> saved_;
  fs::path dir_;
};

TEST_F(GeOptionsTest, EnvironmentNamesTheClusterFile) {
  ClusterConfig cfg = DefaultClusterConfig();
  bool found = true;
  ASSERT_TRUE(ClusterConfigFromEnvironment(&cfg, &found).ok());
  EXPECT_FALSE(found);  // unset: nothing changes
  EXPECT_THAT(cfg.LocalDeviceIds(), ElementsAre(0, 1, 2, 3));

  setenv(kResourceConfigPathEnv,
         Write("c.json", R"({"devices": [3, 6, 7]})").c_str(), 1);
  ASSERT_TRUE(ClusterConfigFromEnvironment(&cfg, &found).ok());
  EXPECT_TRUE(found);
  EXPECT_THAT(cfg.LocalDeviceIds(), ElementsAre(3, 6, 7));
}

TEST_F(GeOptionsTest, EnvironmentErrorsNameTheVariableAndFile) {
  ClusterConfig cfg;
  bool found = true;
  const std::string missing = (dir_ / "missing.json").string();
  setenv(kResourceConfigPathEnv, missing.c_str(), 1);
  Status s = ClusterConfigFromEnvironment(&cfg, &found);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("RESOURCE_CONFIG_PATH=" + missing));
  EXPECT_FALSE(found);

  const std::string bad = Write("bad.json", R"({"devices": [2, 2]})");
  setenv(kResourceConfigPathEnv, bad.c_str(), 1);
  s = ClusterConfigFromEnvironment(&cfg, &found);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("RESOURCE_CONFIG_PATH=" + bad));
  EXPECT_THAT(s.message(), HasSubstr("devices"));

  setenv(kResourceConfigPathEnv, "", 1);
  s = ClusterConfigFromEnvironment(&cfg, &found);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("RESOURCE_CONFIG_PATH is set but empty"));
}

TEST_F(GeOptionsTest, MappedKeysChangeOptions) {
  const std::string cluster = Write("c.json", R"({"devices": [2, 3, 4, 5]})");
  Options o;
  GeGraphOptions g;
  std::vector<std::string> notes;
  Status s = ApplyGeOptions(
      {{"ge.exec.deviceId", "3"},
       {"ge.flowGraphMemMaxSize", "1073741824"},
       {"ge.resourceConfigPath", cluster},
       {"ge.experiment.data_flow_deploy_info_path", "./deploy.json"},
       {"ge.exec.logicalDeviceClusterDeployMode", "SINGLE"},
       {"ge.exec.logicalDeviceId", "[0:4, 0 : 5]"},
       {"ge.graph_key", "k1"}},
      &o, &notes, &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(o.default_device, 3);
  EXPECT_EQ(o.mbuf_pool_bytes, 1073741824u);
  EXPECT_THAT(o.cluster.LocalDeviceIds(), ElementsAre(2, 3, 4, 5));
  EXPECT_EQ(g.deploy_info_path, "./deploy.json");
  EXPECT_EQ(g.deploy_mode, "SINGLE");
  ASSERT_EQ(g.logical_devices.size(), 2u);
  EXPECT_EQ(g.logical_devices[0].node_id, 0);
  EXPECT_EQ(g.logical_devices[0].device_id, 4);
  EXPECT_EQ(g.logical_devices[1].device_id, 5);
  EXPECT_EQ(g.graph_key, "k1");
  // Only graph_key is kept without effect, and says so.
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("ge.graph_key: kept"));

  // Several pools: their total, with a note on the tiers.
  notes.clear();
  ASSERT_TRUE(ApplyGeOptions(
                  {{"ge.flowGraphMemMaxSize", "1073741824,268435456:2097152"}},
                  &o, &notes)
                  .ok());
  EXPECT_EQ(o.mbuf_pool_bytes, 1073741824u + 268435456u);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_THAT(notes[0], HasSubstr("tiers are not modelled"));
}

// hflow's own keys set the worker options, which GE has no keys for.
TEST_F(GeOptionsTest, HflowKeysSetTheWorkerOptions) {
  Options o;
  std::vector<std::string> notes;
  Status s = ApplyGeOptions({{"hflow.udfIsolation", "1"},
                             {"hflow.restartPolicy", "restart"},
                             {"hflow.maxWorkerRestarts", "5"},
                             {"hflow.workerHeartbeatMs", "250"},
                             {"hflow.ctxcheck", "strict"}},
                            &o, &notes);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(o.udf_isolation);
  EXPECT_EQ(o.restart_policy, RestartPolicy::kRestart);
  EXPECT_EQ(o.max_worker_restarts, 5);
  EXPECT_EQ(o.worker_heartbeat_ms, 250);
  EXPECT_EQ(o.ctxcheck, "strict");
  EXPECT_TRUE(notes.empty());
  ASSERT_TRUE(ApplyGeOptions({{"hflow.udfIsolation", "0"},
                              {"hflow.restartPolicy", "never"},
                              {"hflow.workerHeartbeatMs", "0"}},
                             &o, nullptr)
                  .ok());
  EXPECT_FALSE(o.udf_isolation);
  EXPECT_EQ(o.restart_policy, RestartPolicy::kNever);
  EXPECT_EQ(o.worker_heartbeat_ms, 0);
  // Global keys: an AddGraph's options refuse them.
  GeGraphOptions g;
  EXPECT_FALSE(
      ApplyGeGraphOptions({{"hflow.udfIsolation", "1"}}, &g, nullptr).ok());
}

// GE reads the variable before the option.
TEST_F(GeOptionsTest, EnvironmentWinsOverResourceConfigPathOption) {
  setenv(kResourceConfigPathEnv,
         Write("env.json", R"({"devices": [3, 6, 7]})").c_str(), 1);
  Options o;
  std::vector<std::string> notes;
  ASSERT_TRUE(ApplyGeOptions({{"ge.resourceConfigPath",
                               Write("opt.json", R"({"devices": [1]})")}},
                             &o, &notes)
                  .ok());
  EXPECT_THAT(o.cluster.LocalDeviceIds(), ElementsAre(3, 6, 7));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_THAT(notes[0], HasSubstr("RESOURCE_CONFIG_PATH: the cluster is"));
  EXPECT_THAT(notes[1], HasSubstr("ge.resourceConfigPath: ignored"));
}

TEST_F(GeOptionsTest, IgnoredKeysAreAcceptedWithANote) {
  const char* keys[] = {"ge.graphRunMode",
                        "ge.graph_compiler_cache_dir",
                        "ge.socVersion",
                        "ge.experiment.memory_pool_threshold",
                        "ge.exec.precision_mode",
                        "ge.exec.float_overflow_mode",
                        "ge.exec.static_model_addr_fixed",
                        "ge.exec.enableDump",
                        "ge.exec.dumpPath",
                        "ge.exec.dumpStep",
                        "ge.exec.dumpMode"};
  for (const char* key : keys) {
    Options o;
    const Options before;
    std::vector<std::string> notes;
    Status s = ApplyGeOptions({{key, "1"}}, &o, &notes);
    ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
    ASSERT_EQ(notes.size(), 1u) << key;
    EXPECT_THAT(notes[0], HasSubstr(std::string(key) + ": ignored")) << key;
    EXPECT_EQ(o.default_device, before.default_device);
    EXPECT_EQ(o.mbuf_pool_bytes, before.mbuf_pool_bytes);
  }
  // The per-graph ones, given with the graph.
  for (const char* key :
       {"ge.runFlag", "ge.exec.placement", "ge.exec.isVarInitGraph",
        "ge.inputShape", "ge.outputMaxSize", "ge.externalWeightDir"}) {
    GeGraphOptions g;
    std::vector<std::string> notes;
    ASSERT_TRUE(ApplyGeGraphOptions({{key, "0"}}, &g, &notes).ok()) << key;
    ASSERT_EQ(notes.size(), 1u) << key;
    EXPECT_THAT(notes[0], HasSubstr(std::string(key) + ": ignored"));
  }
}

TEST_F(GeOptionsTest, GraphOptionsTakeOnlyPerGraphKeys) {
  GeGraphOptions g;
  g.deploy_info_path = "global.json";  // a default from the global options
  ASSERT_TRUE(ApplyGeGraphOptions(
                  {{"ge.experiment.data_flow_deploy_info_path", "graph.json"}},
                  &g, nullptr)
                  .ok());
  EXPECT_EQ(g.deploy_info_path, "graph.json");

  Status s = ApplyGeGraphOptions({{"ge.exec.deviceId", "0"}}, &g, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("ge.exec.deviceId: applies to the whole "
                                     "process"));
  // A per-graph key among the global ones needs somewhere to go.
  Options o;
  s = ApplyGeOptions({{"ge.exec.logicalDeviceId", "[0:0]"}}, &o, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("pass graph_defaults"));
}

TEST_F(GeOptionsTest, UnknownKeysAndBadValuesAreNamed) {
  Options o;
  GeGraphOptions g;
  Status s = ApplyGeOptions({{"ge.exec.deviceID", "0"}}, &o, nullptr, &g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("GE option ge.exec.deviceID: unknown; "
                                     "did you mean ge.exec.deviceId?"));
  s = ApplyGeOptions({{"ge.nothing.like.it", "0"}}, &o, nullptr, &g);
  EXPECT_THAT(s.message(), HasSubstr("ge.nothing.like.it: unknown"));
  EXPECT_THAT(s.message(), HasSubstr("GE options"));

  const std::pair<const char*, const char*> bad[] = {
      {"ge.exec.deviceId", "-1"},
      {"ge.exec.deviceId", "0x1"},
      {"ge.exec.deviceId", ""},
      {"ge.flowGraphMemMaxSize", "10GB"},
      {"ge.flowGraphMemMaxSize", "1024:16"},
      {"ge.flowGraphMemMaxSize", "1024,"},
      {"ge.graphRunMode", "2"},
      {"ge.exec.logicalDeviceClusterDeployMode", "single"},
      {"ge.exec.logicalDeviceId", "[0]"},
      {"ge.exec.logicalDeviceId", "[0:a]"},
      {"ge.exec.logicalDeviceId", ""},
      {"ge.experiment.data_flow_deploy_info_path", ""},
      {"ge.resourceConfigPath", ""},
      {"hflow.udfIsolation", "true"},
      {"hflow.restartPolicy", "always"},
      {"hflow.maxWorkerRestarts", "0"},
      {"hflow.workerHeartbeatMs", "10"},
      {"hflow.ctxcheck", "on"},
  };
  for (const auto& [key, value] : bad) {
    s = ApplyGeOptions({{key, value}}, &o, nullptr, &g);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << key << "=" << value;
    EXPECT_THAT(s.message(), HasSubstr(std::string("GE option ") + key + "=\"" +
                                       value + "\""));
  }
  // A cluster file that cannot be read names the option and the file.
  s = ApplyGeOptions({{"ge.resourceConfigPath", "/no/such.json"}}, &o, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("ge.resourceConfigPath"));
  EXPECT_THAT(s.message(), HasSubstr("/no/such.json"));
}

}  // namespace
}  // namespace hflow
