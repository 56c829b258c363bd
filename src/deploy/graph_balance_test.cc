// Balance nodes in both front ends: FlowNode::SetBalanceScatter/Gather and
// the graph file's "balance" reach NodeDef; setting both, an unknown kind,
// and GE's compile check (a node's producers are all balance nodes or none)
// are rejected naming the file or graph and the node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "deploy/graph_def.h"

namespace hflow {
namespace deploy {
namespace {

using flow_func::BalanceKind;
using ::testing::HasSubstr;
using Json = nlohmann::json;

Status Parse(const Json& j, GraphDef* g) {
  return ParseGraphJson(j.dump(), "g.json", "/graphs", g);
}

// a -> cut (scatter) -> work -> join (gather), and `other` fed by a;
// `mix` reads work and join (or what a case rewires).
Json Graph() {
  auto node = [](const char* name, Json inputs) {
    return Json{
        {"name", name}, {"inputs", inputs}, {"outputs", 1}, {"function", "F"}};
  };
  Json j = {{"name", "g"}, {"inputs", {"a"}}, {"outputs", {"mix:0"}}};
  j["nodes"] = {node("cut", {"a"}), node("work", {"cut:0"}),
                node("join", {"work:0"}), node("other", {"a"}),
                node("mix", {"cut:0", "join:0"})};
  j["nodes"][0]["balance"] = "scatter";
  j["nodes"][2]["balance"] = "gather";
  return j;
}

TEST(GraphBalanceTest, FileFieldIsParsedAndCheckedLikeGe) {
  GraphDef g;
  Status s = Parse(Graph(), &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.nodes[0].balance, BalanceKind::kScatter);
  EXPECT_EQ(g.nodes[1].balance, BalanceKind::kNone);
  EXPECT_EQ(g.nodes[2].balance, BalanceKind::kGather);

  Json j = Graph();
  j["nodes"][0]["balance"] = "both";
  s = Parse(j, &g);
  EXPECT_THAT(s.ToString(),
              HasSubstr("g.json: nodes[0].balance: 'both' is not a balance "
                        "kind; write \"scatter\" or \"gather\""));
  j["nodes"][0]["balance"] = true;
  EXPECT_THAT(Parse(j, &g).ToString(), HasSubstr("g.json: nodes[0].balance"));

  // mix reads a balance node (cut) and a graph input: mixed.
  j = Graph();
  j["nodes"][4]["inputs"] = {"cut:0", "a"};
  s = Parse(j, &g);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.ToString(),
              HasSubstr("g.json: node 'mix': has 2 input nodes, but only "
                        "some are balance nodes (cut; not: a)"));
  // Three producers, one without the attribute.
  j = Graph();
  j["nodes"][4]["inputs"] = {"cut:0", "join:0", "work:0"};
  EXPECT_THAT(Parse(j, &g).ToString(),
              HasSubstr("node 'mix': has 3 input nodes, but only some are "
                        "balance nodes (cut, join; not: work)"));
  // None are balance nodes, or one producer read twice: fine.
  j = Graph();
  j["nodes"][4]["inputs"] = {"work:0", "other:0"};
  EXPECT_TRUE(Parse(j, &g).ok());
  j["nodes"][4]["inputs"] = {"cut:0", "cut:0"};
  EXPECT_TRUE(Parse(j, &g).ok());
}

TEST(GraphBalanceTest, ApiSetsTheKindAndRejectsBoth) {
  FunctionPp pp = FunctionPp("pp").SetFunction("_BuiltIn_Add");
  FlowData a{"a", 0};
  FlowNode cut("cut", 1, 1), join("join", 1, 1);
  cut.SetInput(0, a).AddPp(pp).SetBalanceScatter().SetBalanceScatter();
  join.SetInput(0, cut).AddPp(pp).SetBalanceGather();
  FlowGraph graph("g");
  graph.SetInputs({a}).SetOutputs({join});
  GraphDef def;
  Status s = GraphFromFlowGraph(graph, &def);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(def.nodes.size(), 2u);
  EXPECT_EQ(def.FindNode("cut")->balance, BalanceKind::kScatter);
  EXPECT_EQ(def.FindNode("join")->balance, BalanceKind::kGather);

  join.SetBalanceScatter();
  s = GraphFromFlowGraph(graph, &def);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("node 'join': SetBalanceScatter(): the node is "
                        "already a gather node; a node is a balance scatter "
                        "or a balance gather node, not both"));
}

}  // namespace
}  // namespace deploy
}  // namespace hflow
