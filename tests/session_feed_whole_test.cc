// A transaction goes into the graph whole or not at all (Note [A
// transaction goes in whole] in session/graph_state.cc). With one input's
// queue full, a feed times out without putting the other input in, so the
// caller can feed the transaction again and every later fetch still pairs
// the outputs of one transaction. On device sets with and without device 0.
//
//   x0 ─[_BuiltIn_Identity @d0]─ out0
//   x1 ─[HoldGate @d1]────────── out1   (holds the pool until opened)
//
// Queue depth 2: with the gate shut, the gate node holds transaction 1 in
// its Proc, its queue takes 2 and 3, and transaction 4 finds it full while
// the identity's queue still has room.
//
// Thread-safety: the gate is a mutex and condition variable; every wait is
// bounded, so a failing test never hangs.
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
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

struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  int arrived = 0;
} g_gate;

class HoldGate : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    {
      std::unique_lock<std::mutex> l(g_gate.mu);
      ++g_gate.arrived;
      g_gate.cv.notify_all();
      g_gate.cv.wait_for(l, std::chrono::seconds(5),
                         [] { return g_gate.open; });
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("FeedWholeTest_HoldGate", HoldGate);

FlowGraph TwoBranches(const std::vector<int>& devices) {
  FlowData x0("x0", 0), x1("x1", 1);
  FlowNode id = testing::FuncNode("id", "_BuiltIn_Identity");
  FlowNode gate = testing::FuncNode("gate", "FeedWholeTest_HoldGate");
  id.SetInput(0, x0);
  gate.SetInput(0, x1);
  FlowGraph g("feed_whole");
  g.SetInputs({x0, x1}).SetOutputs({id, gate});
  return testing::Place(
      g, {{"id", {devices[0]}}, {"gate", {devices[1 % devices.size()]}}});
}

std::vector<Tensor> Transaction(int32_t i) {
  return {Tensor::From<int32_t>(DataType::kInt32, {1}, {i}),
          Tensor::From<int32_t>(DataType::kInt32, {1}, {100 + i})};
}

class FeedWholeTest : public ::testing::TestWithParam<std::vector<int>> {
 protected:
  void SetUp() override {
    {
      std::lock_guard<std::mutex> l(g_gate.mu);
      g_gate.open = false;
      g_gate.arrived = 0;
    }
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.queue_depth = 2;
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override {
    OpenGate();
    (void)Finalize();
  }
  static void OpenGate() {
    std::lock_guard<std::mutex> l(g_gate.mu);
    g_gate.open = true;
    g_gate.cv.notify_all();
  }
  static bool GateHolds() {
    std::unique_lock<std::mutex> l(g_gate.mu);
    return g_gate.cv.wait_for(l, std::chrono::seconds(5),
                              [] { return g_gate.arrived > 0; });
  }
};

TEST_P(FeedWholeTest, FeedThatTimesOutPutsNothingInAndMayBeRetried) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, TwoBranches(GetParam())).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(s.FeedData(1, Transaction(1), FlowInfo{}, 5000).ok());
  ASSERT_TRUE(GateHolds()) << "the gate node never ran";
  for (int32_t i = 2; i <= 3; ++i) {
    st = s.FeedData(1, Transaction(i), FlowInfo{}, 5000);
    ASSERT_TRUE(st.ok()) << "transaction " << i << ": " << st.ToString();
  }
  // The gate node's queue is full; the identity's is not.
  st = s.FeedData(1, Transaction(4), FlowInfo{}, 100);
  ASSERT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  EXPECT_NE(st.ToString().find("still full"), std::string::npos)
      << st.ToString();
  OpenGate();
  auto fetch = [&](int32_t i) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status got = s.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(got.ok()) << "fetch " << i << ": " << got.ToString();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].As<int32_t>().at(0), i) << "fetch " << i;
    EXPECT_EQ(out[1].As<int32_t>().at(0), 100 + i)
        << "fetch " << i << " paired outputs of two transactions";
  };
  for (int32_t i = 1; i <= 3; ++i) fetch(i);
  // The caller feeds transaction 4 again, then 5.
  for (int32_t i = 4; i <= 5; ++i) {
    st = s.FeedData(1, Transaction(i), FlowInfo{}, 5000);
    ASSERT_TRUE(st.ok()) << "transaction " << i << ": " << st.ToString();
  }
  for (int32_t i = 4; i <= 5; ++i) fetch(i);
  std::vector<Tensor> out;
  FlowInfo info;
  st = s.FetchData(1, &out, &info, 50);
  EXPECT_EQ(st.code(), StatusCode::kTimeout)
      << "a stray output of the timed-out feed: " << st.ToString();
}

INSTANTIATE_TEST_SUITE_P(Devices, FeedWholeTest,
                         ::testing::Values(std::vector<int>{2, 3, 4, 5},
                                           std::vector<int>{3, 6, 7},
                                           std::vector<int>{0, 1}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
