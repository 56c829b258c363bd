// Batched calls to worker processes (Note [Batched calls] in
// src/worker/remote_batch.cc): the input sets queued in front of an
// isolated instance go to its worker together, one round trip for many
// calls, and come out as separate calls would: in order, each once, each
// under its own transaction. A death in the middle of a batch loses only
// the call in flight; the calls behind it run in the new worker. The
// process-wide counts (worker::ProcBatchCounts) show the round trips;
// $HFLOW_WORKER_BATCH=1 turns batches off, which the first test's check
// then fails (the second test shows it). On device sets with and without
// device 0.
//
//   x ── id@first ── frag@last (heavy_load, in a worker) ── out
//
// frag holds input 1 until the test opens its gate (a file), so the
// inputs behind it queue up in the host.
//
// Thread-safety: each test drives its session from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "hflow/hflow.h"
#include "test_util.h"
#include "worker/remote_instance.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::I64;

constexpr uint64_t kCount = 40;  // within the queues' depth (64)

class WorkerBatchTest : public testing::WorkerTest {
 protected:
  void TearDown() override {
    unsetenv("HFLOW_WORKER_BATCH");
    testing::WorkerTest::TearDown();
  }

  void Init(RestartPolicy policy = RestartPolicy::kNever) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.restart_policy = policy;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  std::string Gate() const { return (dir_ / "gate").string(); }

  // frag faults in `mode` on input `at`, and holds input 1 at the gate.
  void Build(Session& s, const std::string& mode, int64_t at) {
    const std::vector<int32_t>& devices = GetParam();
    FlowData x("x", 0);
    FlowNode id = testing::FuncNode("id", "_BuiltIn_Identity");
    id.SetInput(0, x);
    FunctionPp pp("frag_pp");
    pp.SetCompileConfig(testing::FragileConfig(dir_, /*heavy=*/true));
    pp.SetInitParam("mode", mode);
    pp.SetInitParam("at", at);
    pp.SetInitParam("gate_file", Gate());
    FlowNode frag("frag", 1, 1);
    frag.AddPp(pp);
    frag.SetInput(0, id, 0);
    FlowGraph g("batched");
    g.SetInputs({x}).SetOutputs({frag});
    g = testing::Place(g,
                       {{"id", {devices.front()}}, {"frag", {devices.back()}}});
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Feeds 1..kCount (input 1 held at the gate), lets the rest queue up
  // behind it, then opens the gate.
  void FeedAllThenOpen(Session& s) {
    for (uint64_t t = 1; t <= kCount; ++t) Feed(s, t, int64_t(t));
    // Feeds return once queued in front of id, which moves them on to
    // frag's queue in microseconds; the wait only makes that certain.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::ofstream(Gate()) << "open\n";
  }

  // Fetches transactions 1..`last`, expecting each in order with 2t.
  void ExpectInOrder(Session& s, uint64_t last) {
    for (uint64_t t = 1; t <= last; ++t) {
      SCOPED_TRACE("transaction " + std::to_string(t));
      Result r = Fetch(s);
      ASSERT_TRUE(r.status.ok()) << r.status.ToString();
      EXPECT_EQ(r.trans, t);
      EXPECT_EQ(r.ret_code, 0);
      EXPECT_EQ(r.value, 2 * int64_t(t));
    }
  }

  // Every input through a frag that faults nowhere: the calls and round
  // trips it took.
  worker::BatchCounts PassAll() {
    Init();
    Session s;
    Build(s, "pass", -1);
    const worker::BatchCounts before = worker::ProcBatchCounts();
    FeedAllThenOpen(s);
    ExpectInOrder(s, kCount);
    const worker::BatchCounts after = worker::ProcBatchCounts();
    EXPECT_TRUE(s.RemoveGraph(1).ok());
    return {after.calls - before.calls, after.round_trips - before.round_trips};
  }
};

TEST_P(WorkerBatchTest, QueuedCallsGoTogetherAndComeOutInOrderOnce) {
  const worker::BatchCounts n = PassAll();
  EXPECT_EQ(n.calls, kCount);
  // 1 alone at the gate, then the other 39 in batches of up to 16 (more
  // round trips only if some came late): not one round trip per call.
  EXPECT_LE(n.round_trips, kCount / 4) << "calls went one by one";
}

// The switch the first test's check depends on: without batches every
// call is a round trip of its own, and the results are the same.
TEST_P(WorkerBatchTest, WithBatchesOffEveryCallIsARoundTrip) {
  setenv("HFLOW_WORKER_BATCH", "1", 1);
  const worker::BatchCounts n = PassAll();
  EXPECT_EQ(n.calls, kCount);
  EXPECT_EQ(n.round_trips, kCount);
}

// Input 20 kills the worker while the calls behind it in its batch wait
// in the worker: 20 alone is lost (its fetch says so); 21 and on run in
// the new worker, in order.
TEST_P(WorkerBatchTest, ADeathInABatchLosesOnlyTheCallInFlight) {
  Init(RestartPolicy::kRestart);
  Session s;
  Build(s, "segv", 20);
  const worker::BatchCounts before = worker::ProcBatchCounts();
  FeedAllThenOpen(s);
  int64_t first = -1;
  int64_t second = -1;
  for (uint64_t t = 1; t <= kCount; ++t) {
    SCOPED_TRACE("transaction " + std::to_string(t));
    Result r = Fetch(s);
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_EQ(r.trans, t);
    if (t == 20) {
      EXPECT_EQ(r.ret_code, FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING);
      continue;
    }
    EXPECT_EQ(r.ret_code, 0);
    EXPECT_EQ(r.value, 2 * int64_t(t));
    int64_t& pid = t < 20 ? first : second;
    if (pid < 0) pid = r.pid;
    EXPECT_EQ(r.pid, pid) << "one worker before the death, one after";
  }
  EXPECT_NE(first, second);
  const worker::BatchCounts after = worker::ProcBatchCounts();
  EXPECT_LT(after.round_trips - before.round_trips, after.calls - before.calls)
      << "the death was not in a batch";
  EXPECT_TRUE(s.RemoveGraph(1).ok());
}

// Without a restart the same death fails the graph, and the report names
// the call in flight, not the first of its batch. Nothing the worker
// finished before it died is lost: the outputs of 1..19 are all fetched,
// in order, before the error (Note [Failing a graph] in deploy/deployer.cc
// keeps a failed graph's outputs; Note [A reset before the last messages]
// in worker/channel.cc keeps the replies a dying worker sent).
TEST_P(WorkerBatchTest, ADeathInABatchNamesTheCallInFlight) {
  Init(RestartPolicy::kNever);
  Session s;
  Build(s, "segv", 20);
  FeedAllThenOpen(s);
  Result r;
  uint64_t t = 1;
  for (; t <= kCount; ++t) {
    SCOPED_TRACE("transaction " + std::to_string(t));
    r = Fetch(s);
    if (!r.status.ok()) break;
    EXPECT_EQ(r.trans, t);
    EXPECT_EQ(r.ret_code, 0);
    EXPECT_EQ(r.value, 2 * int64_t(t));
  }
  EXPECT_EQ(t, 20u) << "fetched 1.." << t - 1 << " before the error";
  EXPECT_FALSE(r.status.ok());
  EXPECT_THAT(r.status.message(),
              ::testing::HasSubstr("killed by signal 11 (SIGSEGV"));
  const std::string& m = r.status.message();
  const std::string in_proc = "in Proc of transaction ";
  const size_t at = m.find(in_proc);
  ASSERT_NE(at, std::string::npos) << m;
  const uint64_t named =
      std::strtoull(m.c_str() + at + in_proc.size(), nullptr, 10);
  EXPECT_EQ(named, 20u) << m;
  EXPECT_TRUE(s.RemoveGraph(1).ok());
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerBatchTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()));

}  // namespace
}  // namespace hflow
