// Worker processes from the command line: `hflow run --isolate` runs a
// library UDF in a worker, whose stdout and stderr lines reach hflow's
// stderr under "[worker <node>@device<d>] " (stdout keeps only results);
// a UDF that segfaults there fails the run with exit code 1 and a message
// naming node, device and signal, instead of killing hflow; and a host
// killed with SIGKILL leaves no worker behind (the workers' parent-death
// signal); with --restart a dead worker is started again and the run
// goes on. On device sets with and without device 0.
//
// Thread-safety: each test drives its commands from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "test_util.h"
#include "worker_test_util.h"

extern char** environ;

namespace hflow {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::Alive;

class WorkerCliTest
    : public testing::CliTest,
      public ::testing::WithParamInterface<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    testing::LeaveCrashSignalsToTheProcess();
    CliTest::SetUp();
  }
  std::string Devices() const {
    std::string s;
    for (int32_t d : GetParam()) {
      s += (s.empty() ? "" : ",") + std::to_string(d);
    }
    return s;
  }
  std::string Graph(bool heavy, const std::string& mode, int64_t at,
                    const std::string& params = "") {
    return Write("g.json", testing::FragileGraphJson(
                               testing::FragileConfig(dir_, heavy), mode, at,
                               GetParam().back(), params));
  }
  std::string Device() const { return std::to_string(GetParam().back()); }
};

TEST_P(WorkerCliTest, IsolatedOutputLinesCarryTheWorkersPrefix) {
  testing::CliResult r =
      Run("run '" + Graph(false, "print", -1) + "' --isolate --devices " +
          Devices() + " --input x=int64:4");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string prefix = "[worker frag@device" + Device() + "] ";
  EXPECT_THAT(r.err, HasSubstr(prefix + "fragile prints 4\n"));
  EXPECT_THAT(r.err, HasSubstr(prefix + "fragile warns 4\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("fragile")));  // results only
  EXPECT_THAT(r.out, HasSubstr("[8,"));           // 2x, then the pid
}

TEST_P(WorkerCliTest, ACrashInAnIsolatedUdfFailsTheRunNotHflow) {
  testing::CliResult r = Run("run '" + Graph(false, "segv", 2) +
                             "' --isolate --repeat 1 --devices " + Devices() +
                             " --input x=int64:2");
  EXPECT_EQ(r.code, 1) << r.err;  // a failed run, not a signal
  EXPECT_THAT(r.err, HasSubstr("node 'frag'"));
  EXPECT_THAT(r.err, HasSubstr("on device " + Device()));
  EXPECT_THAT(r.err, HasSubstr("killed by signal 11 (SIGSEGV"));
  // Without --isolate the same graph takes hflow down with the signal
  // (the shell's 128 + 11).
  r = Run("run '" + Graph(false, "segv", 2) + "' --devices " + Devices() +
          " --input x=int64:2");
  EXPECT_EQ(r.code, 128 + SIGSEGV) << r.err;
}

// --restart: the worker that dies on the first message is started again;
// that message comes back as lost (564003), the others with results, and
// the run fails naming it rather than stopping at it.
TEST_P(WorkerCliTest, WithRestartTheRunGoesOnAndNamesTheLostMessage) {
  const std::string once = R"("once_file":")" + dir_ + R"(/once")";
  testing::CliResult r = Run("run '" + Graph(false, "segv", 2, once) +
                             "' --isolate --restart 1 --repeat 3 --devices " +
                             Devices() + " --input x=int64:2");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is started again at its next call"));
  EXPECT_THAT(r.err, HasSubstr("transaction 1 came back with ret code 564003 "
                               "(FLOW_FUNC_STATUS_REDEPLOYING) from node "
                               "'frag'"));
  EXPECT_THAT(r.out, HasSubstr(R"("trans_id":1,"ret_code":564003)"));
  EXPECT_THAT(r.out, HasSubstr(R"("trans_id":2,"ret_code":0)"));
  EXPECT_THAT(r.out, HasSubstr(R"("trans_id":3,"ret_code":0)"));
}

// --stats counts the worker's runtime with the host's: frag's device got
// two contexts (the host's and the worker's) instead of one, and nothing
// was bound implicitly anywhere.
TEST_P(WorkerCliTest, StatsCountTheWorkersContexts) {
  const std::string g = Graph(false, "pass", -1);
  for (bool isolate : {false, true}) {
    SCOPED_TRACE(isolate ? "isolated" : "in the host");
    const std::string stats = dir_ + "/stats.json";
    testing::CliResult r =
        Run("run '" + g + "'" + (isolate ? " --isolate" : "") + " --devices " +
            Devices() + " --input x=int64:3 --stats '" + stats + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    nlohmann::json j = nlohmann::json::parse(Read(stats), nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    for (const auto& d : j["devices"]) {
      const bool frag = d["id"].get<int>() == GetParam().back();
      EXPECT_EQ(d["contexts_created"].get<int>(), frag ? (isolate ? 2 : 1) : 0)
          << "device " << d["id"];
      EXPECT_EQ(d["implicit_bindings"].get<int>(), 0) << "device " << d["id"];
    }
  }
}

TEST_P(WorkerCliTest, AHostKilledWithSigkillLeavesNoWorker) {
  const std::string pid_file = dir_ + "/worker.pid";
  const std::string graph =
      Graph(true, "hang", 1, R"("pid_file":")" + pid_file + R"(")");
  const std::string devices = Devices();
  std::vector<std::string> args = {HFLOW_CLI_PATH, "run",   graph,
                                   "--devices",    devices, "--input",
                                   "x=int64:1"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t host = -1;
  ASSERT_EQ(posix_spawn(&host, HFLOW_CLI_PATH, nullptr, nullptr, argv.data(),
                        environ),
            0);
  int64_t worker = -1;
  const bool started = testing::WaitFor(
      [&] { return static_cast<bool>(std::ifstream(pid_file) >> worker); },
      milliseconds(30000));
  EXPECT_TRUE(started);
  EXPECT_TRUE(Alive(worker));
  EXPECT_NE(worker, int64_t(host));
  kill(host, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(host, &status, 0), host);
  ASSERT_TRUE(started);
  EXPECT_TRUE(
      testing::WaitFor([&] { return !Alive(worker); }, milliseconds(2000)))
      << "worker " << worker << " outlived its host";
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerCliTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
