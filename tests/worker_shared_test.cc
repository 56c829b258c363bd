// Shared workers: under Options::udf_isolation the isolated instances of
// one device run in one hflow-worker (each on a thread of its own there),
// while an instance of a heavy_load node keeps a worker of its own. A
// death in a shared worker names its nodes and the call each was in, and
// is that worker's only: every member comes back in the new worker
// (RestartPolicy::kRestart, or ResetGraph), and only the transaction in
// flight is lost. On device sets with and without device 0.
//
// Thread-safety: each test drives its session from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::Alive;
using ::hflow::testing::FuncNode;
using ::hflow::testing::Gone;
using ::hflow::testing::I64;
using ::hflow::testing::Place;
using ::testing::HasSubstr;

constexpr int32_t kIoMs = 10000;

// A Fragile node (tests/worker_udfs/fragile.cpp) in `mode` on input `at`
// (once across its workers and nodes sharing `once_file`, when given).
FlowNode Frag(const std::string& name, const std::string& config,
              const std::string& mode = "pass", int64_t at = 0,
              const std::string& once_file = "") {
  FunctionPp pp(name + "_pp");
  pp.SetCompileConfig(config);
  pp.SetInitParam("mode", mode);
  pp.SetInitParam("at", at);
  if (!once_file.empty()) pp.SetInitParam("once_file", once_file);
  FlowNode n(name, 1, 1);
  n.AddPp(pp);
  return n;
}

class WorkerSharedTest : public testing::WorkerTest {
 protected:
  void Init(RestartPolicy policy = RestartPolicy::kNever) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.udf_isolation = true;
    o.restart_policy = policy;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  int32_t Device() const { return GetParam().back(); }
  std::string Light() { return testing::FragileConfig(dir_, false); }
  std::string Heavy() { return testing::FragileConfig(dir_, true); }

  //        ┌── a ──┐
  //   x ── id ─ b ──┼─ out: [a, b, c], all three on Device()
  //        └── c ──┘  (c heavy_load)
  FlowGraph Fan() {
    FlowData x("x", 0);
    FlowNode id = FuncNode("id", "_BuiltIn_Identity");
    id.SetInput(0, x);
    FlowNode a = Frag("a", Light());
    FlowNode b = Frag("b", Light());
    FlowNode c = Frag("c", Heavy());
    a.SetInput(0, id, 0);
    b.SetInput(0, id, 0);
    c.SetInput(0, id, 0);
    FlowGraph g("fan");
    g.SetInputs({x}).SetOutputs({a, b, c});
    return Place(g, {{"id", {GetParam().front()}},
                     {"a", {Device()}},
                     {"b", {Device()}},
                     {"c", {Device()}}});
  }

  // x ── id ── a ── b ── out, a and b on Device(); b faults in `mode` on
  // its input `at` (a doubles: b sees 2x; a forwards its input message
  // itself in `a_mode` "forward").
  FlowGraph Chain(const std::string& mode, int64_t at,
                  const std::string& a_mode = "pass") {
    FlowData x("x", 0);
    FlowNode id = FuncNode("id", "_BuiltIn_Identity");
    id.SetInput(0, x);
    FlowNode a = Frag("a", Light(), a_mode);
    FlowNode b = Frag("b", Light(), mode, at);
    a.SetInput(0, id, 0);
    b.SetInput(0, a, 0);
    FlowGraph g("chain");
    g.SetInputs({x}).SetOutputs({b});
    return Place(
        g,
        {{"id", {GetParam().front()}}, {"a", {Device()}}, {"b", {Device()}}});
  }

  void Build(Session& s, const FlowGraph& g) {
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  struct Result {
    Status status;
    int32_t ret_code = 0;
    std::vector<std::vector<int64_t>> out;  // per output: [value, pid]
  };
  Result RoundTrip(Session& s, uint64_t trans, int64_t v) {
    Result r;
    Feed(s, trans, v);
    std::vector<Tensor> out;
    FlowInfo info;
    r.status = s.FetchData(1, &out, &info, kIoMs);
    r.ret_code = info.ret_code;
    for (const Tensor& t : out) r.out.push_back(t.As<int64_t>());
    return r;
  }
};

TEST_P(WorkerSharedTest, IsolatedNodesOfADeviceShareOneWorker) {
  Init();
  Session s;
  Build(s, Fan());
  int64_t shared = -1;
  int64_t own = -1;
  for (uint64_t t = 1; t <= 3; ++t) {
    Result r = RoundTrip(s, t, int64_t(10 * t));
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    ASSERT_EQ(r.ret_code, 0);
    ASSERT_EQ(r.out.size(), 3u);
    for (const auto& o : r.out) EXPECT_EQ(o.at(0), int64_t(20 * t));
    EXPECT_EQ(r.out[0][1], r.out[1][1]) << "a and b: one worker";
    EXPECT_NE(r.out[0][1], r.out[2][1]) << "c (heavy_load): its own";
    EXPECT_NE(r.out[0][1], int64_t(getpid()));
    EXPECT_NE(r.out[2][1], int64_t(getpid()));
    if (t > 1) {
      EXPECT_EQ(r.out[0][1], shared);
      EXPECT_EQ(r.out[2][1], own);
    }
    shared = r.out[0][1];
    own = r.out[2][1];
  }
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  EXPECT_TRUE(Gone(shared));
  EXPECT_TRUE(Gone(own));
}

TEST_P(WorkerSharedTest, AChainRunsThroughOneWorker) {
  Init();
  Session s;
  Build(s, Chain("pass", 0));
  for (uint64_t t = 1; t <= 20; ++t) {
    Result r = RoundTrip(s, t, int64_t(t));
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    ASSERT_EQ(r.out.size(), 1u);
    EXPECT_EQ(r.out[0].at(0), int64_t(4 * t));
  }
}

// a and b both send their input message itself on, many in flight: a
// host block lent to a, passed to b and lent again, is found by each
// output report whatever order the two slots' replies come in (Note
// [Releases per slot] in worker_data.cc).
TEST_P(WorkerSharedTest, AMessagePassedOnThroughTheWorkerKeepsItsBlock) {
  Init();
  Session s;
  Build(s, Chain("forward", 0, "forward"));
  constexpr int kMessages = 400;
  constexpr int kWindow = 16;
  int fed = 0;
  std::vector<bool> seen(kMessages + 1, false);
  for (int got = 0; got < kMessages; ++got) {
    for (; fed < kMessages && fed - got < kWindow; ++fed) {
      FlowInfo in;
      in.transaction_id = uint64_t(fed + 1);
      Status st = s.FeedData(1, {I64(fed + 1)}, in, kIoMs);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, kIoMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(info.ret_code, 0) << "transaction " << info.transaction_id;
    ASSERT_EQ(out.size(), 1u);
    const int64_t v = out[0].As<int64_t>().at(0);
    ASSERT_EQ(uint64_t(v), info.transaction_id);
    ASSERT_FALSE(seen.at(size_t(v))) << "twice: " << v;
    seen[size_t(v)] = true;
  }
}

// x ── frag (a replica on every device) ── a (on Device()) ── out: a and
// frag's replica on Device() share that device's worker; every
// transaction arrives once.
TEST_P(WorkerSharedTest, ReplicasInSharedWorkersDeliverEachTransactionOnce) {
  Init();
  FlowData x("x", 0);
  FlowNode frag = Frag("frag", Light());
  FlowNode a = Frag("a", Light(), "forward");
  frag.SetInput(0, x);
  a.SetInput(0, frag, 0);
  FlowGraph g("replicas");
  g.SetInputs({x}).SetOutputs({a});
  Session s;
  Build(s, Place(g, {{"frag", GetParam()}, {"a", {Device()}}}));
  constexpr int64_t kN = 150;
  std::thread feeder([&] {
    for (int64_t v = 1; v <= kN; ++v) {
      FlowInfo in;
      in.transaction_id = uint64_t(v);
      EXPECT_TRUE(s.FeedData(1, {I64(v)}, in, kIoMs).ok());
    }
  });
  std::map<uint64_t, int> seen;
  std::set<int64_t> pids;
  for (int64_t i = 0; i < kN; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, kIoMs);
    if (!st.ok()) {
      ADD_FAILURE() << st.ToString();
      break;
    }
    const std::vector<int64_t> r = out.at(0).As<int64_t>();
    EXPECT_EQ(r.at(0), 2 * int64_t(info.transaction_id));
    ++seen[info.transaction_id];
    pids.insert(r.at(1));
  }
  feeder.join();
  EXPECT_EQ(seen.size(), size_t(kN));
  for (const auto& [t, n] : seen) EXPECT_EQ(n, 1) << "transaction " << t;
  // frag's pids (a forwards frag's message): one worker per device.
  EXPECT_EQ(pids.size(), GetParam().size());
  EXPECT_EQ(pids.count(int64_t(getpid())), 0u);
}

// b dies in Proc of transaction 2: the graph fails naming the shared
// worker's nodes and b's call; the session builds the next graph.
TEST_P(WorkerSharedTest, ADeathNamesTheWorkersNodesAndTheCall) {
  Init();
  Session s;
  Build(s, Chain("segv", 4));
  Result ok = RoundTrip(s, 1, 1);
  ASSERT_TRUE(ok.status.ok()) << ok.status.ToString();
  const int64_t pid = ok.out.at(0).at(1);
  Result r = RoundTrip(s, 2, 2);
  ASSERT_FALSE(r.status.ok());
  const Status& why = r.status;
  const std::string dev = "on device " + std::to_string(Device());
  EXPECT_THAT(why.message(),
              HasSubstr("nodes 'a' (replica 0), 'b' (replica 0) " + dev));
  EXPECT_THAT(why.message(), HasSubstr("SIGSEGV"));
  EXPECT_THAT(why.message(),
              HasSubstr("node 'b' (replica 0) in Proc of transaction 2"));
  EXPECT_TRUE(Gone(pid));
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  Build(s, Chain("pass", 0));
  Result again = RoundTrip(s, 3, 3);
  ASSERT_TRUE(again.status.ok()) << again.status.ToString();
  EXPECT_EQ(again.out.at(0).at(0), 12);
}

// Under kRestart both members come back in one new worker: transaction 2
// is lost (FLOW_FUNC_STATUS_REDEPLOYING), 3 and 4 run through a and b in
// the new process.
TEST_P(WorkerSharedTest, ARestartBringsBackEveryMember) {
  Init(RestartPolicy::kRestart);
  Session s;
  Build(s, Chain("segv", 4));
  Result first = RoundTrip(s, 1, 1);
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  const int64_t old_pid = first.out.at(0).at(1);
  Result lost = RoundTrip(s, 2, 2);
  ASSERT_TRUE(lost.status.ok()) << lost.status.ToString();
  EXPECT_EQ(lost.ret_code, FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING);
  EXPECT_TRUE(Gone(old_pid));
  for (uint64_t t = 3; t <= 4; ++t) {
    Result r = RoundTrip(s, t, int64_t(t));
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    ASSERT_EQ(r.ret_code, 0);
    EXPECT_EQ(r.out.at(0).at(0), int64_t(4 * t));
    EXPECT_NE(r.out.at(0).at(1), old_pid);
    EXPECT_TRUE(Alive(r.out.at(0).at(1)));
  }
}

// a and b crash on the same input, once between them (one flag file):
// one death, whoever dies first, with the other in Proc then or not. With
// one restart allowed, that death takes it, and whichever member reaches
// the dead worker first, the transaction comes back as lost (564003), not
// as a failure, and the graph runs on in one new worker.
TEST_P(WorkerSharedTest, OneDeathTakesOneRestartForEveryMember) {
  Options o;
  o.cluster = MakeLocalCluster(GetParam());
  o.udf_isolation = true;
  o.restart_policy = RestartPolicy::kRestart;
  o.max_worker_restarts = 1;
  ASSERT_TRUE(Initialize(o).ok());
  FlowData x("x", 0);
  FlowNode id = FuncNode("id", "_BuiltIn_Identity");
  id.SetInput(0, x);
  FlowNode a = Frag("a", Light(), "segv", 3, (dir_ / "once").string());
  FlowNode b = Frag("b", Light(), "segv", 3, (dir_ / "once").string());
  a.SetInput(0, id, 0);
  b.SetInput(0, id, 0);
  FlowGraph g("both");
  g.SetInputs({x}).SetOutputs({a, b});
  Session s;
  Build(s, Place(g, {{"id", {GetParam().front()}},
                     {"a", {Device()}},
                     {"b", {Device()}}}));
  Result ok = RoundTrip(s, 1, 1);
  ASSERT_TRUE(ok.status.ok()) << ok.status.ToString();
  const int64_t old_pid = ok.out.at(0).at(1);
  Result lost = RoundTrip(s, 2, 3);
  ASSERT_TRUE(lost.status.ok()) << lost.status.ToString();
  EXPECT_EQ(lost.ret_code, FlowFunc::FLOW_FUNC_STATUS_REDEPLOYING);
  EXPECT_TRUE(Gone(old_pid));
  Result again = RoundTrip(s, 3, 4);
  ASSERT_TRUE(again.status.ok()) << again.status.ToString();
  ASSERT_EQ(again.ret_code, 0);
  ASSERT_EQ(again.out.size(), 2u);
  EXPECT_EQ(again.out[0].at(0), 8);
  EXPECT_EQ(again.out[1].at(0), 8);
  EXPECT_EQ(again.out[0].at(1), again.out[1].at(1));
  EXPECT_NE(again.out[0].at(1), old_pid);
}

// Under kNever a failed graph comes back with ResetGraph: a new worker,
// both members loaded into it.
TEST_P(WorkerSharedTest, ResetGraphBringsBackEveryMember) {
  Init();
  Session s;
  Build(s, Chain("segv", 4));
  ASSERT_TRUE(RoundTrip(s, 1, 1).status.ok());
  Result dead = RoundTrip(s, 2, 2);
  ASSERT_FALSE(dead.status.ok());
  Status reset = s.ResetGraph(1);
  ASSERT_TRUE(reset.ok()) << reset.ToString();
  Result r = RoundTrip(s, 3, 3);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  ASSERT_EQ(r.ret_code, 0);
  EXPECT_EQ(r.out.at(0).at(0), 12);
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerSharedTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
