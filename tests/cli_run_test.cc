// End-to-end tests of `hflow run`: runs the built CLI (HFLOW_CLI_PATH) on
// graph files written into a temp dir (built-in _BuiltIn_Add and
// _BuiltIn_Identity UDFs only, so no UDF build is needed) and checks the
// exact stdout lines, --repeat, --stats (a row for every device, no stray
// contexts or implicit bindings), failing UDFs, bad inputs, device sets
// without device 0, deploy files, replicas and .npy inputs.
//
// Thread-safety: single-threaded; each test writes into its own temp dir.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"

namespace {

using hflow::testing::CliResult;

constexpr char kAddGraph[] =
    R"({"name":"add_pipeline","inputs":["a","b"],"nodes":[{"name":"add",)"
    R"("inputs":["a","b"],"outputs":1,"function":"_BuiltIn_Add"}],)"
    R"("outputs":["add:0"]})";
// add -> identity: two submodels, so two devices are used.
constexpr char kChainGraph[] =
    R"({"name":"chain","inputs":["a","b"],"nodes":[)"
    R"({"name":"add","inputs":["a","b"],"outputs":1,"function":"_BuiltIn_Add"},)"
    R"({"name":"post","inputs":["add:0"],"outputs":1,)"
    R"("function":"_BuiltIn_Identity"}],"outputs":["post:0"]})";
// Identity with two inputs and two outputs: two lines per transaction.
constexpr char kPairGraph[] =
    R"({"name":"pair","inputs":["x","y"],"nodes":[{"name":"id",)"
    R"("inputs":["x","y"],"outputs":2,"function":"_BuiltIn_Identity"}],)"
    R"("outputs":["id:0","id:1"]})";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string AddLine(int trans, const std::string& data) {
  return R"({"output":0,"trans_id":)" + std::to_string(trans) +
         R"(,"ret_code":0,"dtype":"int32","shape":[3],"data":[)" + data + "]}";
}

class CliRunTest : public hflow::testing::CliTest {
 protected:
  std::string WriteFile(const std::string& name, const std::string& text) {
    return Write(name, text);
  }
  static std::string ReadFile(const std::string& path) { return Read(path); }
  // Runs `hflow run <args>`; args go through the shell as written.
  CliResult Run(const std::string& args) { return CliTest::Run("run " + args); }

  nlohmann::json Stats() {
    nlohmann::json doc =
        nlohmann::json::parse(ReadFile(dir_ + "/stats.json"), nullptr, false);
    EXPECT_FALSE(doc.is_discarded());
    return doc;
  }

  std::string StatsArg() { return " --stats '" + dir_ + "/stats.json'"; }
};

TEST_F(CliRunTest, AddPrintsOneLinePerTransaction) {
  std::string g = WriteFile("add.json", kAddGraph);
  CliResult r =
      Run(g + " --input a=int32:1,2,3 --input b=int32:1,1,1 --repeat 3");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, AddLine(1, "2,3,4") + "\n" + AddLine(2, "2,3,4") + "\n" +
                       AddLine(3, "2,3,4") + "\n");
  EXPECT_NE(r.err.find("add_pipeline: 3/3 transactions ok (fed 3, fetched 3, "
                       "failed 0)"),
            std::string::npos)
      << r.err;
}

TEST_F(CliRunTest, DefaultRepeatIsOneAndFloatsRoundTrip) {
  std::string g = WriteFile("add.json", kAddGraph);
  CliResult r = Run(g + " --input 'a=float32[2,1]:0.1,1e20'" +
                    " --input 'b=float32[2,1]:0.2,0'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"output":0,"trans_id":1,"ret_code":0,"dtype":"float32",)"
                   R"("shape":[2,1],"data":[0.3,1e+20]})"
                   "\n");
}

TEST_F(CliRunTest, StatsHaveARowForEveryDevice) {
  std::string g = WriteFile("chain.json", kChainGraph);
  CliResult r = Run(g + " --devices 2,3,4,5 --input a=int32:1,2,3" +
                    " --input b=int32:10,20,30 --repeat 5" + StatsArg());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 5u);
  EXPECT_EQ(Lines(r.out)[4], AddLine(5, "11,22,33"));
  nlohmann::json s = Stats();
  EXPECT_EQ(s["graph"], "chain");
  EXPECT_EQ(s["fed"], 5);
  EXPECT_EQ(s["fetched"], 5);
  EXPECT_EQ(s["failed"], 0);
  EXPECT_TRUE(s["wall_s"].is_number());
  EXPECT_TRUE(s["msgs_per_s"].is_number());
  EXPECT_EQ(s["caller_context_unchanged"], true);
  ASSERT_EQ(s["devices"].size(), 4u);
  uint64_t submodels = 0;
  int used = 0;
  for (size_t i = 0; i < 4; ++i) {
    const auto& d = s["devices"][i];
    EXPECT_EQ(d["id"], 2 + static_cast<int>(i));
    EXPECT_EQ(d["implicit_bindings"], 0) << d;  // no device 0: nothing implicit
    EXPECT_EQ(d["dropped_msgs"], 0) << d;       // FIFO queues never drop
    submodels += d["submodels"].get<uint64_t>();
    if (d["submodels"] == 0) {
      EXPECT_EQ(d["contexts_created"], 0) << d;  // no stray contexts
      EXPECT_EQ(d["queues"], 0) << d;
      EXPECT_EQ(d["peak_mem_bytes"], 0) << d;
    } else {
      ++used;
      EXPECT_GE(d["contexts_created"].get<int>(), 1) << d;
    }
  }
  EXPECT_EQ(submodels, 2u);
  EXPECT_EQ(used, 2);
}

TEST_F(CliRunTest, DeployFileOnDevicesWithoutZero) {
  std::string g = WriteFile("chain.json", kChainGraph);
  std::string deploy = WriteFile(
      "deploy.json",
      R"({"deploy_info":[{"flow_node_name":"add","logic_device_id":"0:0:6"},)"
      R"({"flow_node_name":"post","logic_device_id":"0:0:7"}]})");
  CliResult r =
      Run(g + " --devices 3,6,7 --deploy '" + deploy +
          "' --input a=int32:1,2,3 --input b=int32:0,0,1" + StatsArg());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, AddLine(1, "1,2,4") + "\n");
  nlohmann::json s = Stats();
  ASSERT_EQ(s["devices"].size(), 3u);
  EXPECT_EQ(s["devices"][0]["id"], 3);
  EXPECT_EQ(s["devices"][0]["submodels"], 0);
  EXPECT_EQ(s["devices"][0]["contexts_created"], 0);
  EXPECT_EQ(s["devices"][1]["id"], 6);
  EXPECT_EQ(s["devices"][1]["submodels"], 1);
  EXPECT_EQ(s["devices"][2]["id"], 7);
  EXPECT_EQ(s["devices"][2]["submodels"], 1);
  for (const auto& d : s["devices"]) EXPECT_EQ(d["implicit_bindings"], 0);
  EXPECT_EQ(s["caller_context_unchanged"], true);
}

TEST_F(CliRunTest, ReplicasStillPrintInTransactionOrder) {
  std::string g = WriteFile("add.json", kAddGraph);
  std::string deploy = WriteFile(
      "deploy.json", R"({"batch_deploy_info":[{"flow_node_list":["add"],)"
                     R"("logic_device_list":"0:0:2~5"}]})");
  CliResult r =
      Run(g + " --devices 2,3,4,5 --deploy '" + deploy +
          "' --input a=int32:1,2,3 --input b=int32:1,1,1 --repeat 200");
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 200u);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(lines[i], AddLine(i + 1, "2,3,4"));
}

TEST_F(CliRunTest, RunLongerThanTheQueuesAreDeep) {
  // Feeding all before fetching would block on full queues; the CLI
  // overlaps them.
  std::string g = WriteFile("chain.json", kChainGraph);
  CliResult r = Run(g + " --input a=int32:1,2,3 --input b=int32:1,1,1" +
                    " --repeat 3000 --timeout 5000" + StatsArg());
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3000u);
  EXPECT_EQ(lines.back(), AddLine(3000, "2,3,4"));
  EXPECT_EQ(Stats()["fetched"], 3000);
}

TEST_F(CliRunTest, TwoOutputsGiveTwoLinesPerTransaction) {
  std::string g = WriteFile("pair.json", kPairGraph);
  CliResult r = Run(g + " --input x=bool:true,false --input 'y=float16[]:0.1'" +
                    " --repeat 2");
  ASSERT_EQ(r.code, 0) << r.err;
  std::string x =
      R"(,"ret_code":0,"dtype":"bool","shape":[2],"data":[true,false]})";
  std::string y = R"(,"ret_code":0,"dtype":"float16","shape":[],"data":[0.1]})";
  EXPECT_EQ(Lines(r.out),
            (std::vector<std::string>{R"({"output":0,"trans_id":1)" + x,
                                      R"({"output":1,"trans_id":1)" + y,
                                      R"({"output":0,"trans_id":2)" + x,
                                      R"({"output":1,"trans_id":2)" + y}));
}

TEST_F(CliRunTest, NpyInput) {
  std::string header =
      "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::string npy = "\x93NUMPY\x01";
  npy += '\0';
  npy += static_cast<char>(header.size());
  npy += '\0';
  int64_t values[2] = {40, -2};
  npy += header + std::string(reinterpret_cast<char*>(values), sizeof(values));
  std::string path = WriteFile("x.npy", npy);
  std::string g = WriteFile("add.json", kAddGraph);
  CliResult r = Run(g + " --input 'a=@" + path + "' --input b=int64:2,2");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, R"({"output":0,"trans_id":1,"ret_code":0,"dtype":"int64",)"
                   R"("shape":[2],"data":[42,0]})"
                   "\n");
}

TEST_F(CliRunTest, FailingUdfExitsOneWithItsRetCode) {
  std::string g = WriteFile("add.json", kAddGraph);
  CliResult r = Run(
      g + " --input a=int32:1,2,3 --input b=int32:1,1 --repeat 2" + StatsArg());
  EXPECT_EQ(r.code, 1);
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  for (int t = 0; t < 2; ++t) {
    nlohmann::json line = nlohmann::json::parse(lines[t]);
    EXPECT_EQ(line["trans_id"], t + 1);
    EXPECT_EQ(line["ret_code"], 164000);
    EXPECT_EQ(line["ret_name"], "FLOW_FUNC_ERR_PARAM_INVALID");
    EXPECT_FALSE(line.contains("data"));
    // The failing node, where the runtime reports it (FlowInfo::error_node).
    if (line.contains("error_node")) {
      EXPECT_EQ(line["error_node"], "add");
    }
  }
  EXPECT_NE(r.err.find("transaction 1 came back with ret code 164000 "
                       "(FLOW_FUNC_ERR_PARAM_INVALID)"),
            std::string::npos)
      << r.err;
  nlohmann::json s = Stats();
  EXPECT_EQ(s["fetched"], 2);
  EXPECT_EQ(s["failed"], 2);
  EXPECT_EQ(s["caller_context_unchanged"], true);
}

TEST_F(CliRunTest, BadInputsAreClearErrors) {
  std::string g = WriteFile("add.json", kAddGraph);
  struct Case {
    std::string args;
    std::string message;
  } cases[] = {
      {" --input a=int32:1",
       "missing --input for b; graph 'add_pipeline' has "
       "inputs: a, b"},
      {"", "missing --input for a, b"},
      {" --input a=int32:1 --input b=int32:1 --input c=int32:1",
       "--input 'c=int32:1': no input named 'c'; graph 'add_pipeline' has "
       "inputs: a, b"},
      {" --input a=int32:1 --input a=int32:2 --input b=int32:1",
       "--input 'a' is given twice"},
      {" --input a=int32:1,x --input b=int32:1",
       "--input 'a=int32:1,x': values: bad int32 value 'x' at position 2"},
      {" --input a=complex:1 --input b=int32:1", "unknown dtype 'complex'"},
      {" --input 'a=int32[2,2]:1' --input b=int32:1",
       "shape [2,2] needs 4 values, got 1"},
      {" --input a=@/nonexistent/x.npy --input b=int32:1",
       "cannot open NumPy file '/nonexistent/x.npy'"},
      {" --input a --input b=int32:1", "expected NAME=VALUE"},
  };
  for (const Case& c : cases) {
    CliResult r = Run(g + c.args);
    EXPECT_EQ(r.code, 2) << c.args;  // config errors exit 2
    EXPECT_EQ(r.out, "") << c.args;
    EXPECT_EQ(r.err.rfind("hflow run: invalid argument: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n"
                                                        << r.err;
  }
}

TEST_F(CliRunTest, BadGraphClusterAndUsage) {
  CliResult r = Run("'" + dir_ + "/missing.json' --input a=int32:1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing.json"), std::string::npos) << r.err;

  std::string g = WriteFile("add.json", kAddGraph);
  r = Run(g + " --devices 2,2 --input a=int32:1 --input b=int32:1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("hflow run: "), std::string::npos) << r.err;

  // Placement outside the cluster: refused before anything is deployed.
  std::string deploy = WriteFile(
      "deploy.json",
      R"({"deploy_info":[{"flow_node_name":"add","logic_device_id":"0:0:9"}]})");
  r = Run(g + " --devices 2,3 --deploy '" + deploy +
          "' --input a=int32:1 --input b=int32:1");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("device 9"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("transactions ok"), std::string::npos) << r.err;

  // An unknown function: fails at build, after Initialize; --stats still
  // shows every device, and there is no transaction summary.
  std::string nope = WriteFile(
      "nope.json",
      R"({"name":"nope","inputs":["a"],"nodes":[{"name":"n","inputs":["a"],)"
      R"("outputs":1,"function":"Nope"}],"outputs":["n:0"]})");
  r = Run(nope + " --devices 2,3 --input a=int32:1" + StatsArg());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("node 'n'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("transactions ok"), std::string::npos) << r.err;
  EXPECT_EQ(Stats()["devices"].size(), 2u);
  EXPECT_EQ(Stats()["fed"], 0);

  EXPECT_EQ(Run(g + " --input a=int32:1 --input b=int32:1 --repeat 0").code, 2);
  EXPECT_EQ(Run("").code, 2);  // GRAPH is required
  EXPECT_EQ(Run(g + " --devices 2 --cluster x.json").code, 2);
}

TEST_F(CliRunTest, IncompleteBatchFailsAfterDrain) {
  // A count batch of 2 fed once never emits: a batching graph is drained
  // briefly after the last feed, then the run fails saying nothing came.
  std::string g = WriteFile(
      "stall.json",
      R"({"name":"stall","inputs":["a"],"nodes":[{"name":"id","inputs":["a"],)"
      R"("outputs":1,"function":"_BuiltIn_Identity","input_attrs":)"
      R"({"0":{"count_batch":{"batch_size":2}}}}],"outputs":["id:0"]})");
  CliResult r = Run(g + " --input a=int32:1 --timeout 2300" + StatsArg());
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("hflow run: timeout: no result for"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no batch completed"), std::string::npos) << r.err;
  nlohmann::json s = Stats();
  EXPECT_EQ(s["fed"], 1);
  EXPECT_EQ(s["fetched"], 0);
  EXPECT_EQ(s["failed"], 0);  // failed counts results with a bad ret code
  EXPECT_EQ(s["caller_context_unchanged"], true);
}

TEST_F(CliRunTest, UnwritableStatsFileFails) {
  std::string g = WriteFile("add.json", kAddGraph);
  CliResult r = Run(g + " --input a=int32:1 --input b=int32:1 --stats '" +
                    dir_ + "/no/such/dir/stats.json'");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("cannot write the --stats file"), std::string::npos)
      << r.err;
}

}  // namespace
