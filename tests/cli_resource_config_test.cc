// End-to-end tests of RESOURCE_CONFIG_PATH in the CLI: without --cluster or
// --devices, `hflow devices` and `hflow run` use the cluster file the
// variable names (as GE does); the options still win; a missing or bad
// file exits 2 naming the variable and the file.
//
// Thread-safety: single-threaded; each test writes into its own temp dir
// and sets the variable only for the hflow process it starts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace {

using hflow::testing::CliResult;

class CliResourceConfigTest : public hflow::testing::CliTest {
 protected:
  // Sets RESOURCE_CONFIG_PATH for the next runs.
  void SetVariable(const std::string& path) {
    env_ = "RESOURCE_CONFIG_PATH='" + path + "'";
  }

  std::vector<int> LocalIds(const std::string& args) {
    CliResult r = Run("devices --json " + args);
    EXPECT_EQ(r.code, 0) << r.err;
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    std::vector<int> ids;
    if (doc.is_discarded()) {
      ADD_FAILURE() << r.out;
      return ids;
    }
    for (const auto& node : doc["nodes"]) {
      if (!node["is_local"].get<bool>()) continue;
      for (const auto& d : node["devices"]) ids.push_back(d["device_id"]);
    }
    return ids;
  }
};

TEST_F(CliResourceConfigTest, VariableNamesTheClusterWithoutOptions) {
  const std::string path = Write("c.json", R"({"devices": [3, 6, 7]})");
  SetVariable(path);
  EXPECT_EQ(LocalIds(""), (std::vector<int>{3, 6, 7}));
  // The options win over the variable.
  EXPECT_EQ(LocalIds("--devices 2,3,4,5"), (std::vector<int>{2, 3, 4, 5}));

  // hflow run places the graph on the variable's devices.
  const std::string g = Write(
      "chain.json",
      R"({"name":"chain","inputs":["a","b"],"nodes":[)"
      R"({"name":"add","inputs":["a","b"],"outputs":1,"function":"_BuiltIn_Add"},)"
      R"({"name":"post","inputs":["add:0"],"outputs":1,)"
      R"("function":"_BuiltIn_Identity"}],"outputs":["post:0"]})");
  CliResult r =
      Run("run " + g + " --input a=int32:1,2 --input b=int32:10,20 --stats '" +
          dir_ + "/stats.json'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"output":0,"trans_id":1,"ret_code":0,"dtype":"int32",)"
                   R"("shape":[2],"data":[11,22]})"
                   "\n");
  nlohmann::json stats =
      nlohmann::json::parse(Read(dir_ + "/stats.json"), nullptr, false);
  ASSERT_FALSE(stats.is_discarded());
  std::vector<int> ids;
  for (const auto& d : stats["devices"]) ids.push_back(d["id"]);
  EXPECT_EQ(ids, (std::vector<int>{3, 6, 7}));
}

TEST_F(CliResourceConfigTest, MissingOrBadFileExitsTwoNamingTheVariable) {
  const std::string missing = dir_ + "/absent.json";
  SetVariable(missing);
  CliResult r = Run("devices");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("RESOURCE_CONFIG_PATH=" + missing), std::string::npos)
      << r.err;

  const std::string bad = Write("bad.json", R"({"devices": [1, 1]})");
  SetVariable(bad);
  r = Run("devices");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("RESOURCE_CONFIG_PATH=" + bad), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("duplicate device id 1"), std::string::npos) << r.err;

  SetVariable("");
  r = Run("devices");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("RESOURCE_CONFIG_PATH is set but empty"),
            std::string::npos)
      << r.err;
}

}  // namespace
