// Scenario: the seed bug's home. A graph of 9 nodes is deployed by a pool of
// 4 threads onto device sets without 0 ({2,3,4,5}, {3,6,7}, and 2..5 of a
// {0..5} cluster) and with 0 ({0,1,2,3}). Every device call of the
// deployment runs on a thread bound to its target device, no device outside
// the set gets a context or an implicit binding, and device 0 is never used
// by luck. Then: failing the k-th runtime call, for every k of a
// deployment, rolls back everything with a clear error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "deploy/deployer.h"
#include "deploy/graph_def.h"
#include "deploy/planner.h"
#include "services/exchange_service.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using deploy::Deployment;
using deploy::GraphDef;
using deploy::Plan;

// a, b -> add0 -> id1 -> ... -> id8; outputs id8:0 and add0:0.
std::string ChainGraph(const std::string& deploy_json = "") {
  nlohmann::json g;
  g["name"] = "chain";
  g["inputs"] = {"a", "b"};
  g["nodes"].push_back({{"name", "add0"},
                        {"inputs", {"a", "b"}},
                        {"outputs", 1},
                        {"function", "_BuiltIn_Add"}});
  for (int i = 1; i <= 8; ++i) {
    g["nodes"].push_back(
        {{"name", "id" + std::to_string(i)},
         {"inputs", {i == 1 ? "add0:0" : "id" + std::to_string(i - 1) + ":0"}},
         {"outputs", 1},
         {"function", "_BuiltIn_Identity"}});
  }
  g["outputs"] = {"id8:0", "add0:0"};
  if (!deploy_json.empty()) g["deploy"] = nlohmann::json::parse(deploy_json);
  return g.dump();
}

struct Deployed {
  std::shared_ptr<rt::SimRuntime> sim;
  std::unique_ptr<services::ExchangeService> svc;
  std::unique_ptr<Deployment> deployment;
  Status status;
};

Deployed DeployOn(const std::vector<int32_t>& cluster_devices,
                  const std::string& deploy_json, bool record,
                  std::function<void(rt::SimRuntime&)> before = nullptr) {
  Deployed d;
  d.sim = testing::MakeSim(cluster_devices);
  if (record) d.sim->SetRecordCalls(true);
  if (before) before(*d.sim);
  d.svc = std::make_unique<services::ExchangeService>(d.sim.get());
  GraphDef g;
  d.status =
      deploy::ParseGraphJson(ChainGraph(deploy_json), "chain.json", ".", &g);
  if (!d.status.ok()) return d;
  ClusterConfig cluster = MakeLocalCluster(cluster_devices);
  deploy::DeployInfo info;
  d.status = deploy::DeployInfoForGraph(g, "", cluster, &info);
  if (!d.status.ok()) return d;
  Plan plan;
  d.status = deploy::MakePlan(g, cluster, info, deploy::PlanOptions{}, &plan);
  if (!d.status.ok()) return d;
  deploy::DeployOptions opts;
  opts.pool_threads = 4;
  d.status = deploy::Deploy(plan, d.svc.get(), opts, &d.deployment);
  return d;
}

void ExpectBoundCalls(rt::SimRuntime& sim) {
  size_t device_calls = 0;
  for (const auto& r : sim.CallLog()) {
    if (r.op <= rt::Op::kSetCurrentContext) continue;  // context ops
    ++device_calls;
    EXPECT_EQ(r.bound_device, r.device)
        << rt::OpName(r.op) << " on thread " << r.thread;
    EXPECT_FALSE(r.implicit_binding) << rt::OpName(r.op);
  }
  EXPECT_GT(device_calls, 20u);
}

class DeploySetTest : public ::testing::TestWithParam<
                          std::pair<std::vector<int32_t>, std::string>> {};

TEST_P(DeploySetTest, DeploysBoundEverywhereAndTouchesNothingElse) {
  const auto& [cluster, deploy_json] = GetParam();
  Deployed d = DeployOn(cluster, deploy_json, /*record=*/true);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  const Plan& plan = d.deployment->plan();
  EXPECT_EQ(plan.instances.size(), 9u);
  EXPECT_EQ(d.deployment->instances().size(), 9u);
  ExpectBoundCalls(*d.sim);
  std::set<int32_t> used(plan.devices.begin(), plan.devices.end());
  for (int32_t dev : cluster) {
    rt::DeviceStats st;
    ASSERT_TRUE(d.sim->GetDeviceStats(dev, &st).ok());
    EXPECT_EQ(st.implicit_bindings, 0u) << "device " << dev;
    if (!used.count(dev)) {
      EXPECT_EQ(st.contexts_created, 0u) << "device " << dev;
    }
  }
  ASSERT_TRUE(d.deployment->Undeploy().ok());
  d.deployment.reset();
  d.svc.reset();
  for (int32_t dev : cluster) {
    rt::DeviceStats st;
    ASSERT_TRUE(d.sim->GetDeviceStats(dev, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, 0u) << "device " << dev;
    EXPECT_EQ(st.contexts_alive, 0u) << "device " << dev;
  }
}

// add0 on 2, then id1..id8 round robin over 3, 4, 5, 2.
std::string OnTwoToFive() {
  testing::Placement p = {{"add0", {2}}};
  for (int32_t i = 1; i <= 8; ++i) {
    p.push_back({"id" + std::to_string(i), {2 + i % 4}});
  }
  return testing::DeployInfoJson(p);
}

INSTANTIATE_TEST_SUITE_P(
    Sets, DeploySetTest,
    ::testing::Values(
        std::make_pair(std::vector<int32_t>{2, 3, 4, 5}, std::string()),
        std::make_pair(std::vector<int32_t>{3, 6, 7}, std::string()),
        std::make_pair(std::vector<int32_t>{0, 1, 2, 3, 4, 5}, OnTwoToFive()),
        std::make_pair(std::vector<int32_t>{0, 1, 2, 3}, std::string())));

TEST(DeployTest, ReplicasFromLogicDeviceRanges) {
  Deployed d = DeployOn(
      {2, 3, 4, 5},
      R"({"batch_deploy_info": [{"flow_node_list": ["id4"], "logic_device_list": "0:0:2~5"}]})",
      false);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  auto id4 = d.deployment->plan().InstancesOf("id4");
  ASSERT_EQ(id4.size(), 4u);
  for (size_t r = 0; r < 4; ++r) {
    const auto& ip = d.deployment->plan().instances[id4[r]];
    EXPECT_EQ(ip.device, 2 + int32_t(r));
    EXPECT_EQ(ip.replicas, 4);
    // Each replica has its own input queue on its own device.
    int64_t q = d.deployment->plan().InputQueue("id4", ip.replica, 0);
    ASSERT_GE(q, 0);
    EXPECT_EQ(d.deployment->plan().queues[q].device, ip.device);
  }
}

TEST(DeployTest, PlanPrintsAndDrawsOneClusterPerDevice) {
  Deployed d = DeployOn({3, 6, 7}, "", false);
  ASSERT_TRUE(d.status.ok()) << d.status.ToString();
  std::string text = d.deployment->plan().ToText();
  EXPECT_THAT(text, ::testing::HasSubstr("device 6:"));
  EXPECT_THAT(text, ::testing::HasSubstr("instance add0"));
  std::string dot = d.deployment->plan().ToDot();
  for (int dev : {3, 6, 7}) {
    EXPECT_THAT(dot, ::testing::HasSubstr("subgraph cluster_device" +
                                          std::to_string(dev)));
  }
}

TEST(DeployTest, UnknownFunctionIsRejectedBeforeAnyDeviceWork) {
  auto sim = testing::MakeSim({2, 3});
  services::ExchangeService svc(sim.get());
  GraphDef g;
  ASSERT_TRUE(deploy::ParseGraphJson(
                  R"({"name": "g", "inputs": ["a"], "nodes": [{"name": "n",
                      "inputs": ["a"], "outputs": 1, "function": "NoSuchUdf"}],
                      "outputs": ["n:0"]})",
                  "g.json", ".", &g)
                  .ok());
  Plan plan;
  ASSERT_TRUE(
      deploy::MakePlan(g, MakeLocalCluster({2, 3}), {}, {}, &plan).ok());
  std::unique_ptr<Deployment> dep;
  Status s = deploy::Deploy(plan, &svc, {}, &dep);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("node 'n'"));
  EXPECT_THAT(s.message(), ::testing::HasSubstr("NoSuchUdf"));
  EXPECT_EQ(testing::ContextsCreated(*sim, {2, 3}), 0u);
}

// Rollback: for every k, failing the k-th runtime call of the deployment
// leaves nothing behind and says what failed.
TEST(DeployTest, FailingEveryKthCallRollsBackCompletely) {
  uint64_t calls = 0;
  {
    Deployed d = DeployOn({2, 3, 4, 5}, "", false,
                          [](rt::SimRuntime& sim) { sim.SetCountCalls(true); });
    ASSERT_TRUE(d.status.ok()) << d.status.ToString();
    calls = d.sim->CallCount();
  }
  ASSERT_GT(calls, 20u);
  for (uint64_t k = 1; k <= calls; ++k) {
    Deployed d = DeployOn({2, 3, 4, 5}, "", false, [k](rt::SimRuntime& sim) {
      sim.InjectFault(rt::kAnyOp, k, Status::DeviceLost("injected"));
    });
    ASSERT_FALSE(d.status.ok()) << "k=" << k;
    EXPECT_THAT(d.status.message(), ::testing::HasSubstr("injected"))
        << "k=" << k;
    EXPECT_EQ(d.deployment, nullptr);
    EXPECT_TRUE(d.svc->Stats().empty() ||
                [&] {
                  for (const auto& st : d.svc->Stats()) {
                    if (st.queues || st.groups || st.live_mbufs) return false;
                  }
                  return true;
                }())
        << "k=" << k;
    d.svc.reset();
    for (int32_t dev : {2, 3, 4, 5}) {
      rt::DeviceStats st;
      ASSERT_TRUE(d.sim->GetDeviceStats(dev, &st).ok());
      EXPECT_EQ(st.mem_used_bytes, 0u) << "k=" << k << " device " << dev;
      EXPECT_EQ(st.contexts_alive, 0u) << "k=" << k << " device " << dev;
      EXPECT_EQ(st.live_allocations, 0u) << "k=" << k << " device " << dev;
    }
  }
}

}  // namespace
}  // namespace hflow
