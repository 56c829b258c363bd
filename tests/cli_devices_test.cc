// End-to-end tests of `hflow devices`: runs the built CLI binary
// (HFLOW_CLI_PATH) through the shell and checks stdout, stderr and the exit
// status for the default cluster, device lists, both cluster file forms, bad
// files and misuse of the options.
//
// Thread-safety: single-threaded; each test writes into its own temp dir.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_test_util.h"

namespace {

using hflow::testing::CliResult;

class CliDevicesTest : public hflow::testing::CliTest {
 protected:
  std::string WriteFile(const std::string& name, const std::string& text) {
    return Write(name, text);
  }

  // Runs with --json and parses stdout (failing the test on bad JSON).
  nlohmann::json RunJson(const std::string& args) {
    CliResult r = Run("devices --json " + args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << r.out;
    return doc;
  }

  static std::vector<int> LocalIds(const nlohmann::json& doc) {
    std::vector<int> ids;
    for (const auto& node : doc["nodes"]) {
      if (!node["is_local"].get<bool>()) continue;
      for (const auto& d : node["devices"]) ids.push_back(d["device_id"]);
    }
    return ids;
  }
};

TEST_F(CliDevicesTest, DefaultClusterHasDevicesZeroToThree) {
  nlohmann::json doc = RunJson("");
  EXPECT_EQ(doc["source"], "default");
  EXPECT_EQ(doc["default_device"], 0);
  EXPECT_EQ(LocalIds(doc), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(doc["nodes"][0]["node_id"], 0);
  EXPECT_EQ(doc["nodes"][0]["devices"][0]["memory_bytes"], 16ull << 30);

  CliResult r = Run("devices");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Default device: 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("16 GiB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NODE"), std::string::npos) << r.out;
}

TEST_F(CliDevicesTest, DeviceListWithoutDeviceZeroHasNoDefault) {
  nlohmann::json doc = RunJson("--devices 2,3,4,5");
  EXPECT_EQ(doc["source"], "--devices");
  EXPECT_TRUE(doc["default_device"].is_null());
  EXPECT_EQ(LocalIds(doc), (std::vector<int>{2, 3, 4, 5}));

  CliResult r = Run("devices --devices 2,3,4,5");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Default device: none"), std::string::npos) << r.out;
}

TEST_F(CliDevicesTest, DeviceListWithRanges) {
  EXPECT_EQ(LocalIds(RunJson("--devices 3~4,7")), (std::vector<int>{3, 4, 7}));
  EXPECT_EQ(LocalIds(RunJson("--devices=2~5")), (std::vector<int>{2, 3, 4, 5}));
}

TEST_F(CliDevicesTest, CompactClusterFile) {
  std::string path =
      WriteFile("compact.json",
                R"({"devices":[6,2],"memory_bytes":"8GB","default_device":2})");
  nlohmann::json doc = RunJson("--cluster '" + path + "'");
  EXPECT_EQ(doc["source"], path);
  EXPECT_EQ(doc["default_device"], 2);
  EXPECT_EQ(LocalIds(doc), (std::vector<int>{6, 2}));
  EXPECT_EQ(doc["nodes"][0]["devices"][1]["memory_bytes"], 8ull << 30);

  CliResult r = Run("devices --cluster '" + path + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("8 GiB"), std::string::npos) << r.out;
}

TEST_F(CliDevicesTest, GeNumaConfigFile) {
  std::string path = WriteFile("numa_config.json", R"({
    "cluster": [{"cluster_nodes": [
      {"node_id": 0, "node_type": "ATLAS800", "ipaddr": "127.0.0.1",
       "is_local": true,
       "item_list": [{"item_id": 0, "device_id": 2}, {"item_id": 1, "device_id": 3}]},
      {"node_id": 1, "item_list": [{"item_id": 0, "device_id": 0}]}]}],
    "item_def": [{"item_type": "Ascend910", "memory": "[DDR:32GB]",
                  "aic_type": "[910B,1]"}]})");
  nlohmann::json doc = RunJson("--cluster '" + path + "'");
  ASSERT_EQ(doc["nodes"].size(), 2u);
  EXPECT_EQ(LocalIds(doc), (std::vector<int>{2, 3}));
  EXPECT_FALSE(doc["nodes"][1]["is_local"].get<bool>());
  EXPECT_EQ(doc["nodes"][1]["devices"][0]["device_id"], 0);
  // Device 0 exists, but on another host: no implicit default.
  EXPECT_TRUE(doc["default_device"].is_null());
  EXPECT_EQ(doc["nodes"][0]["devices"][1]["memory_bytes"], 32ull << 30);
}

TEST_F(CliDevicesTest, BadFilesAreRejectedNamingTheField) {
  struct Case {
    const char* json;
    const char* expected;
  } cases[] = {
      {R"({"devices":[1,)", "malformed JSON: parse error at line 1"},
      {R"({"devices":[1,1]})", "devices[1]: duplicate device id 1"},
      {R"({"devices":[]})", "devices: empty device list"},
      {R"({"devices":[-4]})", "devices[0]: negative id -4"},
      {R"({"devices":[2],"default_device":0})", "default_device: device 0"},
      {R"({"devices":[2],"memory_bytes":"many"})",
       "memory_bytes: cannot parse"},
      {R"({"hosts":[]})", "neither \"cluster\" nor \"devices\""},
      {R"({"cluster":[{"cluster_nodes":[{"node_id":0,"is_local":true,
          "item_list":[{"device_id":3},{"device_id":3}]}]}]})",
       "cluster[0].cluster_nodes[0].item_list[1].device_id: duplicate device "
       "id 3 on node 0"},
      {R"({"cluster":[{"cluster_nodes":[
          {"node_id":0,"is_local":true,"item_list":[{"device_id":0}]},
          {"node_id":0,"item_list":[{"device_id":1}]}]}]})",
       "cluster[0].cluster_nodes[1].node_id: node id 0 used twice"},
      {R"({"cluster":[{"cluster_nodes":[
          {"node_id":0,"is_local":true,"item_list":[{"device_id":0}]},
          {"node_id":1,"is_local":true,"item_list":[{"device_id":1}]}]}]})",
       "cluster_nodes[1].is_local: more than one local node"},
  };
  int i = 0;
  for (const Case& c : cases) {
    std::string path = WriteFile("bad" + std::to_string(i++) + ".json", c.json);
    CliResult r = Run("devices --cluster '" + path + "'");
    EXPECT_EQ(r.code, 2) << c.json;
    EXPECT_EQ(r.out, "") << c.json;
    EXPECT_NE(r.err.find(path + ": "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos)
        << "expected \"" << c.expected << "\" in: " << r.err;
  }
}

TEST_F(CliDevicesTest, MissingFileAndBadListExitTwo) {
  CliResult r = Run("devices --cluster '" + dir_ + "/absent.json'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("absent.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;

  r = Run("devices --devices 5~2");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--devices: \"5~2\""), std::string::npos) << r.err;
}

TEST_F(CliDevicesTest, UsageErrorsExitTwo) {
  std::string path = WriteFile("c.json", R"({"devices":[1]})");
  CliResult r = Run("devices --devices 1 --cluster '" + path + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--cluster"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--devices"), std::string::npos) << r.err;

  r = Run("");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("subcommand"), std::string::npos) << r.err;

  r = Run("devices --bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;

  r = Run("devices --devices ''");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--devices"), std::string::npos) << r.err;

  r = Run("devices --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--cluster"), std::string::npos) << r.out;

  r = Run("devices --backend tpu");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--backend"), std::string::npos) << r.err;
}

// A backend that cannot start (no NVIDIA driver here, or no CUDA backend in
// the build) fails with exit 1 and says what to use instead.
TEST_F(CliDevicesTest, CudaBackendWithoutDriverExitsOne) {
  env_ += " HFLOW_CUDA_DRIVER=/nonexistent/libcuda.so.1";
  CliResult r = Run("devices --backend cuda --devices 2,3");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("device runtime 'cuda'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'sim'"), std::string::npos) << r.err;
  // The sim is the default, and says so in JSON.
  EXPECT_EQ(RunJson("--devices 2,3")["backend"], "sim");
}

}  // namespace
