// Load balancing end to end (docs/user_guide.md "Load balancing"), on
// device sets with and without device 0:
//
//   x ── cut (scatter) ── work (one replica per device) ── join (gather,
//        ROW) ── sink (2 replicas) ── out
//
// cut splits each transaction into the 6 cells of a 2 x 3 grid
// (NO_AFFINITY); the cells spread over every work replica; join re-sends
// them by row, so each row of a transaction is processed by one sink
// replica and the two rows by different ones; the fetches return every
// cell once. work allocates new messages (which inherit the labels), join
// passes its inputs on (relabelled in a copy). A second graph checks that
// a two-input node pairs cells by (transaction, data label).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/out_options.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;
constexpr int32_t kRows = 2;
constexpr int32_t kCols = 3;

struct Seen {
  int32_t device;
  int64_t value;  // transaction value * 100 + cell
};
std::mutex g_mu;
std::vector<Seen> g_work, g_sink;

int64_t ValueOf(const std::shared_ptr<FlowFunc::FlowMsg>& m) {
  int64_t v = 0;
  std::memcpy(&v, m->GetTensor()->GetData(), sizeof(v));
  return v;
}

FlowFunc::OutOptions Grid(FlowFunc::AffinityPolicy policy,
                          std::vector<std::pair<int32_t, int32_t>> pos) {
  FlowFunc::OutOptions o;
  FlowFunc::BalanceConfig* c = o.MutableBalanceConfig();
  c->SetAffinityPolicy(policy);
  FlowFunc::BalanceWeight w;
  w.rowNum = kRows;
  w.colNum = kCols;
  c->SetBalanceWeight(w);
  c->SetDataPos(pos);
  return o;
}

class Cut : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    const int64_t v = ValueOf(in[0]);
    Msgs cells;
    std::vector<std::pair<int32_t, int32_t>> pos;
    for (int32_t cell = 0; cell < kRows * kCols; ++cell) {
      auto m =
          context_->AllocTensorMsg({1}, FlowFunc::TensorDataType::DT_INT64);
      if (!m) return FlowFunc::FLOW_FUNC_FAILED;
      const int64_t value = v * 100 + cell;
      std::memcpy(m->GetTensor()->GetData(), &value, sizeof(value));
      cells.push_back(m);
      pos.push_back({cell / kCols, cell % kCols});
    }
    return context_->SetMultiOutputs(
        0, cells, Grid(FlowFunc::AffinityPolicy::NO_AFFINITY, pos));
  }
};
REGISTER_FLOW_FUNC("BalanceTest_Cut", Cut);

class Work : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    const int64_t v = ValueOf(in[0]);
    {
      std::lock_guard<std::mutex> l(g_mu);
      g_work.push_back({context_->GetRunningDeviceId(), v});
    }
    auto m = context_->AllocTensorMsg({1}, FlowFunc::TensorDataType::DT_INT64);
    if (!m) return FlowFunc::FLOW_FUNC_FAILED;
    std::memcpy(m->GetTensor()->GetData(), &v, sizeof(v));
    return context_->SetOutput(0, m);
  }
};
REGISTER_FLOW_FUNC("BalanceTest_Work", Work);

class Join : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    const int32_t cell = static_cast<int32_t>(ValueOf(in[0]) % 100);
    return context_->SetOutput(0, in[0],
                               Grid(FlowFunc::AffinityPolicy::ROW_AFFINITY,
                                    {{cell / kCols, cell % kCols}}));
  }
};
REGISTER_FLOW_FUNC("BalanceTest_Join", Join);

class Sink : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    {
      std::lock_guard<std::mutex> l(g_mu);
      g_sink.push_back({context_->GetRunningDeviceId(), ValueOf(in[0])});
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("BalanceTest_Sink", Sink);

// Sends each cell of a transaction on both outputs (two copies of the
// graph below's cut).
class CutTwice : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    const int64_t v = ValueOf(in[0]);
    for (int32_t cell = 0; cell < kRows * kCols; ++cell) {
      auto m =
          context_->AllocTensorMsg({1}, FlowFunc::TensorDataType::DT_INT64);
      if (!m) return FlowFunc::FLOW_FUNC_FAILED;
      const int64_t value = v * 100 + cell;
      std::memcpy(m->GetTensor()->GetData(), &value, sizeof(value));
      const auto o = Grid(FlowFunc::AffinityPolicy::NO_AFFINITY,
                          {{cell / kCols, cell % kCols}});
      int32_t rc = context_->SetOutput(0, m, o);
      if (rc == FlowFunc::FLOW_FUNC_SUCCESS) rc = context_->SetOutput(1, m, o);
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
};
REGISTER_FLOW_FUNC("BalanceTest_CutTwice", CutTwice);

// Holds a transaction's cells and re-sends them in reverse order, keeping
// their positions (a scatter node: its consumer's producers are all
// balance nodes).
class Reverse : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    Msgs& held = held_[ValueOf(in[0]) / 100];
    held.push_back(in[0]);
    if (held.size() < size_t(kRows * kCols)) return FlowFunc::FLOW_FUNC_SUCCESS;
    Msgs out(held.rbegin(), held.rend());
    held.clear();
    std::vector<std::pair<int32_t, int32_t>> pos;
    for (const auto& m : out) {
      const int32_t cell = static_cast<int32_t>(ValueOf(m) % 100);
      pos.push_back({cell / kCols, cell % kCols});
    }
    return context_->SetMultiOutputs(
        0, out, Grid(FlowFunc::AffinityPolicy::NO_AFFINITY, pos));
  }

 private:
  std::map<int64_t, Msgs> held_;  // by transaction value
};
REGISTER_FLOW_FUNC("BalanceTest_Reverse", Reverse);

std::atomic<int> g_mismatched{0};

// Two inputs that must hold the same cell; passes input 0 on.
class Pair : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    if (ValueOf(in[0]) != ValueOf(in[1])) g_mismatched.fetch_add(1);
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("BalanceTest_Pair", Pair);

//   x ── cut2 ─┬────────────── pair (replicas on every device) ── out
//              └── reverse ──┘
FlowGraph PairingGraph(const std::vector<int32_t>& devices) {
  FlowData x("x", 0);
  FlowNode cut = testing::FuncNode("cut2", "BalanceTest_CutTwice", 1, 2);
  FlowNode rev = testing::FuncNode("reverse", "BalanceTest_Reverse");
  FlowNode pair = testing::FuncNode("pair", "BalanceTest_Pair", 2, 1);
  cut.SetInput(0, x).SetBalanceScatter();
  rev.SetInput(0, cut, 1).SetBalanceScatter();
  pair.SetInput(0, cut, 0).SetInput(1, rev);
  FlowGraph g("pairing");
  g.SetInputs({x}).SetOutputs({pair});
  testing::Place(g, {{"cut2", {devices.front()}},
                     {"reverse", {devices.back()}},
                     {"pair", devices}});
  return g;
}

FlowGraph BalanceGraph(const std::vector<int32_t>& devices) {
  FlowData x("x", 0);
  FlowNode cut = testing::FuncNode("cut", "BalanceTest_Cut");
  FlowNode work = testing::FuncNode("work", "BalanceTest_Work");
  FlowNode join = testing::FuncNode("join", "BalanceTest_Join");
  FlowNode sink = testing::FuncNode("sink", "BalanceTest_Sink");
  cut.SetInput(0, x).SetBalanceScatter();
  work.SetInput(0, cut);
  join.SetInput(0, work).SetBalanceGather();
  sink.SetInput(0, join);
  FlowGraph g("balance");
  g.SetInputs({x}).SetOutputs({sink});
  testing::Place(g, {{"cut", {devices.front()}},
                     {"work", devices},
                     {"join", {devices.back()}},
                     {"sink", {devices[0], devices[1]}}});
  return g;
}

class BalanceScenarioTest
    : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    std::lock_guard<std::mutex> l(g_mu);
    g_work.clear();
    g_sink.clear();
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }
};

TEST_P(BalanceScenarioTest, CellsSpreadOverWorkersAndRowsMeetInOneReplica) {
  constexpr int kTransactions = 8;
  const std::vector<int32_t>& devices = GetParam();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, BalanceGraph(devices)).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  for (int t = 1; t <= kTransactions; ++t) {
    ASSERT_TRUE(s.FeedData(1, {testing::I64(t)}, FlowInfo{}, 5000).ok());
  }
  std::set<int64_t> fetched;
  for (int i = 0; i < kTransactions * kRows * kCols; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << "fetch " << i << ": " << st.ToString();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(fetched.insert(out[0].As<int64_t>()[0]).second)
        << "cell " << out[0].As<int64_t>()[0] << " fetched twice";
  }
  std::set<int64_t> expected;
  for (int t = 1; t <= kTransactions; ++t) {
    for (int cell = 0; cell < kRows * kCols; ++cell) {
      expected.insert(t * 100 + cell);
    }
  }
  EXPECT_EQ(fetched, expected) << "every cell comes back once";

  std::lock_guard<std::mutex> l(g_mu);
  // Each transaction's 6 cells cover every work replica (6 >= replicas).
  std::map<int64_t, std::set<int32_t>> work_devices;  // transaction -> devices
  for (const Seen& w : g_work) work_devices[w.value / 100].insert(w.device);
  ASSERT_EQ(work_devices.size(), size_t(kTransactions));
  for (const auto& [t, used] : work_devices) {
    EXPECT_EQ(used, std::set<int32_t>(devices.begin(), devices.end()))
        << "transaction " << t;
  }
  // Each (transaction, row) on one sink replica; the two rows on two.
  std::map<std::pair<int64_t, int64_t>, std::set<int32_t>> rows;
  for (const Seen& k : g_sink) {
    rows[{k.value / 100, (k.value % 100) / kCols}].insert(k.device);
  }
  ASSERT_EQ(rows.size(), size_t(kTransactions * kRows));
  for (int t = 1; t <= kTransactions; ++t) {
    const auto& r0 = rows[{t, 0}];
    const auto& r1 = rows[{t, 1}];
    ASSERT_EQ(r0.size(), 1u) << "transaction " << t << " row 0 split";
    ASSERT_EQ(r1.size(), 1u) << "transaction " << t << " row 1 split";
    EXPECT_NE(*r0.begin(), *r1.begin()) << "transaction " << t;
  }
}

// A multi-input node pairs its inputs by (transaction, data label): the
// cells of one transaction arrive in opposite orders on its two inputs and
// still meet cell by cell.
TEST_P(BalanceScenarioTest, MultiInputNodePairsCellsByDataLabel) {
  constexpr int kTransactions = 4;
  g_mismatched = 0;
  Session s;
  ASSERT_TRUE(s.AddGraph(1, PairingGraph(GetParam())).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  for (int t = 1; t <= kTransactions; ++t) {
    ASSERT_TRUE(s.FeedData(1, {testing::I64(t)}, FlowInfo{}, 5000).ok());
  }
  std::set<int64_t> fetched;
  for (int i = 0; i < kTransactions * kRows * kCols; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << "fetch " << i << ": " << st.ToString();
    fetched.insert(out.at(0).As<int64_t>()[0]);
  }
  EXPECT_EQ(fetched.size(), size_t(kTransactions * kRows * kCols));
  EXPECT_EQ(g_mismatched.load(), 0) << "cells paired with other cells";
}

INSTANTIATE_TEST_SUITE_P(Devices, BalanceScenarioTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1, 2}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
