// Session::FeedDataBatch / FetchDataBatch through the public API, on device
// sets with and without device 0: order and transaction ids, infos, all-or-
// nothing checks, a timeout partway with nothing lost, outputs of one
// transaction kept together, argument errors, and the caller's context
// left as it was.
//
//   x ─[id @d0]─[id @d1]─ out          (Chain)
//   x ─[id @d0]─┬─ out0                (Fork: two outputs per transaction)
//               └─[id @d1]─ out1
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::FuncNode;

// x -> a@devices[0] -> b@devices[1]; the graph's outputs are b, or a and b.
FlowGraph TwoNodes(const std::vector<int>& devices, bool output_a) {
  FlowData x("x", 0);
  FlowNode a = FuncNode("a", "_BuiltIn_Identity");
  FlowNode b = FuncNode("b", "_BuiltIn_Identity");
  a.SetInput(0, x);
  b.SetInput(0, a, 0);
  FlowGraph g(output_a ? "batch_fork" : "batch_chain");
  g.SetInputs({x});
  if (output_a) {
    g.SetOutputs({a, b});
  } else {
    g.SetOutputs({b});
  }
  return testing::Place(g, {{"a", {devices[0]}}, {"b", {devices[1]}}});
}

FlowGraph Chain(const std::vector<int>& devices) {
  return TwoNodes(devices, /*output_a=*/false);
}
FlowGraph Fork(const std::vector<int>& devices) {
  return TwoNodes(devices, /*output_a=*/true);
}

Tensor Value(int32_t v) {
  return Tensor::From<int32_t>(DataType::kInt32, {2}, {v, -v});
}

std::vector<std::vector<Tensor>> Values(int from, int n) {
  std::vector<std::vector<Tensor>> batch;
  for (int i = 0; i < n; ++i) batch.push_back({Value(from + i)});
  return batch;
}

// Fetches until `n` transactions came back (or a fetch fails); appends
// their first outputs' values and their infos. *largest: the most one call
// returned.
Status FetchAll(Session& s, uint32_t id, size_t n, std::vector<int32_t>* values,
                std::vector<FlowInfo>* infos, size_t* largest = nullptr) {
  std::vector<std::vector<Tensor>> out;
  std::vector<FlowInfo> got;
  while (infos->size() < n) {
    HFLOW_RETURN_IF_ERROR(s.FetchDataBatch(id, 16, &out, &got, 5000));
    if (out.size() != got.size() || out.empty()) {
      return Status::Internal("outputs and infos disagree");
    }
    if (largest != nullptr) *largest = std::max(*largest, out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      values->push_back(out[i][0].As<int32_t>()[0]);
      infos->push_back(got[i]);
    }
  }
  return Status::OK();
}

class SessionBatchTest : public ::testing::TestWithParam<std::vector<int>> {
 protected:
  void SetUp() override { Init(64); }
  void TearDown() override { (void)Finalize(); }
  void Init(uint32_t depth) {
    (void)Finalize();
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.queue_depth = depth;
    ASSERT_TRUE(Initialize(o).ok());
  }
  void Build(Session& s, const FlowGraph& g) {
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  std::vector<int> Devices() const { return GetParam(); }
};

TEST_P(SessionBatchTest, TransactionsComeBackInOrderWithTheirIds) {
  Session s;
  Build(s, Chain({Devices()[0], Devices()[1]}));
  size_t fed = 0;
  Status st = s.FeedDataBatch(1, Values(0, 40), {}, 5000, &fed);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(fed, 40u);
  // Single calls and batches share one stream of transaction ids.
  ASSERT_TRUE(s.FeedData(1, {Value(40)}, FlowInfo{}, 5000).ok());
  ASSERT_TRUE(s.FeedDataBatch(1, Values(41, 9), {}, 5000).ok());
  std::vector<int32_t> values;
  std::vector<FlowInfo> infos;
  // Let the 50 arrive, so fetches find several ready.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  size_t largest = 0;
  st = FetchAll(s, 1, 50, &values, &infos, &largest);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(values.size(), 50u);
  EXPECT_GT(largest, 1u) << "every batch fetch took a single transaction";
  EXPECT_LE(largest, 16u) << "a batch fetch took more than its max";
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(values[i], i);
    EXPECT_EQ(infos[i].transaction_id, uint64_t(i + 1));
    EXPECT_EQ(infos[i].ret_code, 0);
  }
}

TEST_P(SessionBatchTest, InfosTravelWithTheirTransactions) {
  Session s;
  Build(s, Chain({Devices()[0], Devices()[1]}));
  std::vector<FlowInfo> infos(3);
  for (int i = 0; i < 3; ++i) {
    infos[i].transaction_id = 100 + i;
    infos[i].user_data = {uint8_t(i), 7};
    infos[i].start_time = 1000 + i;
  }
  ASSERT_TRUE(s.FeedDataBatch(1, Values(0, 3), infos, 5000).ok());
  std::vector<int32_t> values;
  std::vector<FlowInfo> got;
  ASSERT_TRUE(FetchAll(s, 1, 3, &values, &got).ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(got[i].transaction_id, uint64_t(100 + i));
    EXPECT_EQ(got[i].user_data, (std::vector<uint8_t>{uint8_t(i), 7}));
    EXPECT_EQ(got[i].start_time, uint64_t(1000 + i));
  }
}

TEST_P(SessionBatchTest, ABadTransactionFeedsNothing) {
  Session s;
  Build(s, Chain({Devices()[0], Devices()[1]}));
  auto batch = Values(0, 5);
  batch[3][0].data.pop_back();  // 7 bytes for an int32[2]
  size_t fed = 99;
  Status st = s.FeedDataBatch(1, batch, {}, 1000, &fed);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("transaction 3"), std::string::npos)
      << st.ToString();
  EXPECT_EQ(fed, 0u);
  std::vector<std::vector<Tensor>> out;
  std::vector<FlowInfo> infos;
  EXPECT_EQ(s.FetchDataBatch(1, 8, &out, &infos, 100).code(),
            StatusCode::kTimeout)
      << "the good transactions before the bad one were fed";
  // Infos must be absent or one per transaction.
  st = s.FeedDataBatch(1, Values(0, 2), std::vector<FlowInfo>(3), 1000);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("one per transaction"), std::string::npos);
}

// Nobody fetches: the feed times out partway, says how far it got, and
// nothing fed is lost or reordered when fetching resumes.
TEST_P(SessionBatchTest, TimeoutPartwayLosesNothing) {
  Init(4);
  Session s;
  Build(s, Chain({Devices()[0], Devices()[1]}));
  constexpr int kN = 200;
  size_t fed = 0;
  Status st = s.FeedDataBatch(1, Values(0, kN), {}, 200, &fed);
  ASSERT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  ASSERT_GT(fed, 0u);
  ASSERT_LT(fed, size_t(kN));
  EXPECT_NE(st.message().find(std::to_string(fed) + " of 200"),
            std::string::npos)
      << st.ToString();
  std::vector<int32_t> values;
  std::vector<FlowInfo> infos;
  ASSERT_TRUE(FetchAll(s, 1, fed, &values, &infos).ok());
  auto rest = Values(static_cast<int>(fed), kN - static_cast<int>(fed));
  // The rest, fed while fetching.
  size_t more = 0;
  while (more < rest.size()) {
    std::vector<std::vector<Tensor>> part(
        rest.begin() + more, rest.begin() + std::min(rest.size(), more + 4));
    size_t n = 0;
    st = s.FeedDataBatch(1, part, {}, 5000, &n);
    ASSERT_TRUE(st.ok()) << st.ToString();
    more += n;
    ASSERT_TRUE(FetchAll(s, 1, fed + more, &values, &infos).ok());
  }
  ASSERT_EQ(values.size(), size_t(kN));
  for (int i = 0; i < kN; ++i) EXPECT_EQ(values[i], i) << "at " << i;
}

TEST_P(SessionBatchTest, OutputsOfATransactionStayTogether) {
  Session s;
  Build(s, Fork({Devices()[0], Devices()[1]}));
  ASSERT_TRUE(s.FeedDataBatch(1, Values(0, 30), {}, 5000).ok());
  std::vector<std::vector<Tensor>> out;
  std::vector<FlowInfo> infos;
  int next = 0;
  while (next < 30) {
    Status st = s.FetchDataBatch(1, 7, &out, &infos, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_LE(out.size(), 7u);
    for (size_t i = 0; i < out.size(); ++i, ++next) {
      ASSERT_EQ(out[i].size(), 2u);
      EXPECT_EQ(out[i][0].As<int32_t>()[0], next);
      EXPECT_EQ(out[i][1].As<int32_t>()[0], next);
      EXPECT_EQ(infos[i].transaction_id, uint64_t(next + 1));
    }
  }
}

TEST_P(SessionBatchTest, ArgumentErrorsAndTimeouts) {
  Session s;
  Build(s, Chain({Devices()[0], Devices()[1]}));
  std::vector<std::vector<Tensor>> out;
  std::vector<FlowInfo> infos;
  EXPECT_EQ(s.FetchDataBatch(1, 0, &out, &infos, 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(s.FetchDataBatch(1, 4, nullptr, &infos, 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(s.FetchDataBatch(1, 4, &out, &infos, 50).code(),
            StatusCode::kTimeout);
  EXPECT_EQ(s.FetchDataBatch(9, 4, &out, &infos, 0).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(s.FeedDataBatch(9, Values(0, 1), {}, 0).code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(s.FeedDataBatch(1, {}, {}, 0).ok())
      << "an empty batch is a no-op";
}

// Invariant 2: a caller bound to a device of its own gets it back.
TEST_P(SessionBatchTest, CallerContextIsLeftAsItWas) {
  Session s;
  Build(s, Chain({Devices()[0], Devices()[1]}));
  rt::DeviceRuntime* runtime = rt::CurrentRuntime();
  const int32_t mine = Devices().back();
  ASSERT_TRUE(runtime->SetDevice(mine).ok());
  rt::Context* before = runtime->CurrentContextFast();
  ASSERT_TRUE(s.FeedDataBatch(1, Values(0, 8), {}, 5000).ok());
  EXPECT_EQ(runtime->CurrentContextFast(), before);
  std::vector<int32_t> values;
  std::vector<FlowInfo> infos;
  ASSERT_TRUE(FetchAll(s, 1, 8, &values, &infos).ok());
  EXPECT_EQ(runtime->CurrentContextFast(), before);
  ASSERT_TRUE(runtime->ResetDevice(mine).ok());
}

INSTANTIATE_TEST_SUITE_P(
    DeviceSets, SessionBatchTest,
    ::testing::Values(std::vector<int>{2, 3, 4, 5}, std::vector<int>{3, 6, 7},
                      std::vector<int>{0, 1}),
    [](const ::testing::TestParamInfo<std::vector<int>>& info) {
      return testing::DevicesName(info.param);
    });

}  // namespace
}  // namespace hflow
