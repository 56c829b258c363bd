// Shared builders of the worker-process tests: compile configs, graphs
// and graph files of the Fragile UDF library (tests/worker_udfs/
// fragile.cpp), the device sets they run on, and process checks.
//
// Thread-safety: plain functions (writing the files they are given).
#ifndef HFLOW_TESTS_WORKER_TEST_UTIL_H_
#define HFLOW_TESTS_WORKER_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

#ifndef HFLOW_TEST_FRAGILE_UDF
#error "HFLOW_TEST_FRAGILE_UDF must name the built Fragile UDF library"
#endif

namespace hflow {
namespace testing {

// Writes a compile config of the Fragile library into `dir` (heavy_load
// as given) and returns its path.
inline std::string FragileConfig(const std::filesystem::path& dir, bool heavy) {
  const std::filesystem::path lib = HFLOW_TEST_FRAGILE_UDF;
  const std::filesystem::path file =
      dir / (heavy ? "heavy.json" : "light.json");
  std::ofstream(file) << R"({"func_list": [{"func_name": "Fragile"}],)"
                      << R"( "input_num": 1, "output_num": 1,)"
                      << R"( "workspace": ")" << lib.parent_path().string()
                      << R"(", "target_bin": ")" << lib.filename().string()
                      << R"(", "heavy_load": )" << (heavy ? "true" : "false")
                      << "}";
  return file.string();
}

// Every worker test runs on device sets without device 0 and with it.
inline std::vector<std::vector<int32_t>> WorkerDeviceSets() {
  return {{2, 3, 4, 5}, {3, 6, 7}, {0, 1, 2}};
}

inline bool Alive(int64_t pid) { return pid > 0 && kill(pid_t(pid), 0) == 0; }

// Sends `sig` to worker `pid`; false for no pid (a failed round trip's -1:
// kill(-1, sig) would signal every process the test may, the test runner
// and the build around it included) or this process.
inline bool SignalWorker(int64_t pid, int sig) {
  return pid > 0 && pid != int64_t(getpid()) && kill(pid_t(pid), sig) == 0;
}

// Whether `pid` is gone within two seconds.
inline bool Gone(int64_t pid) {
  return WaitFor([pid] { return !Alive(pid); },
                 std::chrono::milliseconds(2000));
}

// x ── id@devices.front() ── frag@devices.back() ── out: frag (Fragile,
// its compile config `config`) faults in `mode` on input `at` (0: in
// Init), once across its workers when `once_file` is given, and writes
// its pid to `pid_file` when one is given.
inline FlowGraph FragileGraph(const std::vector<int32_t>& devices,
                              const std::string& config,
                              const std::string& mode, int64_t at,
                              const std::string& pid_file = "",
                              const std::string& once_file = "") {
  FlowData x("x", 0);
  FlowNode id = FuncNode("id", "_BuiltIn_Identity");
  id.SetInput(0, x);
  FunctionPp pp("frag_pp");
  pp.SetCompileConfig(config);
  pp.SetInitParam("mode", mode);
  pp.SetInitParam("at", at);
  if (!pid_file.empty()) pp.SetInitParam("pid_file", pid_file);
  if (!once_file.empty()) pp.SetInitParam("once_file", once_file);
  FlowNode frag("frag", 1, 1);
  frag.AddPp(pp);
  frag.SetInput(0, id, 0);
  FlowGraph g("fragile");
  g.SetInputs({x}).SetOutputs({frag});
  return Place(g, {{"id", {devices.front()}}, {"frag", {devices.back()}}});
}

// The fixture of the worker tests, over a device set: hflow finalized
// around each test, a scratch folder `dir_` for configs and flag files.
class WorkerTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    // A sanitizer's own SIGSEGV and SIGABRT handlers, inherited by the
    // workers, would turn their deaths into reports and exit codes (and
    // TSan's exit would sleep a second first).
    LeaveCrashSignalsToTheProcess();
    (void)Finalize();
    dir_ = std::filesystem::temp_directory_path() /
           ("hflow_worker_test_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    (void)Finalize();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Adds and builds graph 1 of `s`: FragileGraph with heavy_load.
  void BuildFragile(Session& s, const std::string& mode, int64_t at,
                    const std::string& once_file = "") {
    const std::string config = FragileConfig(dir_, /*heavy=*/true);
    ASSERT_TRUE(
        s.AddGraph(1, FragileGraph(GetParam(), config, mode, at, "", once_file))
            .ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Feeds `v` to graph 1 as transaction `trans`.
  void Feed(Session& s, uint64_t trans, int64_t v) {
    FlowInfo in;
    in.transaction_id = trans;
    Status st = s.FeedData(1, {I64(v)}, in, 10000);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // One fetch of graph 1: a Fragile output [2x, pid] read out.
  struct Result {
    Status status;
    uint64_t trans = 0;
    int32_t ret_code = 0;
    int64_t value = -1;
    int64_t pid = -1;
  };
  Result Fetch(Session& s, int32_t timeout_ms = 10000) {
    Result r;
    std::vector<Tensor> out;
    FlowInfo info;
    r.status = s.FetchData(1, &out, &info, timeout_ms);
    r.trans = info.transaction_id;
    r.ret_code = info.ret_code;
    if (r.status.ok() && info.ret_code == 0 && !out.empty()) {
      const std::vector<int64_t> v = out.at(0).As<int64_t>();
      r.value = v.at(0);
      r.pid = v.at(1);
    }
    return r;
  }

  std::filesystem::path dir_;
};

// A graph file: x ── frag (Fragile, `mode` on input `at`, placed on
// `device`) ── out; `params` adds init params (`"k": v, ...`).
inline std::string FragileGraphJson(const std::string& config,
                                    const std::string& mode, int64_t at,
                                    int32_t device,
                                    const std::string& params = "") {
  return R"({"name":"fragile","inputs":["x"],"nodes":[{"name":"frag",)"
         R"("inputs":["x"],"outputs":1,"function":"Fragile",)"
         R"("compile_config":")" +
         config + R"(","init_params":{"mode":")" + mode + R"(","at":)" +
         std::to_string(at) + (params.empty() ? "" : "," + params) +
         R"(}}],"outputs":["frag:0"],"deploy":{"deploy_info":[)"
         R"({"flow_node_name":"frag","logic_device_id":"0:0:)" +
         std::to_string(device) + R"("}]}})";
}

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_WORKER_TEST_UTIL_H_
