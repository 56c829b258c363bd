// Focused regressions for the bugs the fault sweep (fault_sweep_test.cc)
// and the device-loss tests found. Each injects one fault where the bug
// was and checks the repaired behaviour:
//   - a stage whose input dequeue fails went quiet: the fetcher waited out
//     its timeout (now the graph fails and the fetch returns the error);
//   - an output that reached one input of add(c, c) but not the other
//     paired every later transaction wrongly and stalled the graph;
//   - a failure message that could not be allocated was dropped silently;
//   - a memory group whose cache Free failed forgot the cache: its device
//     memory leaked for the life of the process;
//   - a failed ResetDevice in rt::DeviceContexts leaked the default context;
//   - a fetch that failed reading its outputs had already taken them: the
//     transaction was gone without a trace;
//   - a feed whose second input failed to go in left its first input in
//     the graph, pairing later transactions wrongly (now a copy that fails
//     leaves nothing in, and an enqueue that fails part way fails the
//     graph).
//
// Thread-safety: single test thread; hflow's threads are its own.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "rt/device_binding.h"
#include "rt/sim/sim_runtime.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::ChainGraph;
using ::hflow::testing::DoublingChain;
using ::hflow::testing::Place;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int32_t kTimeoutMs = 5000;
constexpr milliseconds kPrompt{2000};

class AlwaysFails : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>&) override {
    return 7;
  }
};
REGISTER_FLOW_FUNC("FaultRegression_Fails", AlwaysFails);

//   x ── a@2 ── b@3 ── c@4 ── add(c, c)@5 ── out   (a may be `first_func`)
FlowGraph Chain(const std::string& first_func = "_BuiltIn_Identity") {
  return DoublingChain("regression_chain", first_func);
}

using ::hflow::testing::I64;

class FaultRegressionTest : public ::testing::Test {
 protected:
  void SetUp() override { Init(/*handoff=*/true); }
  void Init(bool handoff) {
    (void)Finalize();
    Options o;
    o.cluster = MakeLocalCluster({2, 3, 4, 5});
    o.exec_handoff = handoff;
    ASSERT_TRUE(Initialize(o).ok());
    sim_ = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  }
  void TearDown() override { (void)Finalize(); }

  void Build(Session& s, const FlowGraph& g) {
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Fetches until an error (skipping outputs that carry a ret code):
  // it must come promptly and must not be a timeout.
  void ExpectPromptError(Session& s, StatusCode want,
                         const std::vector<Tensor>& feed = {I64(1)}) {
    auto t0 = Clock::now();
    Status st;
    for (int i = 0; i < 4; ++i) {
      std::vector<Tensor> out;
      FlowInfo info;
      st = s.FetchData(1, &out, &info, kTimeoutMs);
      if (!st.ok()) break;
    }
    EXPECT_EQ(st.code(), want) << st.ToString();
    EXPECT_LT(Clock::now() - t0, kPrompt)
        << "the failure was not reported; the fetch waited: " << st.ToString();
    // The graph stays failed: a feed says so too.
    st = s.FeedData(1, feed, FlowInfo{}, kTimeoutMs);
    EXPECT_EQ(st.code(), want) << st.ToString();
  }

  // Waits (2 s at most) until the sim has seen `n` calls of `op`.
  void WaitForCalls(rt::Op op, uint64_t n) {
    auto t0 = Clock::now();
    while (sim_->CallCount(op) < n && Clock::now() - t0 < kPrompt) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    ASSERT_GE(sim_->CallCount(op), n);
  }

  void ExpectNothingLeft() {
    testing::SimHoldings left = testing::Holdings(*sim_);
    EXPECT_TRUE(left.empty()) << "the sim still holds " << left.ToString();
  }

  void CheckHalfDeliveredOutputFailsTheGraph(bool handoff);

  rt::SimRuntime* sim_ = nullptr;
};

TEST_F(FaultRegressionTest, FailedInputDequeueFailsTheGraphInsteadOfStalling) {
  Session s;
  Build(s, Chain());
  // The first dequeue after the feed is stage a's; the fetch waits for it.
  sim_->ResetCallCounts();
  sim_->InjectFault(rt::Op::kQueueDequeue, 1,
                    Status::Internal("dequeue broke"));
  ASSERT_TRUE(s.FeedData(1, {I64(3)}, FlowInfo{}, kTimeoutMs).ok());
  WaitForCalls(rt::Op::kQueueDequeue, 1);
  ExpectPromptError(s, StatusCode::kInternal);
  EXPECT_TRUE(s.RemoveGraph(1).ok());
  ASSERT_TRUE(Finalize().ok());
  ExpectNothingLeft();
}

TEST_F(FaultRegressionTest, OutputReachingOnlyOneConsumerInputFailsTheGraph) {
  for (bool handoff : {false, true}) {
    SCOPED_TRACE(handoff ? "hand-off" : "queued");
    Init(handoff);
    CheckHalfDeliveredOutputFailsTheGraph(handoff);
  }
}

void FaultRegressionTest::CheckHalfDeliveredOutputFailsTheGraph(bool handoff) {
  Session s;
  Build(s, Chain());
  // Enqueues of one message: x->a, a->b, b->c, c->add.in0, c->add.in1 (a->b
  // and b->c are handed on without a queue when hand-off is on): the last
  // fails after the one before went through.
  const uint64_t nth = handoff ? 3 : 5;
  sim_->ResetCallCounts();
  sim_->InjectFault(rt::Op::kQueueEnqueue, nth,
                    Status::Internal("enqueue broke"));
  ASSERT_TRUE(s.FeedData(1, {I64(3)}, FlowInfo{}, kTimeoutMs).ok());
  WaitForCalls(rt::Op::kQueueEnqueue, nth);
  // Later transactions must not wait behind a half-delivered one.
  (void)s.FeedData(1, {I64(4)}, FlowInfo{}, kTimeoutMs);
  ExpectPromptError(s, StatusCode::kInternal);
  EXPECT_TRUE(s.RemoveGraph(1).ok());
  ASSERT_TRUE(Finalize().ok());
  ExpectNothingLeft();
}

// Passes its input on once g_release is set (at most 2 s later): its node
// makes no driver call while a test's fault waits for the feeder's calls.
std::atomic<bool> g_release{false};
class WaitForRelease : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    auto t0 = Clock::now();
    while (!g_release.load() && Clock::now() - t0 < milliseconds(2000)) {
      std::this_thread::sleep_for(milliseconds(1));
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("FaultRegression_WaitForRelease", WaitForRelease);

//   x0 ── p@2 ── out0   (p waits for g_release)
//   x1 ── q@3 ── out1
FlowGraph TwoInputs() {
  FlowData x0("x0", 0), x1("x1", 1);
  FunctionPp wait_pp("wait_pp"), id_pp("id_pp");
  wait_pp.SetFunction("FaultRegression_WaitForRelease");
  id_pp.SetFunction("_BuiltIn_Identity");
  FlowNode p("p", 1, 1), q("q", 1, 1);
  p.SetInput(0, x0).AddPp(wait_pp);
  q.SetInput(0, x1).AddPp(id_pp);
  FlowGraph g("two_inputs");
  g.SetInputs({x0, x1}).SetOutputs({p, q});
  return Place(g, {{"p", {2}}, {"q", {3}}});
}

TEST_F(FaultRegressionTest, FeedThatWentInPartWayFailsTheGraph) {
  Session s;
  Build(s, TwoInputs());
  // The feed's enqueues: x0 into p's queue, then x1 into q's, which fails.
  // p holds x0 meanwhile, so no other enqueue comes between.
  g_release = false;
  sim_->ResetCallCounts();
  sim_->InjectFault(rt::Op::kQueueEnqueue, 2,
                    Status::Internal("enqueue broke"));
  Status st = s.FeedData(1, {I64(1), I64(2)}, FlowInfo{}, kTimeoutMs);
  g_release = true;
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
  EXPECT_NE(st.ToString().find("part way"), std::string::npos) << st.ToString();
  // Not a stray x0 waiting for a partner that never comes: the graph
  // reports the failure.
  ExpectPromptError(s, StatusCode::kInternal, {I64(3), I64(4)});
  EXPECT_TRUE(s.RemoveGraph(1).ok());
  ASSERT_TRUE(Finalize().ok());
  ExpectNothingLeft();
}

//   x ─┬─ a@2 ── out0
//      └─ b@3 ── out1
FlowGraph FanOut() {
  FlowData x("x", 0);
  FunctionPp id_pp("id_pp");
  id_pp.SetFunction("_BuiltIn_Identity");
  FlowNode a("a", 1, 1), b("b", 1, 1);
  a.SetInput(0, x).AddPp(id_pp);
  b.SetInput(0, x).AddPp(id_pp);
  FlowGraph g("fan_out");
  g.SetInputs({x}).SetOutputs({a, b});
  return Place(g, {{"a", {2}}, {"b", {3}}});
}

// The copy for the second consumer is made before anything goes in: when
// it fails, the feed reports it, nothing is left in a's queue, and the
// graph goes on.
TEST_F(FaultRegressionTest, FeedWhoseCopyFailsPutsNothingIn) {
  Session s;
  Build(s, FanOut());
  // The feed's copies: x into device 2, then device 2 -> 3 for b.
  sim_->InjectFault(rt::Op::kMemcpy, 2, Status::Internal("copy broke"));
  Status st = s.FeedData(1, {I64(1)}, FlowInfo{}, kTimeoutMs);
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
  ASSERT_TRUE(s.FeedData(1, {I64(2)}, FlowInfo{}, kTimeoutMs).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  st = s.FetchData(1, &out, &info, kTimeoutMs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].As<int64_t>().at(0), 2)
      << "a stray input of the failed feed";
  EXPECT_EQ(out[1].As<int64_t>().at(0), 2);
  st = s.FetchData(1, &out, &info, 50);
  EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  EXPECT_TRUE(s.RemoveGraph(1).ok());
  ASSERT_TRUE(Finalize().ok());
  ExpectNothingLeft();
}

TEST_F(FaultRegressionTest, FailureMessageThatCannotBeAllocatedFailsTheGraph) {
  Session s;
  Build(s, Chain("FaultRegression_Fails"));
  // MbufAlloc calls: the feed's input, then a's failure message.
  sim_->InjectFault(rt::Op::kMbufAlloc, 2, Status::OutOfMemory("no memory"));
  ASSERT_TRUE(s.FeedData(1, {I64(3)}, FlowInfo{}, kTimeoutMs).ok());
  ExpectPromptError(s, StatusCode::kOutOfMemory);
  EXPECT_TRUE(s.RemoveGraph(1).ok());
  ASSERT_TRUE(Finalize().ok());
  ExpectNothingLeft();
}

TEST_F(FaultRegressionTest, CacheWhoseFreeFailedIsFreedAtShutdown) {
  {
    Session s;
    Build(s, Chain());
    ASSERT_TRUE(s.FeedData(1, {I64(3)}, FlowInfo{}, kTimeoutMs).ok());
    std::vector<Tensor> out;
    FlowInfo info;
    ASSERT_TRUE(s.FetchData(1, &out, &info, kTimeoutMs).ok());
    sim_->InjectFault(rt::Op::kFree, 1, Status::Internal("free broke"));
    Status st = s.RemoveGraph(1);
    EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
  }
  (void)Finalize();
  ExpectNothingLeft();
}

TEST_F(FaultRegressionTest, FetchThatCannotReadItsOutputsPutsThemBack) {
  // x ── id@2 ── out: no copy between devices, so after the feed the only
  // Memcpy is the fetch reading the output.
  FlowGraph g = ChainGraph("one_stage", {{"id", "_BuiltIn_Identity", {2}}});
  Session s;
  Build(s, g);
  ASSERT_TRUE(s.FeedData(1, {I64(41)}, FlowInfo{}, kTimeoutMs).ok());
  sim_->InjectFault(rt::Op::kMemcpy, 1, Status::Internal("copy broke"));
  std::vector<Tensor> out;
  FlowInfo info;
  Status st = s.FetchData(1, &out, &info, kTimeoutMs);
  EXPECT_EQ(st.code(), StatusCode::kInternal) << st.ToString();
  st = s.FetchData(1, &out, &info, kTimeoutMs);
  ASSERT_TRUE(st.ok()) << "the transaction was lost: " << st.ToString();
  EXPECT_EQ(out.at(0).As<int64_t>(), std::vector<int64_t>{41});
  EXPECT_EQ(info.transaction_id, 1u);
  EXPECT_TRUE(s.RemoveGraph(1).ok());
  ASSERT_TRUE(Finalize().ok());
  ExpectNothingLeft();
}

TEST_F(FaultRegressionTest, FailedResetDeviceDoesNotLeakTheDefaultContext) {
  {
    rt::DeviceContexts contexts(sim_);
    rt::Context* ctx = nullptr;
    ASSERT_TRUE(contexts.Get(3, &ctx).ok());
    sim_->InjectFault(rt::Op::kResetDevice, 1, Status::Internal("reset broke"));
  }
  rt::DeviceStats st;
  ASSERT_TRUE(sim_->GetDeviceStats(3, &st).ok());
  EXPECT_EQ(st.contexts_alive, 0u);
  EXPECT_EQ(st.default_context_refs, 0);
}

}  // namespace
}  // namespace hflow
