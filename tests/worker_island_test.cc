// Islands (Note [Islands] in src/exec/graph_runner_islands.cc, Note
// [Chains in a worker] in src/worker/worker_chain.cc): under
// Options::udf_isolation a chain of isolated nodes on one device runs
// inside its worker; the host calls only its first stage, one call per
// message, and the stages behind it run in the worker on its outputs. The
// results are what the host's executor gives: the same values, in order,
// a failure inside the island named after its node and passed on in
// order, a raised exception under the node that raised it, and a death
// in a later stage naming that stage and losing nothing produced before
// it. $HFLOW_WORKER_CHAIN=0 turns the links off: the first test then
// sees four host calls per message (the switch that proves it bites). The
// replies come through the slot's own reply ring, read by the caller
// ($HFLOW_WORKER_SLOT_REPLIES=0: the segment's, read by the supervisor;
// $HFLOW_WORKER_RING=0: on the socket). On device sets with and without
// device 0.
//
//   x ── id@first ── a ── b ── c ── d ── out    a..d Fragile, on last
//                                                (each doubles its input)
//
// Thread-safety: each test drives its session from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"
#include "worker/remote_instance.h"
#include "worker/worker_process.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::FuncNode;
using ::hflow::testing::Place;
using ::testing::HasSubstr;

constexpr uint64_t kCount = 40;  // within the queues' depth (64)

class WorkerIslandTest : public testing::WorkerTest {
 protected:
  void TearDown() override {
    unsetenv("HFLOW_WORKER_CHAIN");
    unsetenv("HFLOW_WORKER_RING");
    unsetenv("HFLOW_WORKER_RING_BYTES");
    unsetenv("HFLOW_WORKER_SLOT_REPLIES");
    testing::WorkerTest::TearDown();
  }

  void Init(RestartPolicy policy = RestartPolicy::kNever) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.udf_isolation = true;
    o.restart_policy = policy;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // The chain, node `name` in `modes[name]` on input `at[name]` (the
  // others pass).
  void Build(Session& s, const std::map<std::string, std::string>& modes = {},
             const std::map<std::string, int64_t>& at = {},
             bool exception_catch = false, const std::string& gate = "",
             bool upstream = false) {
    const std::string config = testing::FragileConfig(dir_, false);
    FlowData x("x", 0);
    FlowNode id = FuncNode("id", "_BuiltIn_Identity");
    id.SetInput(0, x);
    std::vector<FlowNode> nodes;
    testing::Placement placement{{"id", {GetParam().front()}}};
    std::vector<const char*> names{"a", "b", "c", "d"};
    // u: on the first device, in a worker of its own, feeding the island.
    if (upstream) names.insert(names.begin(), "u");
    for (const char* name : names) {
      FunctionPp pp(std::string(name) + "_pp");
      pp.SetCompileConfig(config);
      auto m = modes.find(name);
      pp.SetInitParam("mode", m == modes.end() ? "pass" : m->second);
      auto v = at.find(name);
      pp.SetInitParam("at", v == at.end() ? int64_t(0) : v->second);
      // a holds input 1 until the gate file exists.
      if (nodes.empty() && !gate.empty()) pp.SetInitParam("gate_file", gate);
      FlowNode n(name, 1, 1);
      n.AddPp(pp);
      if (nodes.empty()) {
        n.SetInput(0, id, 0);
      } else {
        n.SetInput(0, nodes.back(), 0);
      }
      nodes.push_back(n);
      placement.push_back({name,
                           {std::string(name) == "u" ? GetParam().front()
                                                     : GetParam().back()}});
    }
    FlowGraph g("island");
    g.SetInputs({x}).SetOutputs({nodes.back()});
    g.SetExceptionCatch(exception_catch);
    ASSERT_TRUE(s.AddGraph(1, Place(g, placement)).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  struct Got {
    Status status;
    FlowInfo info;
    int64_t value = -1;
    int64_t pid = -1;
  };
  Got Take(Session& s) {
    Got g;
    std::vector<Tensor> out;
    g.status = s.FetchData(1, &out, &g.info, 10000);
    if (g.status.ok() && g.info.ret_code == 0 && !out.empty()) {
      const std::vector<int64_t> v = out.at(0).As<int64_t>();
      g.value = v.at(0);
      g.pid = v.at(1);
    }
    return g;
  }

  // Feeds transactions 1..n (value t, user data `user`) at once, fetches
  // n; the host calls they took (and, in `*ring`, the replies read from
  // reply rings; in `*caller`, those of them read by their callers).
  uint64_t FeedAndFetchAll(Session& s, uint64_t n, std::vector<Got>* got,
                           uint64_t* ring = nullptr,
                           const std::vector<uint8_t>& user = {},
                           uint64_t* caller = nullptr) {
    const worker::BatchCounts before = worker::ProcBatchCounts();
    const uint64_t ring_before = worker::RingRepliesRead();
    const uint64_t caller_before = worker::CallerRepliesRead();
    for (uint64_t t = 1; t <= n; ++t) {
      FlowInfo in;
      in.transaction_id = t;
      in.user_data = user;
      Status st = s.FeedData(1, {testing::I64(int64_t(t))}, in, 10000);
      EXPECT_TRUE(st.ok()) << st.ToString();
    }
    for (uint64_t t = 1; t <= n; ++t) got->push_back(Take(s));
    if (ring != nullptr) *ring = worker::RingRepliesRead() - ring_before;
    if (caller != nullptr) {
      *caller = worker::CallerRepliesRead() - caller_before;
    }
    return worker::ProcBatchCounts().calls - before.calls;
  }
};

TEST_P(WorkerIslandTest, TheHostCallsOnlyTheFirstStage) {
  Init();
  Session s;
  Build(s);
  std::vector<Got> got;
  uint64_t ring = 0;
  uint64_t caller = 0;
  const uint64_t guards = worker::RingGuardExpiries();
  EXPECT_EQ(FeedAndFetchAll(s, kCount, &got, &ring, {}, &caller), kCount);
  // Every reply came through the slot's own reply ring, read by the
  // caller, none on the socket or through the supervisor; no wait on it
  // ran out.
  EXPECT_EQ(ring, kCount);
  EXPECT_EQ(caller, kCount);
  EXPECT_EQ(worker::RingGuardExpiries(), guards);
  for (uint64_t t = 1; t <= kCount; ++t) {
    const Got& g = got[t - 1];
    ASSERT_TRUE(g.status.ok()) << g.status.ToString();
    EXPECT_EQ(g.info.transaction_id, t);  // in order
    EXPECT_EQ(g.value, 16 * int64_t(t));
    EXPECT_EQ(g.pid, got[0].pid);  // all four in one worker
  }
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  // Slots' reply rings off: the segment's ring, read by the supervisor.
  setenv("HFLOW_WORKER_SLOT_REPLIES", "0", 1);
  Build(s);
  got.clear();
  EXPECT_EQ(FeedAndFetchAll(s, kCount, &got, &ring, {}, &caller), kCount);
  EXPECT_EQ(ring, kCount);
  EXPECT_EQ(caller, 0u);
  EXPECT_EQ(got.back().value, 16 * int64_t(kCount));
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  unsetenv("HFLOW_WORKER_SLOT_REPLIES");
  // Links off: every stage is the host's call again; the ring off too:
  // every reply on the socket.
  setenv("HFLOW_WORKER_CHAIN", "0", 1);
  setenv("HFLOW_WORKER_RING", "0", 1);
  Build(s);
  got.clear();
  EXPECT_EQ(FeedAndFetchAll(s, kCount, &got, &ring), 4 * kCount);
  EXPECT_EQ(ring, 0u);
  EXPECT_EQ(got.back().value, 16 * int64_t(kCount));
}

// Rings of 256 bytes take a request or two: a holds input 1 at its gate,
// so the other 39 queue in the host and go as batches of 16, most of each
// on the socket, after what the ring holds. Nothing else changes.
TEST_P(WorkerIslandTest, WhatTheRingsCannotTakeGoesOnTheSocketInOrder) {
  setenv("HFLOW_WORKER_RING_BYTES", "256", 1);
  Init();
  Session s;
  const std::string gate = (dir_ / "gate").string();
  Build(s, {}, {}, false, gate);
  const uint64_t before = worker::RingOverflows();
  for (uint64_t t = 1; t <= kCount; ++t) Feed(s, t, int64_t(t));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::ofstream(gate) << "open";
  for (uint64_t t = 1; t <= kCount; ++t) {
    Got g = Take(s);
    ASSERT_TRUE(g.status.ok()) << g.status.ToString();
    EXPECT_EQ(g.info.transaction_id, t);
    EXPECT_EQ(g.value, 16 * int64_t(t));
  }
  EXPECT_GT(worker::RingOverflows() - before, 0u)
      << "every request fit a 256-byte ring";
}

// Rings of 64 bytes take no reply into a slot's ring: every reply goes
// through the supervisor (on the socket, or the segment's ring when it
// fits), which rings the caller waiting on its slot's reply ring. A
// wake-up missed there would show as a wait that ran out (a second).
TEST_P(WorkerIslandTest, RepliesTooLargeForTheRingsWakeTheirCallers) {
  setenv("HFLOW_WORKER_RING_BYTES", "64", 1);
  Init();
  Session s;
  Build(s);
  std::vector<Got> got;
  uint64_t ring = 0;
  uint64_t caller = 0;
  const uint64_t guards = worker::RingGuardExpiries();
  const uint64_t waits = worker::CallerRingWaits();
  EXPECT_EQ(FeedAndFetchAll(s, kCount, &got, &ring, {}, &caller), kCount);
  EXPECT_EQ(caller, 0u);
  EXPECT_GT(worker::CallerRingWaits(), waits)
      << "no caller waited on its slot's reply ring";
  EXPECT_EQ(worker::RingGuardExpiries(), guards);
  for (uint64_t t = 1; t <= kCount; ++t) {
    const Got& g = got[t - 1];
    ASSERT_TRUE(g.status.ok()) << g.status.ToString();
    EXPECT_EQ(g.info.transaction_id, t);
    EXPECT_EQ(g.value, 16 * int64_t(t));
  }
}

// c sees 4t: it fails on transaction 3; a fails on transaction 5.
TEST_P(WorkerIslandTest, AFailureInTheIslandIsItsNodesInOrder) {
  for (const char* chain : {"1", "0"}) {  // the same as the host's
    SCOPED_TRACE(std::string("HFLOW_WORKER_CHAIN=") + chain);
    setenv("HFLOW_WORKER_CHAIN", chain, 1);
    Init();
    Session s;
    Build(s, {{"a", "fail"}, {"c", "fail"}}, {{"a", 5}, {"c", 12}});
    std::vector<Got> got;
    const std::vector<uint8_t> user{7, 8, 9};
    (void)FeedAndFetchAll(s, 8, &got, nullptr, user);
    for (uint64_t t = 1; t <= 8; ++t) {
      SCOPED_TRACE("transaction " + std::to_string(t));
      const Got& g = got[t - 1];
      ASSERT_TRUE(g.status.ok()) << g.status.ToString();
      EXPECT_EQ(g.info.transaction_id, t);
      if (t == 3 || t == 5) {
        EXPECT_EQ(g.info.ret_code, FlowFunc::FLOW_FUNC_FAILED);
        EXPECT_EQ(g.info.error_node, t == 3 ? "c" : "a");
        // An error message inherits no flow info (GraphRunner::EmitError).
        EXPECT_TRUE(g.info.user_data.empty());
      } else {
        EXPECT_EQ(g.info.ret_code, 0);
        EXPECT_EQ(g.value, 16 * int64_t(t));
        EXPECT_EQ(g.info.user_data, user);
      }
    }
    ASSERT_TRUE(s.RemoveGraph(1).ok());
    ASSERT_TRUE(Finalize().ok());
  }
}

// u, before the island on another device, fails on transaction 3: the
// failure enters the island through a's call (Note [Failures into an
// island] in src/worker/worker_chain.cc), in its place among the others,
// and leaves it in order, named after u. The host calls u and a for every
// transaction and nothing else (the executor passing the failure on
// itself would make one call fewer).
TEST_P(WorkerIslandTest, AFailureEnteringTheIslandKeepsItsPlace) {
  Init();
  Session s;
  Build(s, {{"u", "fail"}}, {{"u", 3}}, false, "", /*upstream=*/true);
  std::vector<Got> got;
  EXPECT_EQ(FeedAndFetchAll(s, 8, &got), 16u);
  for (uint64_t t = 1; t <= 8; ++t) {
    SCOPED_TRACE("transaction " + std::to_string(t));
    const Got& g = got[t - 1];
    ASSERT_TRUE(g.status.ok()) << g.status.ToString();
    EXPECT_EQ(g.info.transaction_id, t);
    if (t == 3) {
      EXPECT_EQ(g.info.ret_code, FlowFunc::FLOW_FUNC_FAILED);
      EXPECT_EQ(g.info.error_node, "u");
    } else {
      EXPECT_EQ(g.info.ret_code, 0);
      EXPECT_EQ(g.value, 32 * int64_t(t));
    }
  }
}

// b raises on its input 4 (transaction 2): the exception is b's.
TEST_P(WorkerIslandTest, AnExceptionRaisedInTheIslandIsItsNodes) {
  Init();
  Session s;
  Build(s, {{"b", "raise"}}, {{"b", 4}}, /*exception_catch=*/true);
  std::vector<Got> got;
  (void)FeedAndFetchAll(s, 3, &got);
  ASSERT_TRUE(got[1].status.ok()) << got[1].status.ToString();
  EXPECT_EQ(got[1].info.transaction_id, 2u);
  EXPECT_TRUE(got[1].info.raised_exception);
  EXPECT_EQ(got[1].info.ret_code, 7700123);
  EXPECT_EQ(got[1].info.error_node, "b");
  EXPECT_EQ(got[2].value, 48);
}

// d dies on its input 24 (transaction 3), no restart: 1 and 2 are
// fetched, then the error names d, its transaction and the signal. A feed
// behind transaction 3 may meet the death already (the worker can die
// before the test thread fed them all): it fails with the same error.
TEST_P(WorkerIslandTest, ADeathInALaterStageNamesItAndLosesNothingBefore) {
  Init();
  for (int run = 0; run < 10 && !HasFatalFailure(); ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    Session s;
    Build(s, {{"d", "segv"}}, {{"d", 24}});
    for (uint64_t t = 1; t <= 3; ++t) Feed(s, t, int64_t(t));
    for (uint64_t t = 4; t <= 8; ++t) {
      FlowInfo in;
      in.transaction_id = t;
      Status st = s.FeedData(1, {testing::I64(int64_t(t))}, in, 10000);
      if (!st.ok()) {
        EXPECT_THAT(st.message(), HasSubstr("SIGSEGV")) << "feed " << t;
      }
    }
    for (uint64_t t = 1; t <= 2; ++t) {
      Got g = Take(s);
      ASSERT_TRUE(g.status.ok()) << g.status.ToString();
      EXPECT_EQ(g.info.transaction_id, t);
      EXPECT_EQ(g.value, 16 * int64_t(t));
    }
    Got lost = Take(s);
    ASSERT_FALSE(lost.status.ok());
    EXPECT_THAT(lost.status.message(), HasSubstr("SIGSEGV"));
    EXPECT_THAT(lost.status.message(),
                HasSubstr("node 'd' (replica 0) in Proc of transaction 3"));
    ASSERT_TRUE(s.RemoveGraph(1).ok());
  }
}

// c dies once (transaction 2), with restarts: 2 is lost and said so, and
// the chain runs on in the new worker, whole: a, loading itself there,
// loads b, c and d too (Note [A restarted island loads whole] in
// src/worker/remote_restart.cc), so the host calls only a, and the
// transactions fed at once behind the crash come out in order.
TEST_P(WorkerIslandTest, ARestartedIslandRunsOn) {
  Init(RestartPolicy::kRestart);
  Session s;
  Build(s, {{"c", "segv"}}, {{"c", 8}});
  int64_t old_pid = -1;
  for (uint64_t t = 1; t <= 2; ++t) {
    SCOPED_TRACE("transaction " + std::to_string(t));
    Feed(s, t, int64_t(t));
    Got g = Take(s);
    ASSERT_TRUE(g.status.ok()) << g.status.ToString();
    EXPECT_EQ(g.info.transaction_id, t);
    if (t == 1) old_pid = g.pid;
    if (t == 2) {
      EXPECT_EQ(g.info.ret_code, FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING);
    }
  }
  const worker::BatchCounts before = worker::ProcBatchCounts();
  for (uint64_t t = 3; t <= 12; ++t) Feed(s, t, int64_t(t));
  for (uint64_t t = 3; t <= 12; ++t) {
    SCOPED_TRACE("transaction " + std::to_string(t));
    Got g = Take(s);
    ASSERT_TRUE(g.status.ok()) << g.status.ToString();
    EXPECT_EQ(g.info.transaction_id, t);  // in order
    ASSERT_EQ(g.info.ret_code, 0);
    EXPECT_EQ(g.value, 16 * int64_t(t));
    EXPECT_NE(g.pid, old_pid);
  }
  // One host call a transaction: a's (b, c, d chained from the first).
  EXPECT_EQ(worker::ProcBatchCounts().calls - before.calls, 10u);
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerIslandTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
