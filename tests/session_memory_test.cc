// Memory back-pressure through the public API (Note [Waiting for memory] in
// services/memory_group.cc): big messages stream through a two-device
// pipeline with every transaction returned, because feeds and copies wait
// for pool memory instead of failing; a 40 MB tensor runs with the default
// pool; a message over the max size is refused at once naming the option;
// a UDF that finds the pool full on an executor thread fails its
// transaction after the bounded wait instead of deadlocking; the stats'
// peak is the memory in use. On device sets without 0 and with it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::AddPipeline;
using ::hflow::testing::DevicesName;
using ::hflow::testing::FuncNode;
using ::hflow::testing::Place;
using ::hflow::testing::Watchdog;
using ::testing::HasSubstr;
using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;

constexpr uint64_t kMiB = 1 << 20;

// Allocates as many 3 MiB tensors as its int32 input says, holding them
// all until Proc returns, then passes its input on: more than the pool
// holds fails its AllocTensorMsg (after the bounded wait), and Proc
// reports it.
class HoldTensors : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    const int32_t n = *static_cast<int32_t*>(in[0]->GetTensor()->GetData());
    std::vector<std::shared_ptr<FlowFunc::FlowMsg>> held;
    for (int32_t i = 0; i < n; ++i) {
      auto m = context_->AllocTensorMsg({int64_t(3 * kMiB / 4)},
                                        FlowFunc::TensorDataType::DT_INT32);
      if (m == nullptr) return FlowFunc::FLOW_FUNC_FAILED;
      held.push_back(std::move(m));
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("MemTest_HoldTensors", HoldTensors);

//   n ── hold@d ── out
FlowGraph HoldGraph(int32_t d) {
  FlowData a("n", 0);
  FlowNode hold = FuncNode("hold", "MemTest_HoldTensors");
  hold.SetInput(0, a);
  FlowGraph g("hold");
  g.SetInputs({a}).SetOutputs({hold});
  return Place(g, {{"hold", {d}}});
}

Tensor Filled(int64_t n, int32_t v) {
  return Tensor::From<int32_t>(DataType::kInt32, {n},
                               std::vector<int32_t>(size_t(n), v));
}

class SessionMemoryTest
    : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void Init(Options o = {}) {
    o.cluster = MakeLocalCluster(GetParam());
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }
  int32_t Dev(size_t i) const { return GetParam()[i]; }
};

// 100 transactions of two 4 MB tensors: 800 MB through 256 MiB pools.
// Before back-pressure the feeds failed with "caches exhausted".
TEST_P(SessionMemoryTest, StreamsFourMegabyteMessagesReturningEveryOne) {
  Watchdog dog(std::chrono::seconds(240), "4 MB x 100 stream");
  Init();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AddPipeline(Dev(0), Dev(1))).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  constexpr int kN = 100;
  constexpr int64_t kElems = 1000000;  // 4 MB of int32
  Status feed_status;
  std::thread feeder([&] {
    for (int i = 0; i < kN && feed_status.ok(); ++i) {
      feed_status = s.FeedData(1, {Filled(kElems, i), Filled(kElems, 1)},
                               FlowInfo{}, 60000);
    }
  });
  int fetched = 0;
  for (; fetched < kN; ++fetched) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, 60000);
    ASSERT_TRUE(st.ok()) << "transaction " << fetched + 1 << ": "
                         << st.ToString();
    ASSERT_EQ(info.ret_code, 0);
    EXPECT_EQ(info.transaction_id, uint64_t(fetched + 1));
    std::vector<int32_t> v = out[0].As<int32_t>();
    ASSERT_EQ(v.size(), size_t(kElems));
    EXPECT_EQ(v.front(), 2 * (fetched + 1));
    EXPECT_EQ(v.back(), 2 * (fetched + 1));
  }
  feeder.join();
  EXPECT_TRUE(feed_status.ok()) << feed_status.ToString();
  EXPECT_EQ(fetched, kN);
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
  for (const DeviceReport& r : reports) {
    const bool used = r.id == Dev(0) || r.id == Dev(1);
    // The peak in use: at least one transaction's messages, at most the
    // pool; zero where nothing ran.
    if (used) {
      EXPECT_GE(r.peak_mem_bytes, 8000000u) << r.id;
    } else {
      EXPECT_EQ(r.peak_mem_bytes, 0u) << r.id;
    }
    EXPECT_LE(r.peak_mem_bytes, kDefaultMbufPoolBytes) << r.id;
    EXPECT_EQ(r.implicit_bindings, 0u) << r.id;
  }
}

// 40 MB: over the old 32 MiB limit, within the 64 MiB default.
TEST_P(SessionMemoryTest, FortyMegabyteTensorRunsWithTheDefaults) {
  Watchdog dog(std::chrono::seconds(120), "40 MB tensor");
  Init();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AddPipeline(Dev(0), Dev(1))).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  constexpr int64_t kElems = 10000000;  // 40 MB of int32
  Status st =
      s.FeedData(1, {Filled(kElems, 3), Filled(kElems, 4)}, FlowInfo{}, 30000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<Tensor> out;
  FlowInfo info;
  st = s.FetchData(1, &out, &info, 30000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(info.ret_code, 0);
  std::vector<int32_t> v = out[0].As<int32_t>();
  ASSERT_EQ(v.size(), size_t(kElems));
  EXPECT_EQ(v[0], 14);
  EXPECT_EQ(v[kElems - 1], 14);
}

TEST_P(SessionMemoryTest, OverTheMaxMessageSizeIsRefusedAtOnceNamingTheOption) {
  Options o;
  o.max_message_bytes = 4 * kMiB;
  o.mbuf_pool_bytes = 16 * kMiB;
  Init(o);
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AddPipeline(Dev(0), Dev(1))).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  const auto t0 = std::chrono::steady_clock::now();
  Status st =
      s.FeedData(1, {Filled(kMiB + 1, 1), Filled(3, 1)}, FlowInfo{}, -1);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("input 0 ('a'): 4194308 bytes exceed "
                                      "the max message size of 4194304"));
  EXPECT_THAT(st.message(), HasSubstr("--max-message-bytes"));
}

// Two 3 MiB inputs on one device, in a 12 MiB pool whose feeds leave two
// 4 MiB messages free: each fits alone, together they never can. Refused at
// once even with a timeout of -1 (it used to wait forever).
TEST_P(SessionMemoryTest, TransactionThatCanNeverFitIsRefusedAtOnce) {
  Watchdog dog(std::chrono::seconds(30), "a feed that can never fit");
  Options o;
  o.max_message_bytes = 4 * kMiB;
  o.mbuf_pool_bytes = 12 * kMiB;
  Init(o);
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AddPipeline(Dev(0), Dev(1))).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  const int64_t n = int64_t(3 * kMiB / 4);  // int32: 3 MiB
  Status st = s.FeedData(1, {Filled(n, 1), Filled(n, 2)}, FlowInfo{}, -1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(),
              HasSubstr("inputs on device " + std::to_string(Dev(0)) +
                        " need 6291456 bytes together"));
  EXPECT_THAT(st.message(), HasSubstr("--mbuf-pool-bytes"));
  // Half of it fits: the graph still works.
  const int64_t half = int64_t(kMiB / 4);
  st = s.FeedData(1, {Filled(half, 1), Filled(half, 2)}, FlowInfo{}, 5000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<Tensor> out;
  FlowInfo info;
  st = s.FetchData(1, &out, &info, 5000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(out.at(0).As<int32_t>().at(0), 6);  // (1 + 2) * 2
}

TEST_P(SessionMemoryTest, PoolThatCannotHoldThreeMessagesIsABuildError) {
  Options o;
  o.max_message_bytes = 8 * kMiB;
  o.mbuf_pool_bytes = 16 * kMiB;
  Init(o);
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AddPipeline(Dev(0), Dev(1))).ok());
  Status st = s.BuildGraph(1);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  EXPECT_THAT(st.message(), HasSubstr("at least 3 messages"));
  EXPECT_THAT(st.message(), HasSubstr("--mbuf-pool-bytes"));
}

// The UDF is the only one that could free the pool, and it waits on an
// executor thread: the wait is bounded (alloc_timeout_ms), the transaction
// fails naming the node, and the graph goes on.
TEST_P(SessionMemoryTest, UdfOnAFullPoolFailsAfterTheBoundedWaitNoDeadlock) {
  Watchdog dog(std::chrono::seconds(60), "UDF on a full pool");
  Options o;
  o.mbuf_pool_bytes = 12 * kMiB;
  o.max_message_bytes = 4 * kMiB;
  o.alloc_timeout_ms = 200;
  Init(o);
  Session s;
  ASSERT_TRUE(s.AddGraph(1, HoldGraph(Dev(0))).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(s.FeedData(1, {Filled(1, 4)}, FlowInfo{}, 5000).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  Status st = s.FetchData(1, &out, &info, 20000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_GE(std::chrono::steady_clock::now() - t0,
            std::chrono::milliseconds(200));
  EXPECT_NE(info.ret_code, 0) << "4 x 3 MiB beside the input do not fit 12 MiB";
  // The held tensors are back: three fit.
  ASSERT_TRUE(s.FeedData(1, {Filled(1, 3)}, FlowInfo{}, 5000).ok());
  st = s.FetchData(1, &out, &info, 20000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(info.ret_code, 0);
  EXPECT_EQ(out[0].As<int32_t>(), std::vector<int32_t>{3});
  EXPECT_TRUE(s.RemoveGraph(1).ok());
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, SessionMemoryTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1}),
                         [](const auto& info) {
                           return DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
