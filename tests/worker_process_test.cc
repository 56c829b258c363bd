// Worker processes: a node whose compile config says "heavy_load": true,
// or any library UDF under Options::udf_isolation, runs in an hflow-worker
// process. The UDF (tests/worker_udfs/fragile.cpp) reports the pid that
// ran it, so each test sees where its code ran. A UDF that segfaults,
// aborts, exits or is killed in Proc fails its graph with a status naming
// the node, device, signal or exit code and transaction, the fetch
// returns it at once, and the session goes on: RemoveGraph and a new graph
// work. A crash in Init fails the build the same way; a Proc that hangs
// is ended at RemoveGraph by killing its worker; no worker outlives its
// graph (a host killed with SIGKILL: worker_cli_test.cc). On device sets
// with and without device 0.
//
// Thread-safety: each test drives its session from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::I64;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int32_t kIoMs = 10000;

using testing::Alive;
using testing::Gone;

class WorkerProcessTest : public testing::WorkerTest {
 protected:
  void Init(bool isolate = false, int32_t stop_timeout_ms = 10000) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.udf_isolation = isolate;
    o.stop_timeout_ms = stop_timeout_ms;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  std::string Config(bool heavy) { return testing::FragileConfig(dir_, heavy); }

  // x ── id@front ── frag@back ── out; frag faults in `mode` on input
  // `at` (0: in Init).
  FlowGraph Graph(const std::string& mode, int64_t at, bool heavy = true,
                  const std::string& pid_file = "") {
    return testing::FragileGraph(GetParam(), Config(heavy), mode, at, pid_file);
  }

  // Feeds `v` and fetches its result; returns the pid that ran Proc.
  int64_t RoundTrip(Session& s, uint32_t graph, int64_t v) {
    FlowInfo in;
    in.transaction_id = uint64_t(v);
    EXPECT_TRUE(s.FeedData(graph, {I64(v)}, in, kIoMs).ok());
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(graph, &out, &info, kIoMs);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok() || out.empty()) return -1;
    const std::vector<int64_t> r = out.at(0).As<int64_t>();
    EXPECT_EQ(r.at(0), 2 * v);
    return r.at(1);
  }

  // The next graph of the same session works (in a worker again).
  void ExpectNextGraphWorks(Session& s) {
    ASSERT_TRUE(s.AddGraph(9, Graph("pass", -1)).ok());
    Status st = s.BuildGraph(9);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const int64_t pid = RoundTrip(s, 9, 5);
    EXPECT_NE(pid, int64_t(getpid()));
    st = s.RemoveGraph(9);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(Gone(pid)) << "worker " << pid << " outlived its graph";
  }

  // The status a dead worker's graph fails with names it.
  void ExpectNamesTheWorker(const Status& st, const std::string& cause,
                            const std::string& call) {
    EXPECT_FALSE(st.ok());
    EXPECT_THAT(st.message(), HasSubstr("node 'frag'"));
    EXPECT_THAT(st.message(),
                HasSubstr("on device " + std::to_string(GetParam().back())));
    EXPECT_THAT(st.message(), HasSubstr(cause));
    EXPECT_THAT(st.message(), HasSubstr(call));
  }
};

TEST_P(WorkerProcessTest, HeavyLoadRunsInAWorkerThatEndsWithItsGraph) {
  Init();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph("pass", -1)).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  int64_t pid = -1;
  for (int64_t v = 1; v <= 20; ++v) {
    const int64_t p = RoundTrip(s, 1, v);
    if (v == 1) pid = p;
    EXPECT_EQ(p, pid) << "one worker serves the instance";
  }
  EXPECT_NE(pid, int64_t(getpid()));
  EXPECT_TRUE(Alive(pid));
  EXPECT_TRUE(s.RemoveGraph(1).ok());
  EXPECT_TRUE(Gone(pid));
}

TEST_P(WorkerProcessTest, WithoutHeavyLoadTheUdfRunsInTheHost) {
  Init();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph("pass", -1, /*heavy=*/false)).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  EXPECT_EQ(RoundTrip(s, 1, 4), int64_t(getpid()));
}

TEST_P(WorkerProcessTest, UdfIsolationPutsLibraryUdfsInWorkers) {
  Init(/*isolate=*/true);
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph("pass", -1, /*heavy=*/false)).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  const int64_t pid = RoundTrip(s, 1, 4);
  EXPECT_NE(pid, int64_t(getpid()));
  EXPECT_TRUE(Finalize().ok());  // Finalize ends workers as RemoveGraph does
  EXPECT_TRUE(Gone(pid));
}

// x ── frag (a replica on every device of the set, each in its worker) ──
// out: every transaction comes back exactly once, from one of as many
// workers as replicas.
TEST_P(WorkerProcessTest, ReplicasInWorkersDeliverEachTransactionOnce) {
  Init();
  const std::vector<int32_t>& d = GetParam();
  FlowData x("x", 0);
  FunctionPp pp("frag_pp");
  pp.SetCompileConfig(Config(true));
  pp.SetInitParam("mode", std::string("pass"));
  FlowNode frag("frag", 1, 1);
  frag.AddPp(pp);
  frag.SetInput(0, x);
  FlowGraph g("replicas");
  g.SetInputs({x}).SetOutputs({frag});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, testing::Place(g, {{"frag", d}})).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  constexpr int64_t kN = 120;
  std::thread feeder([&] {
    for (int64_t v = 1; v <= kN; ++v) {
      FlowInfo in;
      in.transaction_id = uint64_t(v);
      ASSERT_TRUE(s.FeedData(1, {I64(v)}, in, kIoMs).ok());
    }
  });
  std::map<uint64_t, int> seen;
  std::set<int64_t> pids;
  for (int64_t i = 0; i < kN; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, kIoMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const std::vector<int64_t> r = out.at(0).As<int64_t>();
    EXPECT_EQ(r.at(0), 2 * int64_t(info.transaction_id)) << "pid " << r.at(1);
    ++seen[info.transaction_id];
    pids.insert(r.at(1));
  }
  feeder.join();
  EXPECT_EQ(seen.size(), size_t(kN));
  for (const auto& [t, n] : seen) EXPECT_EQ(n, 1) << "transaction " << t;
  EXPECT_EQ(pids.size(), d.size());
  EXPECT_EQ(pids.count(int64_t(getpid())), 0u);
  std::vector<Tensor> none;
  FlowInfo info;
  EXPECT_TRUE(s.FetchData(1, &none, &info, 50).IsTimeout());
  EXPECT_TRUE(s.RemoveGraph(1).ok());
  for (int64_t pid : pids) EXPECT_TRUE(Gone(pid));
}

struct Death {
  const char* mode;
  const char* cause;
};

TEST_P(WorkerProcessTest, DeathInProcFailsTheGraphAndTheSessionGoesOn) {
  for (const Death& d : {Death{"segv", "killed by signal 11 (SIGSEGV"},
                         Death{"abort", "killed by signal 6 (SIGABRT"},
                         Death{"exit", "exited with code 7"},
                         Death{"kill", "killed by signal 9 (SIGKILL"}}) {
    SCOPED_TRACE(d.mode);
    Init();
    Session s;
    ASSERT_TRUE(s.AddGraph(1, Graph(d.mode, 3)).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const int64_t pid = RoundTrip(s, 1, 1);
    EXPECT_EQ(RoundTrip(s, 1, 2), pid);
    FlowInfo in;
    in.transaction_id = 3;
    ASSERT_TRUE(s.FeedData(1, {I64(3)}, in, kIoMs).ok());
    std::vector<Tensor> out;
    FlowInfo info;
    // The death is seen as it happens (the worker's socket closes): the
    // fetch returns well within a second.
    st = s.FetchData(1, &out, &info, 1000);
    EXPECT_FALSE(st.IsTimeout()) << st.ToString();
    ExpectNamesTheWorker(st, d.cause, "in Proc of transaction 3");
    EXPECT_THAT(st.message(), HasSubstr("pid " + std::to_string(pid)));
    EXPECT_FALSE(Alive(pid));
    // Later calls say the same.
    Status again = s.FeedData(1, {I64(4)}, FlowInfo{}, 100);
    EXPECT_THAT(again.message(), HasSubstr("node 'frag'"));
    EXPECT_TRUE(s.RemoveGraph(1).ok());
    ExpectNextGraphWorks(s);
    EXPECT_TRUE(Finalize().ok());
  }
}

TEST_P(WorkerProcessTest, AFailedProcIsAnErrorCodeNotADeath) {
  Init();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph("fail", 2)).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  const int64_t pid = RoundTrip(s, 1, 1);
  ASSERT_TRUE(s.FeedData(1, {I64(2)}, FlowInfo{}, kIoMs).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  Status st = s.FetchData(1, &out, &info, kIoMs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(info.ret_code, 0);
  EXPECT_EQ(RoundTrip(s, 1, 3), pid);  // the same worker goes on
}

TEST_P(WorkerProcessTest, DeathInInitFailsTheBuildNamingTheWorker) {
  for (const Death& d : {Death{"segv", "killed by signal 11 (SIGSEGV"},
                         Death{"exit", "exited with code 7"}}) {
    SCOPED_TRACE(d.mode);
    Init();
    Session s;
    ASSERT_TRUE(s.AddGraph(1, Graph(d.mode, 0)).ok());
    Status st = s.BuildGraph(1);
    ExpectNamesTheWorker(st, d.cause, "Init");
    ExpectNextGraphWorks(s);
    EXPECT_TRUE(Finalize().ok());
  }
}

TEST_P(WorkerProcessTest, AHungProcIsEndedAtRemoveGraph) {
  testing::Watchdog dog(milliseconds(30000), "RemoveGraph of a hung worker");
  Init(/*isolate=*/false, /*stop_timeout_ms=*/300);
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph("hang", 2)).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  const int64_t pid = RoundTrip(s, 1, 1);
  ASSERT_TRUE(s.FeedData(1, {I64(2)}, FlowInfo{}, kIoMs).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  EXPECT_TRUE(s.FetchData(1, &out, &info, 200).IsTimeout());
  const auto t0 = Clock::now();
  Status st = s.RemoveGraph(1);
  EXPECT_TRUE(st.ok()) << st.ToString();  // nothing is left behind
  EXPECT_LT(Clock::now() - t0, milliseconds(5000));
  EXPECT_TRUE(Gone(pid));
  ExpectNextGraphWorks(s);
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerProcessTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
