// End to end through the public API: Initialize on devices without 0, a
// two-input add pipeline across two devices, feed/fetch with values checked,
// UDF failures as ret codes, timeouts, and teardown returning every device
// resource; the caller's context is untouched throughout.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hflow/hflow.h"
#include "rt/sim/sim_runtime.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::AddPipeline;
using ::hflow::testing::Place;
using ::testing::HasSubstr;

class SessionE2ETest : public ::testing::Test {
 protected:
  void SetUp() override {
    Options o;
    o.cluster = MakeLocalCluster({2, 3, 4, 5});
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }
};

TEST_F(SessionE2ETest, AddPipelineAcrossTwoDevices) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AddPipeline()).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  for (int i = 0; i < 20; ++i) {
    FlowInfo in;
    ASSERT_TRUE(
        s.FeedData(1,
                   {Tensor::From<int32_t>(DataType::kInt32, {3}, {i, 2, 3}),
                    Tensor::From<int32_t>(DataType::kInt32, {3}, {10, 20, 30})},
                   in, 1000)
            .ok());
  }
  for (int i = 0; i < 20; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(info.ret_code, 0);
    EXPECT_EQ(info.transaction_id, uint64_t(i + 1));
    EXPECT_EQ(out[0].As<int32_t>(),
              (std::vector<int32_t>{2 * (i + 10), 44, 66}));
  }
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
  ASSERT_EQ(reports.size(), 4u);
  EXPECT_EQ(reports[0].submodels, 1u);         // device 2: add
  EXPECT_EQ(reports[2].contexts_created, 0u);  // device 4 untouched
  for (const auto& r : reports) EXPECT_EQ(r.implicit_bindings, 0u);
}

TEST_F(SessionE2ETest, UserDataAndTimesTravelWithTheTransaction) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AddPipeline()).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  FlowInfo in;
  in.user_data = {7, 8, 9};
  in.transaction_id = 42;
  in.start_time = 100;
  in.end_time = 200;
  Tensor t = Tensor::From<int32_t>(DataType::kInt32, {1}, {5});
  ASSERT_TRUE(s.FeedData(1, {t, t}, in, 1000).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  ASSERT_TRUE(s.FetchData(1, &out, &info, 5000).ok());
  EXPECT_EQ(info.transaction_id, 42u);
  EXPECT_EQ(info.user_data, (std::vector<uint8_t>{7, 8, 9}));
  EXPECT_EQ(info.start_time, 100u);  // _BuiltIn_Add copies the times
  EXPECT_EQ(out[0].As<int32_t>(), std::vector<int32_t>{20});
}

TEST_F(SessionE2ETest, UdfFailureArrivesAsRetCodeAndNothingIsLost) {
  Session s;
  ASSERT_TRUE(s.AddGraph(1, AddPipeline()).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  FlowInfo in;
  // Mismatched shapes: _BuiltIn_Add rejects them.
  ASSERT_TRUE(s.FeedData(1,
                         {Tensor::From<int32_t>(DataType::kInt32, {2}, {1, 2}),
                          Tensor::From<int32_t>(DataType::kInt32, {1}, {1})},
                         in, 1000)
                  .ok());
  std::vector<Tensor> out;
  FlowInfo info;
  ASSERT_TRUE(s.FetchData(1, &out, &info, 5000).ok());
  EXPECT_EQ(info.ret_code, 164000);  // FLOW_FUNC_ERR_PARAM_INVALID
  EXPECT_EQ(info.transaction_id, 1u);
}

TEST_F(SessionE2ETest, TimeoutsAndBadInputs) {
  Session s;
  FlowInfo in;
  std::vector<Tensor> out;
  FlowInfo info;
  EXPECT_EQ(s.FetchData(9, &out, &info, 0).code(), StatusCode::kNotFound);
  ASSERT_TRUE(s.AddGraph(1, AddPipeline()).ok());
  EXPECT_EQ(s.AddGraph(1, AddPipeline()).code(), StatusCode::kAlreadyExists);
  Status st = s.FetchData(1, &out, &info, 0);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);  // before build
  ASSERT_TRUE(s.BuildGraph(1).ok());
  st =
      s.FeedData(1, {Tensor::From<int32_t>(DataType::kInt32, {1}, {1})}, in, 0);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("2 inputs (a, b)"));
  Tensor bad = Tensor::From<int32_t>(DataType::kInt32, {3}, {1});
  EXPECT_EQ(s.FeedData(1, {bad, bad}, in, 0).code(),
            StatusCode::kInvalidArgument);
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s.FetchData(1, &out, &info, 0).code(), StatusCode::kTimeout);
  EXPECT_EQ(s.FetchData(1, &out, &info, 50).code(), StatusCode::kTimeout);
  auto spent = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(spent, std::chrono::milliseconds(50));
  EXPECT_LT(spent, std::chrono::seconds(2));
}

//   x ──[CountBatch 3]── id (replicas on 2..5) ── out
TEST_F(SessionE2ETest, CountBatchInputAttrFeedsReplicas) {
  FlowData x("x", 0);
  FunctionPp pp("id_pp");
  pp.SetFunction("_BuiltIn_Identity");
  FlowNode id("id", 1, 1);
  id.SetInput(0, x).AddPp(pp).MapInput(0, pp, 0, {CountBatch{3}});
  FlowGraph g("batched");
  g.SetInputs({x}).SetOutputs({id});
  Place(g, {{"id", {2, 3, 4, 5}}});
  Session s;
  ASSERT_TRUE(s.AddGraph(7, g).ok());
  Status st = s.BuildGraph(7);
  ASSERT_TRUE(st.ok()) << st.ToString();
  for (int i = 1; i <= 6; ++i) {
    ASSERT_TRUE(s.FeedData(7,
                           {Tensor::From<int64_t>(DataType::kInt64, {1}, {i})},
                           FlowInfo{}, 1000)
                    .ok());
  }
  std::vector<std::vector<int64_t>> batches;
  for (int b = 0; b < 2; ++b) {
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(7, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 1}));
    batches.push_back(out[0].As<int64_t>());
  }
  std::sort(batches.begin(), batches.end());
  EXPECT_EQ(batches[0], (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(batches[1], (std::vector<int64_t>{4, 5, 6}));
}

TEST(SessionLifecycleTest, FinalizeWithMessagesInFlightReleasesEverything) {
  Options o;
  o.cluster = MakeLocalCluster({3, 6, 7});
  o.queue_depth = 4;
  ASSERT_TRUE(Initialize(o).ok());
  auto* sim = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  {
    Session s;
    FlowGraph g = AddPipeline();
    g.SetDeployInfo("{}");  // round robin over 3, 6, 7
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    ASSERT_TRUE(s.BuildGraph(1).ok());
    FlowInfo in;
    Tensor t = Tensor::From<float>(DataType::kFloat, {2}, {1, 2});
    int fed = 0;
    // Fill the pipeline until feeding times out (nobody fetches).
    Status st;
    while ((st = s.FeedData(1, {t, t}, in, 20)).ok() && fed < 1000) ++fed;
    EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
    EXPECT_GT(fed, 0);
    ASSERT_TRUE(Finalize().ok());
    // Later calls get a clear error.
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, 0);
    EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(st.message(), HasSubstr("not initialized"));
  }
  for (int32_t d : {3, 6, 7}) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, 0u) << d;
    EXPECT_EQ(st.contexts_alive, 0u) << d;
  }
}

// Device reports name the cluster node of their devices: this host's
// node id, whatever the config gives it (here 5).
TEST(SessionReportsTest, RowsCarryTheLocalNodeId) {
  Options o;
  ASSERT_TRUE(ParseClusterConfig(R"({"cluster":[{"cluster_nodes":[)"
                                 R"({"node_id":5,"is_local":true,)"
                                 R"("item_list":[{"device_id":3},)"
                                 R"({"device_id":6}]}]}]})",
                                 "cluster.json", &o.cluster)
                  .ok());
  ASSERT_TRUE(Initialize(o).ok());
  Session s;
  FlowData a("a", 0), b("b", 1);
  FlowNode add = testing::FuncNode("add", "_BuiltIn_Add", 2, 1);
  add.SetInput(0, a).SetInput(1, b);
  FlowGraph g("unplaced");  // hflow places it on this host's devices
  g.SetInputs({a, b}).SetOutputs({add});
  ASSERT_TRUE(s.AddGraph(1, g).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
  ASSERT_EQ(reports.size(), 2u);
  for (const DeviceReport& r : reports) EXPECT_EQ(r.node, 5) << r.id;
  EXPECT_EQ(reports[0].submodels + reports[1].submodels, 1u);
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  ASSERT_TRUE(DeviceReports(&reports).ok());
  for (const DeviceReport& r : reports) EXPECT_EQ(r.node, 5) << r.id;
  ASSERT_TRUE(Finalize().ok());
}

}  // namespace
}  // namespace hflow
