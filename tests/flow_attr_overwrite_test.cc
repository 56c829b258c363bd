// Flow attributes end to end (hflow/graph.h FlowAttr): a slow consumer
// behind an OVERWRITE edge of depth 2 sees only the newest messages while
// its producer never waits, on device sets with and without device 0.
// Two paths reach an OVERWRITE queue: the host feed (a graph input's
// FlowData attr; the feed's "whole transaction" wait must find room at
// once) and a pool thread of the executor (a node input's attr; the
// producer stage must not be held back as it is by a full FIFO queue).
//
// The consumer blocks in Proc on a gate the test opens, so what is queued
// when it resumes is known exactly: message 1 is in Proc, the rest were
// offered to a queue of 2.
//
// Thread-safety: the UDFs' state is guarded by a mutex or atomic; every
// wait is bounded.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using std::chrono::milliseconds;

constexpr int32_t kTimeoutMs = 5000;
constexpr int kMessages = 20;

struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int entered = 0;
  bool open = false;
};
Gate g_gate;
std::atomic<int> g_passed{0};  // FlowAttrTest_Pass Procs that emitted

// Announces itself, waits (at most kTimeoutMs) for the gate, passes on.
class GateFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    std::unique_lock<std::mutex> lock(g_gate.mu);
    ++g_gate.entered;
    g_gate.cv.notify_all();
    g_gate.cv.wait_for(lock, milliseconds(kTimeoutMs),
                       [] { return g_gate.open; });
    lock.unlock();
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("FlowAttrTest_Gate", GateFunc);

// Passes on, then counts (so a count means the message is queued on).
class PassFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    int32_t rc = context_->SetOutput(0, in[0]);
    g_passed.fetch_add(1);
    return rc;
  }
};
REGISTER_FLOW_FUNC("FlowAttrTest_Pass", PassFunc);

void OpenGate(bool open) {
  std::lock_guard<std::mutex> lock(g_gate.mu);
  g_gate.open = open;
  g_gate.cv.notify_all();
}

bool WaitEntered(int n) {
  std::unique_lock<std::mutex> lock(g_gate.mu);
  return g_gate.cv.wait_for(lock, milliseconds(kTimeoutMs),
                            [&] { return g_gate.entered >= n; });
}

const FlowAttr kOverwrite2{2, EnqueuePolicy::kOverwrite};

class FlowAttrOverwriteTest
    : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    (void)Finalize();
    {
      std::lock_guard<std::mutex> lock(g_gate.mu);
      g_gate.entered = 0;
      g_gate.open = false;
    }
    g_passed = 0;
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.exec_threads = 4;  // the gate holds one
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  void TearDown() override {
    OpenGate(true);
    (void)Finalize();
  }

  // Feeds message 1, waits until the gate holds it, then feeds 2..N, each
  // with timeout 0: a FIFO queue of depth 2 would refuse the fourth.
  void FeedWhileGateHolds(Session& s) {
    ASSERT_TRUE(s.FeedData(1, {testing::I64(1)}, FlowInfo{}, kTimeoutMs).ok());
    ASSERT_TRUE(WaitEntered(1));
    for (int i = 2; i <= kMessages; ++i) {
      Status st = s.FeedData(1, {testing::I64(i)}, FlowInfo{}, 0);
      ASSERT_TRUE(st.ok()) << "feed " << i << " waited: " << st.ToString();
    }
  }

  // After the gate opens: message 1, then only the newest two.
  void ExpectOnlyTheNewest(Session& s) {
    OpenGate(true);
    for (int64_t want :
         {int64_t(1), int64_t(kMessages - 1), int64_t(kMessages)}) {
      std::vector<Tensor> out;
      FlowInfo info;
      Status st = s.FetchData(1, &out, &info, kTimeoutMs);
      ASSERT_TRUE(st.ok()) << want << ": " << st.ToString();
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].As<int64_t>(), std::vector<int64_t>{want});
    }
    std::vector<Tensor> out;
    FlowInfo info;
    EXPECT_EQ(s.FetchData(1, &out, &info, 0).code(), StatusCode::kTimeout)
        << "a dropped message came out";
  }

  testing::Watchdog watchdog_{std::chrono::seconds(60), "flow_attr_test"};
};

// x [OVERWRITE, depth 2] ── gate@last ── out
TEST_P(FlowAttrOverwriteTest, FedEdgeKeepsTheNewestAndTheFeedNeverWaits) {
  const std::vector<int32_t>& devices = GetParam();
  FlowData x("x", 0);
  x.SetFlowAttr(kOverwrite2);
  FlowNode gate = testing::FuncNode("gate", "FlowAttrTest_Gate");
  gate.SetInput(0, x);
  FlowGraph g("overwrite_feed");
  g.SetInputs({x}).SetOutputs({gate});
  testing::Place(g, {{"gate", {devices.back()}}});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, g).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  FeedWhileGateHolds(s);
  // Message 1 is in Proc and the queue keeps 2: the other 17 were dropped,
  // all on the gate's device (hflow run --stats shows the same count).
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
  for (const DeviceReport& r : reports) {
    EXPECT_EQ(r.dropped_msgs,
              r.id == devices.back() ? uint64_t{kMessages - 3} : 0u)
        << "device " << r.id;
  }
  ExpectOnlyTheNewest(s);
}

// x ── pass@first ──[OVERWRITE, depth 2]── gate@last ── out
TEST_P(FlowAttrOverwriteTest, NodeEdgeKeepsTheNewestAndTheProducerRuns) {
  const std::vector<int32_t>& devices = GetParam();
  FlowData x("x", 0);
  FlowNode pass = testing::FuncNode("pass", "FlowAttrTest_Pass");
  FlowNode gate = testing::FuncNode("gate", "FlowAttrTest_Gate");
  pass.SetInput(0, x);
  gate.SetInput(0, pass).SetInputFlowAttr(0, kOverwrite2);
  FlowGraph g("overwrite_edge");
  g.SetInputs({x}).SetOutputs({gate});
  testing::Place(g, {{"pass", {devices.front()}}, {"gate", {devices.back()}}});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, g).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  FeedWhileGateHolds(s);
  // The producer stage ran every message although its output queue was
  // full (a FIFO edge would hold it at depth + 1).
  EXPECT_TRUE(testing::WaitFor([] { return g_passed.load() == kMessages; },
                               milliseconds(kTimeoutMs)))
      << g_passed.load() << " of " << kMessages << " passed";
  ExpectOnlyTheNewest(s);
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, FlowAttrOverwriteTest,
                         ::testing::Values(std::vector<int32_t>{0, 1},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
