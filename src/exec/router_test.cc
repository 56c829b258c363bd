// Router tests: the replica choice (Note [Replica choice] in router.cc) is
// the exact splitmix hash and spreads strided ids; on a deployed graph the
// routes are resolved once, a transaction goes to the replica its id picks,
// a message is copied to its queue's device, a route label moves it along
// the replicas from its transaction's, and pool runs push over the depth
// instead of waiting.
#include "exec/router.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "deploy/graph_def.h"
#include "deploy/planner.h"
#include "services/exchange_service.h"
#include "test_util.h"

namespace hflow {
namespace exec {
namespace {

TEST(ReplicaOfTest, IsTheSplitmixHashOfTheTransactionId) {
  // Pinned values: a change of the hash moves transactions between
  // replicas, which every deployed graph would see.
  const size_t four[] = {1, 2, 1, 2, 2, 0, 3, 2};
  const size_t two[] = {1, 0, 1, 0, 0, 0, 1, 0};
  for (uint64_t t = 1; t <= 8; ++t) {
    EXPECT_EQ(ReplicaOf(t, 4), four[t - 1]) << "transaction " << t;
    EXPECT_EQ(ReplicaOf(t, 2), two[t - 1]) << "transaction " << t;
  }
}

TEST(ReplicaOfTest, StridedIdsSpreadOverEveryReplica) {
  std::set<size_t> picked;
  for (uint64_t t = 4; t <= 4 * 64; t += 4) picked.insert(ReplicaOf(t, 4));
  EXPECT_EQ(picked.size(), 4u);  // modulo would put every one on replica 0
}

TEST(ReplicaOfTest, RouteLabelsSpreadOneTransactionsCells) {
  for (uint64_t t = 1; t <= 32; ++t) {
    // Label 0 is the transaction's replica, as without balancing.
    EXPECT_EQ(ReplicaOf(t, 0, 4), ReplicaOf(t, 4));
    // Labels 1..4 (the cells of one transaction) cover every replica once,
    // starting at the transaction's own; label 5 wraps round to label 1's.
    std::set<size_t> picked;
    for (uint32_t label = 1; label <= 4; ++label) {
      const size_t r = ReplicaOf(t, label, 4);
      EXPECT_EQ(r, (ReplicaOf(t, 4) + label - 1) % 4);
      picked.insert(r);
    }
    EXPECT_EQ(picked.size(), 4u) << "transaction " << t;
    EXPECT_EQ(ReplicaOf(t, 5, 4), ReplicaOf(t, 1, 4));
    EXPECT_EQ(ReplicaOf(t, 7, 1), 0u);
  }
  // Huge labels do not overflow.
  EXPECT_LT(ReplicaOf(3, UINT32_MAX, 3), 3u);
}

// a -> n (replicas on devices 2 and 3) -> graph output n:0.
struct Deployed {
  std::shared_ptr<rt::SimRuntime> sim;
  std::unique_ptr<services::ExchangeService> svc;
  std::shared_ptr<Router> router;
  std::unique_ptr<deploy::Deployment> deployment;
};

void DeployReplicated(Deployed* d, uint32_t depth = 8) {
  d->sim = testing::MakeSim({2, 3});
  d->svc = std::make_unique<services::ExchangeService>(d->sim.get());
  deploy::GraphDef g;
  ASSERT_TRUE(deploy::ParseGraphJson(
                  R"({"name": "r", "inputs": ["a"],
                      "nodes": [{"name": "n", "inputs": ["a"], "outputs": 1,
                                 "function": "_BuiltIn_Identity"}],
                      "outputs": ["n:0"],
                      "deploy": {"batch_deploy_info": [
                          {"flow_node_list": ["n"],
                           "logic_device_list": "0:0:2~3"}]}})",
                  "r.json", ".", &g)
                  .ok());
  const ClusterConfig cluster = MakeLocalCluster({2, 3});
  deploy::DeployInfo info;
  ASSERT_TRUE(deploy::DeployInfoForGraph(g, "", cluster, &info).ok());
  deploy::PlanOptions popts;
  popts.queue_depth = depth;
  deploy::Plan plan;
  ASSERT_TRUE(deploy::MakePlan(g, cluster, info, popts, &plan).ok());
  d->router = std::make_shared<Router>();
  deploy::DeployOptions opts;
  opts.outputs = d->router;
  Status s = deploy::Deploy(plan, d->svc.get(), opts, &d->deployment);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

services::MbufPtr Message(const Deployed& d, int32_t device, uint64_t trans) {
  services::MbufPtr m;
  Status s =
      d.svc->AllocMbuf(device, d.deployment->GroupName(), "deployer", 16, &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (m) m->head().trans_id = trans;
  return m;
}

TEST(RouterTest, RoutesAreResolvedOncePerProducer) {
  Deployed d;
  ASSERT_NO_FATAL_FAILURE(DeployReplicated(&d));
  const Router::RouteTargets* a = d.router->RoutesOf({"a", 0});
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->size(), 1u);          // one consumer node
  EXPECT_EQ(a->front().size(), 2u);  // its two replicas
  EXPECT_EQ(a, d.router->RoutesOf({"a", 0}));
  EXPECT_NE(d.router->RoutesOf({"n", 0}), nullptr);  // the graph output
  EXPECT_EQ(d.router->RoutesOf({"nothing", 0}), nullptr);
  ASSERT_TRUE(d.deployment->Undeploy().ok());
}

TEST(RouterTest, TransactionGoesToItsReplicaOnThatDevice) {
  Deployed d;
  ASSERT_NO_FATAL_FAILURE(DeployReplicated(&d));
  const Router::RouteTargets& a = *d.router->RoutesOf({"a", 0});
  const deploy::Plan& plan = d.deployment->plan();
  for (uint64_t t = 1; t <= 8; ++t) {
    const size_t qi = a.front()[ReplicaOf(t, 2)];
    const int32_t device = plan.queues[qi].device;
    EXPECT_EQ(d.router->FirstDeviceOf(a, t), device);
    // Made on the other device: the router copies it to the queue's.
    services::MbufPtr m = Message(d, device == 2 ? 3 : 2, t);
    ASSERT_TRUE(m);
    ASSERT_TRUE(d.router->RouteTo(a, m, 1000).ok());
    services::MbufPtr got;
    ASSERT_TRUE(d.svc->Dequeue(*d.deployment->queue(qi), &got, 0).ok());
    EXPECT_EQ(got->device(), device);
    EXPECT_EQ(got->head().trans_id, t);
  }
  ASSERT_TRUE(d.deployment->Undeploy().ok());
}

TEST(RouterTest, RouteLabelPicksTheReplicaAndSameLabelMeetsInOne) {
  Deployed d;
  ASSERT_NO_FATAL_FAILURE(DeployReplicated(&d));
  const Router::RouteTargets& a = *d.router->RoutesOf({"a", 0});
  std::set<size_t> used;
  for (uint64_t t = 1; t <= 4; ++t) {
    for (uint32_t label = 0; label <= 2; ++label) {
      // Label 1 is the transaction's replica, label 2 the other one.
      const size_t replica = (ReplicaOf(t, 2) + (label == 2 ? 1 : 0)) % 2;
      const size_t qi = a.front()[replica];
      // Twice, as from two producers: both land in the same queue.
      for (int copy = 0; copy < 2; ++copy) {
        services::MbufPtr m = Message(d, 2, t);
        ASSERT_TRUE(m);
        m->head().route_label = label;
        ASSERT_TRUE(d.router->RouteTo(a, m, 1000).ok());
        services::MbufPtr got;
        ASSERT_TRUE(d.svc->Dequeue(*d.deployment->queue(qi), &got, 0).ok())
            << "transaction " << t << " label " << label;
        EXPECT_EQ(got->head().route_label, label);
      }
      if (label != 0) used.insert(qi);
    }
    EXPECT_EQ(used.size(), 2u)
        << "transaction " << t << ": labels 1 and 2 use both replicas";
    used.clear();
  }
  ASSERT_TRUE(d.deployment->Undeploy().ok());
}

TEST(RouterTest, PoolRunsPushOverTheDepth) {
  Deployed d;
  ASSERT_NO_FATAL_FAILURE(DeployReplicated(&d, /*depth=*/1));
  const Router::RouteTargets& out = *d.router->RoutesOf({"n", 0});
  const size_t qi = out.front().front();
  const int32_t device = d.deployment->plan().queues[qi].device;
  ASSERT_TRUE(d.router->RouteTo(out, Message(d, device, 1), 0).ok());
  // Full: a caller's thread times out...
  EXPECT_EQ(d.router->RouteTo(out, Message(d, device, 2), 0).code(),
            StatusCode::kTimeout);
  {
    // ...a pool run does not wait.
    Router::PoolRun run(nullptr);
    EXPECT_TRUE(d.router->RouteTo(out, Message(d, device, 3), 0).ok());
  }
  EXPECT_EQ(d.deployment->queue(qi)->Size(), 2u);
  ASSERT_TRUE(d.deployment->Undeploy().ok());
}

}  // namespace
}  // namespace exec
}  // namespace hflow
