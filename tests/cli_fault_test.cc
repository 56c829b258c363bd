// `hflow run` and `hflow validate` with a UDF that misbehaves on request
// (tests/udf_projects/cli_faults): validate runs Init and catches one that
// fails or hangs; run keeps the results already produced on stdout (a file
// here) when a UDF crashes the process, exits within --timeout plus a few
// seconds naming the stuck transaction when a UDF hangs, names the code of
// a failed result, and --output keeps a UDF's own printf out of the result
// lines. Each scenario runs on device sets with and without device 0.
//
// Thread-safety: single-threaded; each test writes into its own temp dir.
#include <gmock/gmock.h>

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string PassLine(int trans) {
  return R"({"output":0,"trans_id":)" + std::to_string(trans) +
         R"(,"ret_code":0,"dtype":"int32","shape":[2],"data":[1,2]})";
}

class CliFaultTest
    : public testing::CliTest,
      public ::testing::WithParamInterface<std::vector<int32_t>> {
 protected:
  // a -> faulty (mode, after) -> out; placed on the set's last device.
  std::string Graph(const std::string& mode, int after = 0,
                    const std::string& gate = "") {
    std::string config =
        std::string(HFLOW_TEST_UDF_DIR) + "/cli_faults/faulty_func.json";
    return Write("g.json",
                 R"({"name":"faults","inputs":["a"],"nodes":[{"name":"faulty",)"
                 R"("inputs":["a"],"outputs":1,"function":"Faulty",)"
                 R"("compile_config":")" +
                     config + R"(","init_params":{"mode":")" + mode +
                     R"(","gate":")" + gate + R"(","after":)" +
                     std::to_string(after) +
                     R"(}}],"outputs":["faulty:0"],"deploy":{"deploy_info":[)"
                     R"({"flow_node_name":"faulty","logic_device_id":"0:0:)" +
                     std::to_string(GetParam().back()) + R"("}]}})");
  }
  std::string Devices() {
    std::string s;
    for (int32_t d : GetParam())
      s += (s.empty() ? "" : ",") + std::to_string(d);
    return " --devices " + s;
  }
  // The UDF is built once per build tree, beside the SDK it builds against.
  void SetUp() override {
    CliTest::SetUp();
    env_ = "HFLOW_UDF_BUILD_DIR='" +
           std::filesystem::path(HFLOW_BUILD_SDK_DIR)
               .parent_path()
               .append("cli_udf_builds")
               .string() +
           "'";
  }
  testing::CliResult Cli(const std::string& args) { return Run(args); }
  testing::CliResult RunFaulty(const std::string& mode, int after,
                               const std::string& extra) {
    return Cli("run '" + Graph(mode, after) + "'" + Devices() +
               " --input a=int32:1,2" + extra);
  }
};

TEST_P(CliFaultTest, ValidateRunsInitAndCatchesAFailingOne) {
  std::string g = Graph("init_fail");
  testing::CliResult r = Cli("validate '" + g + "'" + Devices());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("running Init"));
  EXPECT_THAT(r.err, HasSubstr("faulty"));
  r = Cli("validate '" + g + "'" + Devices() + " --no-init");
  EXPECT_EQ(r.code, 0) << r.err;
  r = Cli("validate '" + Graph("ok") + "'" + Devices());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("faults: ok (1 instances ran Init)"));
}

TEST_P(CliFaultTest, ValidateBoundsAHangingInit) {
  testing::CliResult r = Cli("validate '" + Graph("init_hang") + "'" +
                             Devices() + " --timeout 500");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_LT(r.seconds, 0.5 + 8) << r.err;  // --timeout plus a few seconds
  EXPECT_THAT(r.err, HasSubstr("Init"));
}

// stdout is a pipe read line by line: each result must arrive when it is
// produced (not at exit, which a crash never reaches). The UDF aborts on
// transaction 4 only once the test has read the first three and opened the
// gate.
TEST_P(CliFaultTest, CrashKeepsTheResultsAlreadyProduced) {
  std::string gate = dir_ + "/gate";
  std::string cmd = "timeout -k 5 120 env " + env_ + " '" + HFLOW_CLI_PATH +
                    "' run '" + Graph("crash", 3, gate) + "'" + Devices() +
                    " --input a=int32:1,2 --repeat 6 2>'" + dir_ + "/err'";
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::vector<std::string> lines;
  char buf[4096];
  while (lines.size() < 3 && std::fgets(buf, sizeof(buf), pipe)) {
    lines.push_back(buf);
  }
  Write("gate", "");
  while (std::fgets(buf, sizeof(buf), pipe)) lines.push_back(buf);
  int status = pclose(pipe);
  EXPECT_NE(status, 0);
  EXPECT_EQ(lines,
            (std::vector<std::string>{PassLine(1) + "\n", PassLine(2) + "\n",
                                      PassLine(3) + "\n"}))
      << Read(dir_ + "/err");
}

TEST_P(CliFaultTest, HangExitsWithinTheTimeoutNamingTheTransaction) {
  testing::CliResult r = RunFaulty("hang", 2, " --repeat 5 --timeout 1000");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_LT(r.seconds, 1.0 + 8) << r.err;
  EXPECT_EQ(Lines(r.out), (std::vector<std::string>{PassLine(1), PassLine(2)}));
  EXPECT_THAT(r.err, HasSubstr("transaction 3 has not come back"));
  // The teardown names the stuck node and what it is doing.
  EXPECT_THAT(r.err, HasSubstr("node 'faulty' function 'Faulty' (replica 0) "
                               "on device " +
                               std::to_string(GetParam().back()) +
                               " in Proc of transaction 3"));
}

TEST_P(CliFaultTest, RunBoundsAHangingInitNamingTheNode) {
  testing::CliResult r = RunFaulty("init_hang", 0, " --timeout 500");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_LT(r.seconds, 0.5 + 8) << r.err;  // --timeout plus a few seconds
  EXPECT_THAT(r.err,
              HasSubstr("node 'faulty' replica 0 on device " +
                        std::to_string(GetParam().back()) +
                        ": the UDF's Init did not return within 500 ms"));
  EXPECT_EQ(r.out, "");
}

TEST_P(CliFaultTest, FailedResultNamesItsCode) {
  testing::CliResult r = RunFaulty("fail", 1, " --repeat 2");
  EXPECT_EQ(r.code, 1) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_EQ(lines[0], PassLine(1));
  EXPECT_THAT(lines[1], HasSubstr(R"("trans_id":2,"ret_code":564000,)"
                                  R"("ret_name":"FLOW_FUNC_FAILED")"));
  EXPECT_THAT(r.err, HasSubstr("transaction 2 came back with ret code 564000 "
                               "(FLOW_FUNC_FAILED)"));
}

TEST_P(CliFaultTest, OutputFileKeepsAUdfsPrintfApart) {
  std::string file = dir_ + "/results.jsonl";
  testing::CliResult r =
      RunFaulty("printf", 0, " --repeat 2 --output '" + file + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Lines(Read(file)),
            (std::vector<std::string>{PassLine(1), PassLine(2)}));
  EXPECT_THAT(r.out, HasSubstr("not a result line"));
  EXPECT_THAT(r.out, Not(HasSubstr("trans_id")));
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, CliFaultTest,
                         ::testing::Values(std::vector<int32_t>{0, 1},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
