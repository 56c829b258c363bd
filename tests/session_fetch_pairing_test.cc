// A fetch returns one transaction (Note [Pairing outputs] in
// session/output_matcher.cc): the outputs of a graph whose outputs come
// from different nodes, one of them replicated, are paired by transaction
// id, also in the batch fetch and under feeders on several threads; a
// failed result names the node that failed; the per-device counters can be
// read after RemoveGraph and after Finalize. On device sets with and
// without device 0.
//
//   x ─[_BuiltIn_Identity @d0]────────────── out0
//   x ─[Reorder, replicas @d1,d2]──────────── out1   (holds transaction 1
//                                                     until another passed)
//
// Thread-safety: the Reorder gate is a mutex and condition variable; every
// wait is bounded, so a failing test never hangs.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::FuncNode;
using ::hflow::testing::Place;

// Transaction 1 waits (up to 5 s) until another message has passed, so a
// replica that gets a later transaction returns it first.
struct ReorderGate {
  std::mutex mu;
  std::condition_variable cv;
  int passed = 0;
} g_reorder;

class Reorder : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    std::unique_lock<std::mutex> l(g_reorder.mu);
    if (in[0]->GetTransactionId() == 1) {
      g_reorder.cv.wait_for(l, std::chrono::seconds(5),
                            [] { return g_reorder.passed > 0; });
    } else {
      ++g_reorder.passed;
      g_reorder.cv.notify_all();
    }
    l.unlock();
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("FetchPairingTest_Reorder", Reorder);

// Emits nothing: its output never carries the transactions of the other.
class Swallow : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>&) override {
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
};
REGISTER_FLOW_FUNC("FetchPairingTest_Swallow", Swallow);

// Fails odd values; passes even ones on.
class FailOdd : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    auto* t = in[0]->GetTensor();
    if (static_cast<const int32_t*>(t->GetData())[0] % 2 != 0) {
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("FetchPairingTest_FailOdd", FailOdd);

// out0 from an identity on d0, out1 from `second` on `second_devices`.
FlowGraph TwoOutputs(const std::string& second, int32_t d0,
                     const std::vector<int32_t>& second_devices) {
  FlowData x("x", 0);
  FlowNode id = FuncNode("id", "_BuiltIn_Identity");
  FlowNode other = FuncNode("other", second, 1, 1, "second_pp");
  id.SetInput(0, x);
  other.SetInput(0, x);
  FlowGraph g("pairing");
  g.SetInputs({x}).SetOutputs({id, other});
  return Place(g, {{"id", {d0}}, {"other", second_devices}});
}

// The second node's replicas on the set's last two devices.
std::vector<int32_t> Replicas(const std::vector<int>& devices) {
  const size_t n = devices.size();
  return {devices[n - 2], devices[n - 1]};
}

Tensor Value(int32_t v) {
  return Tensor::From<int32_t>(DataType::kInt32, {1}, {v});
}

class FetchPairingTest : public ::testing::TestWithParam<std::vector<int>> {
 protected:
  void SetUp() override {
    {
      std::lock_guard<std::mutex> l(g_reorder.mu);
      g_reorder.passed = 0;
    }
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.queue_depth = 8;
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }

  // Feeds values 1..n (transaction i carries i).
  void FeedValues(Session& s, int32_t n) {
    for (int32_t i = 1; i <= n; ++i) {
      FlowInfo info;
      info.transaction_id = static_cast<uint64_t>(i);
      Status st = s.FeedData(1, {Value(i)}, info, 5000);
      ASSERT_TRUE(st.ok()) << "feed " << i << ": " << st.ToString();
    }
  }
  // Both outputs hold the transaction's own value.
  static void ExpectPaired(const std::vector<Tensor>& out,
                           const FlowInfo& info) {
    ASSERT_EQ(out.size(), 2u);
    const int32_t want = static_cast<int32_t>(info.transaction_id);
    EXPECT_EQ(out[0].As<int32_t>().at(0), want) << "output 0";
    EXPECT_EQ(out[1].As<int32_t>().at(0), want)
        << "output 1 of another transaction fetched with transaction " << want;
  }
};

TEST_P(FetchPairingTest, ReplicaThatFinishesOutOfOrderIsPairedByTransaction) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, TwoOutputs("FetchPairingTest_Reorder",
                                       GetParam()[0], Replicas(GetParam())))
                  .ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  // Sixteen transactions: some reach the replica that does not hold 1, so
  // out1's queue holds a later transaction ahead of 1.
  FeedValues(s, 16);
  std::set<uint64_t> seen;
  for (int i = 0; i < 16; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, 10000);
    ASSERT_TRUE(st.ok()) << "fetch " << i << ": " << st.ToString();
    ExpectPaired(out, info);
    EXPECT_TRUE(seen.insert(info.transaction_id).second)
        << "transaction " << info.transaction_id << " fetched twice";
  }
  EXPECT_EQ(seen.size(), 16u);
}

TEST_P(FetchPairingTest, BatchFetchPairsByTransaction) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, TwoOutputs("FetchPairingTest_Reorder",
                                       GetParam()[0], Replicas(GetParam())))
                  .ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  FeedValues(s, 16);
  std::set<uint64_t> seen;
  while (seen.size() < 16) {
    std::vector<std::vector<Tensor>> outs;
    std::vector<FlowInfo> infos;
    Status st = s.FetchDataBatch(1, 5, &outs, &infos, 10000);
    ASSERT_TRUE(st.ok()) << "after " << seen.size() << ": " << st.ToString();
    ASSERT_EQ(outs.size(), infos.size());
    for (size_t t = 0; t < outs.size(); ++t) {
      ExpectPaired(outs[t], infos[t]);
      EXPECT_TRUE(seen.insert(infos[t].transaction_id).second);
    }
  }
}

TEST_P(FetchPairingTest, ManyFeedersAndAReplicatedOutputNodeNeverMispair) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, TwoOutputs("_BuiltIn_Identity", GetParam()[0],
                                       Replicas(GetParam())))
                  .ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  constexpr int kThreads = 3, kEach = 400;
  std::atomic<int> feed_errors{0};
  std::vector<std::thread> feeders;
  for (int t = 0; t < kThreads; ++t) {
    feeders.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const int32_t v = t * kEach + i + 1;
        FlowInfo info;
        info.transaction_id = static_cast<uint64_t>(v);
        if (!s.FeedData(1, {Value(v)}, info, 10000).ok()) ++feed_errors;
      }
    });
  }
  std::set<uint64_t> seen;
  int mispaired = 0;
  for (int i = 0; i < kThreads * kEach; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, 10000);
    if (!st.ok()) {
      ADD_FAILURE() << "fetch " << i << ": " << st.ToString();
      break;
    }
    const int32_t want = static_cast<int32_t>(info.transaction_id);
    mispaired += out[0].As<int32_t>().at(0) != want ||
                 out[1].As<int32_t>().at(0) != want;
    seen.insert(info.transaction_id);
  }
  for (auto& f : feeders) f.join();
  EXPECT_EQ(feed_errors.load(), 0);
  EXPECT_EQ(mispaired, 0);
  EXPECT_EQ(seen.size(), size_t{kThreads * kEach});
}

TEST_P(FetchPairingTest, OutputsThatNeverPairFailTheFetchClearlyAndKeepData) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, TwoOutputs("FetchPairingTest_Swallow",
                                       GetParam()[0], {GetParam().back()}))
                  .ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  // The hold limit is at least 256 per output; feed past it while fetching
  // (a fetch moves output 0's messages into the hold).
  Status st;
  for (int32_t i = 1; i <= 300; ++i) {
    FlowInfo info;
    info.transaction_id = static_cast<uint64_t>(i);
    Status fed = s.FeedData(1, {Value(i)}, info, 5000);
    ASSERT_TRUE(fed.ok()) << "feed " << i << ": " << fed.ToString();
    std::vector<Tensor> out;
    FlowInfo got;
    st = s.FetchData(1, &out, &got, 0);
    if (st.code() == StatusCode::kResourceExhausted) break;
    ASSERT_EQ(st.code(), StatusCode::kTimeout)
        << "fetch " << i << ": " << st.ToString();
  }
  ASSERT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.ToString().find("output 0 ('id:0')"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.ToString().find("fetched together must carry the same"),
            std::string::npos)
      << st.ToString();
}

TEST_P(FetchPairingTest, FailedResultNamesTheNodeThatFailed) {
  // x -> bad (FailOdd) -> after (identity) -> out0; x -> id -> out1.
  FlowData x("x", 0);
  FlowNode bad = FuncNode("bad", "FetchPairingTest_FailOdd");
  FlowNode after = FuncNode("after", "_BuiltIn_Identity");
  FlowNode id = FuncNode("id", "_BuiltIn_Identity");
  bad.SetInput(0, x);
  after.SetInput(0, bad);
  id.SetInput(0, x);
  FlowGraph g("fails");
  g.SetInputs({x}).SetOutputs({after, id});
  const auto& d = GetParam();
  Place(g, {{"bad", {d[0]}}, {"after", {d.back()}}});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, g).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  FeedValues(s, 2);
  for (int32_t i = 1; i <= 2; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(info.transaction_id, uint64_t(i));
    if (i == 1) {
      EXPECT_EQ(info.ret_code, FlowFunc::FLOW_FUNC_FAILED);
      EXPECT_EQ(info.error_node, "bad");  // not 'after', which passed it on
      EXPECT_EQ(out[1].As<int32_t>().at(0), 1) << "the other output holds data";
    } else {
      EXPECT_EQ(info.ret_code, 0);
      EXPECT_EQ(info.error_node, "");
    }
  }
}

// Regression (TSan, CI stop 23): two nodes on one device get the same
// input mbuf and both pass it on. The router used to store the input's flow
// info into every output head unconditionally, so the two node threads
// wrote one head at once. An output that is the input itself is now left
// untouched; this test, run under scripts/check-sanitizers tsan, fails
// without that.
TEST_P(FetchPairingTest, TwoNodesPassingOnOneSharedInputLeaveItUntouched) {
  FlowData x("x", 0);
  FlowNode a = FuncNode("a", "_BuiltIn_Identity");
  FlowNode b = FuncNode("b", "_BuiltIn_Identity");
  a.SetInput(0, x);
  b.SetInput(0, x);
  FlowGraph g("shared");
  g.SetInputs({x}).SetOutputs({a, b});
  const auto& d = GetParam();
  Place(g, {{"a", {d[0]}}, {"b", {d[0]}}});
  Session s;
  ASSERT_TRUE(s.AddGraph(1, g).ok());
  // Feeds run kAhead transactions ahead of fetches (the queues hold 8), so
  // both nodes are busy on the same mbufs at once.
  constexpr int32_t kN = 64;
  constexpr int32_t kAhead = 4;
  for (int32_t i = 1; i <= kN + kAhead; ++i) {
    if (i <= kN) {
      FlowInfo info;
      info.start_time = 100u + static_cast<uint64_t>(i);
      const uint8_t tag = static_cast<uint8_t>(i);
      ASSERT_TRUE(info.SetUserData(&tag, 1).ok());
      Status st = s.FeedData(1, {Value(i)}, info, 5000);
      ASSERT_TRUE(st.ok()) << "feed " << i << ": " << st.ToString();
    }
    const int32_t want = i - kAhead;
    if (want < 1) continue;
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].As<int32_t>().at(0), want);
    EXPECT_EQ(out[1].As<int32_t>().at(0), want);
    EXPECT_EQ(info.start_time, 100u + static_cast<uint64_t>(want));
    ASSERT_EQ(info.user_data.size(), 1u);
    EXPECT_EQ(info.user_data[0], static_cast<uint8_t>(want));
  }
}

TEST_P(FetchPairingTest, DeviceCountersAfterRemoveGraphAndFinalize) {
  const auto& d = GetParam();
  {
    Session s;
    ASSERT_TRUE(
        s.AddGraph(1, TwoOutputs("_BuiltIn_Identity", d[0], Replicas(d))).ok());
    ASSERT_TRUE(s.BuildGraph(1).ok());
    std::vector<DeviceReport> live;
    ASSERT_TRUE(DeviceReports(&live).ok());
    uint64_t submodels = 0;
    for (const auto& r : live) submodels += r.submodels;
    EXPECT_EQ(submodels, 3u) << "id and two replicas of other";
    FeedValues(s, 4);
    std::vector<Tensor> out;
    FlowInfo info;
    for (int i = 0; i < 4; ++i)
      ASSERT_TRUE(s.FetchData(1, &out, &info, 5000).ok());
    ASSERT_TRUE(s.RemoveGraph(1).ok());
    std::vector<DeviceReport> after_remove;
    ASSERT_TRUE(DeviceReports(&after_remove).ok());
    ASSERT_EQ(after_remove.size(), d.size());
    for (const auto& r : after_remove) {
      EXPECT_EQ(r.submodels, 0u) << "device " << r.id;
      EXPECT_EQ(r.queues, 0u) << "device " << r.id;
    }
    EXPECT_GT(after_remove[0].contexts_created, 0u);
    EXPECT_GT(after_remove[0].peak_mem_bytes, 0u);
  }
  ASSERT_TRUE(Finalize().ok());
  std::vector<DeviceReport> final_rows;
  Status st = DeviceReports(&final_rows);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(final_rows.size(), d.size());
  for (size_t i = 0; i < d.size(); ++i) EXPECT_EQ(final_rows[i].id, d[i]);
  EXPECT_GT(final_rows[0].contexts_created, 0u);
  EXPECT_GT(final_rows[0].peak_mem_bytes, 0u);
  // A new Initialize starts from fresh counters (TearDown's Finalize then
  // finds nothing to do).
  Options o;
  o.cluster = MakeLocalCluster(d);
  ASSERT_TRUE(Initialize(o).ok());
  std::vector<DeviceReport> fresh;
  ASSERT_TRUE(DeviceReports(&fresh).ok());
  for (const auto& r : fresh) EXPECT_EQ(r.contexts_created, 0u) << r.id;
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, FetchPairingTest,
                         ::testing::Values(std::vector<int>{2, 3, 4, 5},
                                           std::vector<int>{3, 6, 7},
                                           std::vector<int>{0, 1, 2}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
