// Session::ResetGraph (Note [Resetting a graph] in deploy/
// deployment_reset.cc): a UDF that implements ResetFlowFuncState keeps its
// object and starts counting again; one that does not (the default returns
// FLOW_FUNC_ERR_NOT_SUPPORT, as GE's) is destroyed, created again and
// Init'ed; queued and held data is dropped; feeds and fetches in flight are
// woken with kCancelled; transaction ids start at 1 again; a recreated
// instance whose Init fails fails the graph. Each UDF records the device it
// is bound to in ResetFlowFuncState and Init. On {0,1}, {2,3,4,5}, {3,6,7}.
//
//   x ── count@d.back() ── out      (count: the n-th message gives n)
//
// Thread-safety: the UDFs' counters are atomics or under a mutex; every
// wait is bounded.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::FuncNode;
using ::hflow::testing::Place;
using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;

struct Calls {
  std::atomic<int> created{0};
  std::atomic<int> inits{0};
  std::atomic<int> resets{0};
  std::atomic<int> fail_init_from{0};  // n > 0: the n-th Init and later fail
  std::mutex mu;
  std::vector<int32_t> devices;  // bound in Init and ResetFlowFuncState
  void Clear() {
    created = inits = resets = fail_init_from = 0;
    std::lock_guard<std::mutex> l(mu);
    devices.clear();
  }
  void RecordDevice() {
    int32_t d = -1;
    (void)rt::GetDevice(&d);
    std::lock_guard<std::mutex> l(mu);
    devices.push_back(d);
  }
} g_calls;

// Emits how many messages it has seen since Init (or its last reset).
int32_t EmitCount(FlowFunc::MetaContext* ctx, int32_t count) {
  auto out = ctx->AllocTensorMsg({1}, FlowFunc::TensorDataType::DT_INT32);
  if (!out) return FlowFunc::FLOW_FUNC_FAILED;
  static_cast<int32_t*>(out->GetTensor()->GetData())[0] = count;
  return ctx->SetOutput(0, out);
}

class Counter : public FlowFunc::MetaFlowFunc {
 public:
  Counter() { ++g_calls.created; }
  int32_t Init() override {
    g_calls.RecordDevice();
    const int n = ++g_calls.inits;
    const int from = g_calls.fail_init_from.load();
    return from > 0 && n >= from ? FlowFunc::FLOW_FUNC_FAILED
                                 : FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Proc(const Msgs&) override { return EmitCount(context_, ++seen_); }

 protected:
  int32_t seen_ = 0;
};
REGISTER_FLOW_FUNC("ResetTest_Recreated", Counter);

class SelfResetting : public Counter {
 public:
  int32_t ResetFlowFuncState() override {
    g_calls.RecordDevice();
    ++g_calls.resets;
    seen_ = 0;
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
};
REGISTER_FLOW_FUNC("ResetTest_SelfResetting", SelfResetting);

class ThrowingReset : public Counter {
 public:
  int32_t ResetFlowFuncState() override {
    ++g_calls.resets;
    throw std::runtime_error("cannot reset");
  }
};
REGISTER_FLOW_FUNC("ResetTest_ThrowingReset", ThrowingReset);

// A multi-function UDF: GE calls its reset once per instance.
class MultiCounter : public FlowFunc::MetaMultiFunc {
 public:
  MultiCounter() { ++g_calls.created; }
  int32_t Init(const std::shared_ptr<FlowFunc::MetaParams>&) override {
    ++g_calls.inits;
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t ResetFlowFuncState(
      const std::shared_ptr<FlowFunc::MetaParams>&) override {
    ++g_calls.resets;
    seen_ = 0;
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Count(const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
                const Msgs&) {
    auto out = ctx->AllocTensorMsg({1}, FlowFunc::TensorDataType::DT_INT32);
    if (!out) return FlowFunc::FLOW_FUNC_FAILED;
    static_cast<int32_t*>(out->GetTensor()->GetData())[0] = ++seen_;
    return ctx->SetOutput(0, out);
  }

 private:
  int32_t seen_ = 0;
};
FLOW_FUNC_REGISTRAR(MultiCounter)
    .RegProcFunc("ResetTest_MultiCount", &MultiCounter::Count);

Tensor Value(int32_t v) {
  return Tensor::From<int32_t>(DataType::kInt32, {1}, {v});
}

class ResetGraphTest : public ::testing::TestWithParam<std::vector<int>> {
 protected:
  void SetUp() override {
    g_calls.Clear();
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.queue_depth = 8;
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }

  int32_t device() const { return GetParam().back(); }

  void AddCounter(const std::string& func) {
    FlowData x("x", 0);
    FlowNode count = FuncNode("count", func);
    count.SetInput(0, x);
    FlowGraph g("reset");
    g.SetInputs({x}).SetOutputs({count});
    Place(g, {{"count", {device()}}});
    ASSERT_TRUE(s_.AddGraph(1, g).ok());
    ASSERT_TRUE(s_.BuildGraph(1).ok());
  }
  void Feed(int32_t v) {
    Status st = s_.FeedData(1, {Value(v)}, FlowInfo{}, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  // The count the next result carries, and its transaction id.
  void ExpectNext(int32_t count, uint64_t trans) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s_.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(out.at(0).As<int32_t>().at(0), count);
    EXPECT_EQ(info.transaction_id, trans);
  }
  // Every Init and reset ran with the node's device bound.
  void ExpectBoundToTheNodesDevice() {
    std::lock_guard<std::mutex> l(g_calls.mu);
    ASSERT_FALSE(g_calls.devices.empty());
    for (int32_t d : g_calls.devices) EXPECT_EQ(d, device());
  }

  Session s_;
};

TEST_P(ResetGraphTest, AUdfThatResetsItselfKeepsItsObject) {
  AddCounter("ResetTest_SelfResetting");
  for (int i = 1; i <= 3; ++i) Feed(i);
  for (int i = 1; i <= 3; ++i) ExpectNext(i, i);
  ASSERT_TRUE(s_.ResetGraph(1).ok());
  EXPECT_EQ(g_calls.resets.load(), 1);
  EXPECT_EQ(g_calls.created.load(), 1) << "the object is kept";
  EXPECT_EQ(g_calls.inits.load(), 1) << "and not Init'ed again";
  Feed(9);
  ExpectNext(1, 1);  // counting again, and transaction ids from 1
  ExpectBoundToTheNodesDevice();
}

TEST_P(ResetGraphTest, TheDefaultResetRecreatesAndInits) {
  AddCounter("ResetTest_Recreated");
  Feed(1);
  Feed(2);
  ExpectNext(1, 1);
  ExpectNext(2, 2);
  ASSERT_TRUE(s_.ResetGraph(1).ok());
  EXPECT_EQ(g_calls.created.load(), 2);
  EXPECT_EQ(g_calls.inits.load(), 2);
  Feed(3);
  ExpectNext(1, 1);
  ExpectBoundToTheNodesDevice();
}

TEST_P(ResetGraphTest, AThrowingResetRecreates) {
  AddCounter("ResetTest_ThrowingReset");
  Feed(1);
  ExpectNext(1, 1);
  ASSERT_TRUE(s_.ResetGraph(1).ok());
  EXPECT_EQ(g_calls.resets.load(), 1);
  EXPECT_EQ(g_calls.created.load(), 2);
  Feed(2);
  ExpectNext(1, 1);
}

TEST_P(ResetGraphTest, AMultiFunctionUdfIsResetOncePerInstance) {
  AddCounter("ResetTest_MultiCount");
  Feed(1);
  Feed(2);
  ExpectNext(1, 1);
  ExpectNext(2, 2);
  ASSERT_TRUE(s_.ResetGraph(1).ok());
  EXPECT_EQ(g_calls.resets.load(), 1);
  EXPECT_EQ(g_calls.created.load(), 1);
  Feed(3);
  ExpectNext(1, 1);
}

TEST_P(ResetGraphTest, DropsWhatIsQueuedAndHeld) {
  AddCounter("ResetTest_SelfResetting");
  for (int i = 1; i <= 4; ++i) Feed(i);
  ASSERT_TRUE(s_.ResetGraph(1).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  EXPECT_EQ(s_.FetchData(1, &out, &info, 50).code(), StatusCode::kTimeout)
      << "nothing fed before the reset comes out after it";
  Feed(5);
  ExpectNext(1, 1);
}

TEST_P(ResetGraphTest, WakesAFetchInFlightWithCancelled) {
  AddCounter("ResetTest_SelfResetting");
  auto fetch = std::async(std::launch::async, [&] {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s_.FetchData(1, &out, &info, 20000);
    if (st.ok() &&
        (out.at(0).As<int32_t>().at(0) != 1 || info.transaction_id != 1)) {
      return Status::Internal("the fetch got a wrong result");
    }
    return st;
  });
  // Usually the fetch waits by now and is woken by the reset; if it only
  // starts after the reset, it must get the first result after it.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(s_.ResetGraph(1).ok());
  Feed(1);
  ASSERT_EQ(fetch.wait_for(std::chrono::seconds(10)),
            std::future_status::ready);
  Status st = fetch.get();
  if (!st.ok()) {
    EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
    EXPECT_NE(st.message().find("being reset"), std::string::npos)
        << st.ToString();
    ExpectNext(1, 1);
  }
}

TEST_P(ResetGraphTest, ARecreatedInstanceWhoseInitFailsFailsTheGraph) {
  AddCounter("ResetTest_Recreated");
  g_calls.fail_init_from = 2;
  Status st = s_.ResetGraph(1);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
  EXPECT_NE(st.message().find("node 'count'"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("Init returned"), std::string::npos)
      << st.ToString();
  Status feed = s_.FeedData(1, {Value(1)}, FlowInfo{}, 1000);
  EXPECT_FALSE(feed.ok()) << "a half-reset graph does not run on";
  EXPECT_TRUE(s_.RemoveGraph(1).ok());
}

TEST_P(ResetGraphTest, UnbuiltAndUnknownGraphs) {
  FlowData x("x", 0);
  FlowNode count = FuncNode("count", "ResetTest_Recreated");
  count.SetInput(0, x);
  FlowGraph g("unbuilt");
  g.SetInputs({x}).SetOutputs({count});
  Place(g, {{"count", {device()}}});
  ASSERT_TRUE(s_.AddGraph(1, g).ok());
  EXPECT_TRUE(s_.ResetGraph(1).ok()) << "nothing to reset";
  EXPECT_EQ(g_calls.created.load(), 0);
  EXPECT_EQ(s_.ResetGraph(2).code(), StatusCode::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, ResetGraphTest,
                         ::testing::Values(std::vector<int>{0, 1},
                                           std::vector<int>{2, 3, 4, 5},
                                           std::vector<int>{3, 6, 7}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
