// Flow attributes (hflow/graph.h FlowAttr; GE's _flow_attr_depth and
// _flow_attr_enqueue_policy): the graph file's "flow_attr" objects at
// graph, node and edge level and their errors (depth below 2, an unknown
// policy, a bad index or name); the C++ API's setters and their misuse
// reported on conversion, naming graph, node and call; and the planner's
// precedence (consumer input > producer output > node > graph >
// Options::queue_depth / FIFO), with the plan text showing OVERWRITE.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "deploy/graph_def.h"
#include "deploy/planner.h"
#include "hflow/cluster.h"
#include "hflow/graph.h"

namespace hflow {
namespace deploy {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// a ── n1 ──┬── n2 ── out0
// b ────────┘   (n2 has inputs n1:0 and b); n1:0 is also out1.
std::string GraphText(const std::string& graph_extra,
                      const std::string& n1_extra,
                      const std::string& n2_extra) {
  return R"({"name": "g", "inputs": ["a", "b"],)" + graph_extra +
         R"( "nodes": [
    {"name": "n1", "inputs": ["a"], "outputs": 1,
     "function": "_BuiltIn_Identity")" +
         n1_extra + R"(},
    {"name": "n2", "inputs": ["n1:0", "b"], "outputs": 1,
     "function": "_BuiltIn_Add")" +
         n2_extra + R"(}],
   "outputs": ["n2:0", "n1:0"]})";
}

Status Parse(const std::string& text, GraphDef* g) {
  return ParseGraphJson(text, "g.json", "/tmp", g);
}

Plan MakeTestPlan(const GraphDef& g, uint32_t default_depth = 64) {
  PlanOptions o;
  o.queue_depth = default_depth;
  Plan plan;
  Status s = MakePlan(g, MakeLocalCluster({2, 3}), DeployInfo{}, o, &plan);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return plan;
}

const QueuePlan& Queue(const Plan& p, const std::string& name) {
  for (const QueuePlan& q : p.queues) {
    if (q.name == name) return q;
  }
  ADD_FAILURE() << "no queue " << name;
  return p.queues.front();
}

TEST(FlowAttrFileTest, ReadsEveryLevel) {
  GraphDef g;
  Status s =
      Parse(GraphText(R"( "flow_attr": {"depth": 16, "enqueue_policy": "FIFO"},
                    "input_flow_attrs": {"b": {"enqueue_policy": "OVERWRITE"}},)",
                      R"(, "flow_attr": {"depth": 8},
                   "output_flow_attrs": {"0": {"depth": 4}})",
                      R"(, "input_flow_attrs": {"1": {"depth": 2}})"),
            &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.flow_attr.depth, 16);
  EXPECT_EQ(g.flow_attr.enqueue_policy, EnqueuePolicy::kFifo);
  ASSERT_EQ(g.input_flow_attrs.size(), 2u);
  EXPECT_EQ(g.input_flow_attrs[0].enqueue_policy, EnqueuePolicy::kUnset);
  EXPECT_EQ(g.input_flow_attrs[1].enqueue_policy, EnqueuePolicy::kOverwrite);
  EXPECT_EQ(g.nodes[0].flow_attr.depth, 8);
  ASSERT_EQ(g.nodes[0].output_flow_attrs.size(), 1u);
  EXPECT_EQ(g.nodes[0].output_flow_attrs[0].depth, 4);
  ASSERT_EQ(g.nodes[1].input_flow_attrs.size(), 2u);
  EXPECT_EQ(g.nodes[1].input_flow_attrs[0].depth, 0);
  EXPECT_EQ(g.nodes[1].input_flow_attrs[1].depth, 2);
}

TEST(FlowAttrFileTest, BadValuesNameTheFieldAndTheFix) {
  struct Case {
    std::string graph, n1, n2, path, problem;
  };
  const Case cases[] = {
      {"", R"(, "flow_attr": {"depth": 1})", "", "nodes[0].flow_attr.depth",
       "depth 1: must be at least 2"},
      {R"( "flow_attr": {"depth": -3},)", "", "", "flow_attr.depth",
       "depth -3: must be at least 2"},
      {"", "", R"(, "input_flow_attrs": {"0": {"enqueue_policy": "LIFO"}})",
       "nodes[1].input_flow_attrs.0.enqueue_policy",
       "unknown enqueue policy 'LIFO'; expected FIFO or OVERWRITE"},
      {"", "", R"(, "input_flow_attrs": {"2": {"depth": 4}})",
       "nodes[1].input_flow_attrs.2", "the key must be an index below 2"},
      {"", R"(, "output_flow_attrs": {"1": {"depth": 4}})", "",
       "nodes[0].output_flow_attrs.1", "the key must be an index below 1"},
      {R"( "input_flow_attrs": {"c": {"depth": 4}},)", "", "",
       "input_flow_attrs.c", "'c' is not a graph input"},
      {"", R"(, "flow_attr": {"depht": 4})", "", "nodes[0].flow_attr", "depht"},
      {"", R"(, "flow_attr": {"depth": "8"})", "", "nodes[0].flow_attr.depth",
       "must be an integer"},
      {"", R"(, "flow_attr": 8)", "", "nodes[0].flow_attr", "must be"},
  };
  for (const Case& c : cases) {
    GraphDef g;
    Status s = Parse(GraphText(c.graph, c.n1, c.n2), &g);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.path;
    EXPECT_THAT(s.message(),
                AllOf(HasSubstr("g.json: " + c.path), HasSubstr(c.problem)))
        << c.path;
  }
}

// The most specific level wins, depth and policy each on its own.
TEST(FlowAttrPlanTest, MostSpecificLevelWinsForTheDepth) {
  GraphDef g;
  Status s = Parse(GraphText(R"( "flow_attr": {"depth": 16},
                    "input_flow_attrs": {"a": {"depth": 12}},)",
                             R"(, "output_flow_attrs": {"0": {"depth": 4}})",
                             R"(, "flow_attr": {"depth": 8},
                   "input_flow_attrs": {"0": {"depth": 2}})"),
                   &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Plan plan = MakeTestPlan(g);
  // n1.in0 <- a: the graph input's edge attr.
  EXPECT_EQ(Queue(plan, "n1.in0").depth, 12u);
  // n2.in0 <- n1:0: the consumer input (2) beats the producer output (4).
  EXPECT_EQ(Queue(plan, "n2.in0").depth, 2u);
  // n2.in1 <- b: n2's node attr.
  EXPECT_EQ(Queue(plan, "n2.in1").depth, 8u);
  // out0 <- n2:0: no edge attr, no consumer node: the graph's.
  EXPECT_EQ(Queue(plan, "out0").depth, 16u);
  // out1 <- n1:0: the producer output's.
  EXPECT_EQ(Queue(plan, "out1").depth, 4u);
  EXPECT_THAT(plan.ToText(), HasSubstr("queue n2.in0 depth 2 <- n1:0"));
}

// a ── n1 ── n2 ── out0: single inputs and one output, so OVERWRITE may go
// anywhere.
std::string ChainText(const std::string& graph_extra,
                      const std::string& n2_extra) {
  return R"({"name": "c", "inputs": ["a"],)" + graph_extra + R"( "nodes": [
    {"name": "n1", "inputs": ["a"], "outputs": 1, "function": "_BuiltIn_Identity"},
    {"name": "n2", "inputs": ["n1"], "outputs": 1, "function": "_BuiltIn_Identity")" +
         n2_extra + R"(}], "outputs": ["n2:0"]})";
}

TEST(FlowAttrPlanTest, MostSpecificLevelWinsForThePolicy) {
  GraphDef g;
  Status s = Parse(
      ChainText(R"( "flow_attr": {"depth": 5, "enqueue_policy": "OVERWRITE"},)",
                R"(, "flow_attr": {"enqueue_policy": "FIFO"})"),
      &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Plan plan = MakeTestPlan(g);
  EXPECT_EQ(Queue(plan, "n1.in0").policy, EnqueuePolicy::kOverwrite);
  EXPECT_EQ(Queue(plan, "n2.in0").policy, EnqueuePolicy::kFifo);
  EXPECT_EQ(Queue(plan, "n2.in0").depth, 5u) << "the graph's depth is kept";
  EXPECT_EQ(Queue(plan, "out0").policy, EnqueuePolicy::kOverwrite);
  EXPECT_THAT(plan.ToText(), HasSubstr("queue n1.in0 depth 5 OVERWRITE <- a"));
  ASSERT_TRUE(
      Parse(ChainText(R"( "flow_attr": {"enqueue_policy": "OVERWRITE"},)",
                      R"(, "flow_attr": {"enqueue_policy": "FIFO"},
                         "input_flow_attrs": {"0": {"enqueue_policy": "OVERWRITE"}})"),
            &g)
          .ok());
  plan = MakeTestPlan(g);
  EXPECT_EQ(Queue(plan, "n2.in0").policy, EnqueuePolicy::kOverwrite);
}

// Where messages pair by transaction a drop would strand the partner.
TEST(FlowAttrPlanTest, OverwriteWhereMessagesPairIsRefused) {
  struct Case {
    std::string graph, n2, expected;
  };
  const Case cases[] = {
      {"", R"(, "input_flow_attrs": {"1": {"enqueue_policy": "OVERWRITE"}})",
       "g.json: node 'n2' input 1 (one of 2 inputs it pairs): enqueue policy "
       "OVERWRITE is not supported"},
      {R"( "flow_attr": {"enqueue_policy": "OVERWRITE"},)", R"(, "flow_attr":
        {"enqueue_policy": "FIFO"})",
       "g.json: graph output 0 (one of 2 outputs a fetch pairs)"},
  };
  for (const Case& c : cases) {
    GraphDef g;
    ASSERT_TRUE(Parse(GraphText(c.graph, "", c.n2), &g).ok());
    Plan plan;
    Status s = MakePlan(g, MakeLocalCluster({2, 3}), DeployInfo{},
                        PlanOptions{}, &plan);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr(c.expected));
  }
  // Only n1.in0 and the graph outputs remain OVERWRITE: the outputs pair.
  GraphDef g;
  ASSERT_TRUE(
      Parse(
          GraphText(
              "",
              R"(, "output_flow_attrs": {"0": {"enqueue_policy": "OVERWRITE"}})",
              ""),
          &g)
          .ok());
  Plan plan;
  Status s =
      MakePlan(g, MakeLocalCluster({2, 3}), DeployInfo{}, PlanOptions{}, &plan);
  EXPECT_THAT(s.message(), HasSubstr("node 'n2' input 0"));
}

TEST(FlowAttrPlanTest, NoAttributesKeepTheOptionsDepthAndFifo) {
  GraphDef g;
  ASSERT_TRUE(Parse(GraphText("", "", ""), &g).ok());
  Plan plan = MakeTestPlan(g, 5);
  for (const QueuePlan& q : plan.queues) {
    EXPECT_EQ(q.depth, 5u) << q.name;
    EXPECT_EQ(q.policy, EnqueuePolicy::kFifo) << q.name;
  }
  EXPECT_THAT(plan.ToText(), ::testing::Not(HasSubstr("OVERWRITE")));
}

// A batch input's attrs reach the queue the producer now fills.
TEST(FlowAttrPlanTest, BatchNodeTakesTheInputsAttributes) {
  GraphDef g;
  ASSERT_TRUE(
      Parse(GraphText(
                "", "",
                R"(, "input_attrs": {"1": {"count_batch": {"batch_size": 2}}},
                         "input_flow_attrs": {"1": {"depth": 3}})"),
            &g)
          .ok());
  ASSERT_TRUE(ExpandInputAttrs(&g).ok());
  Plan plan = MakeTestPlan(g);
  EXPECT_EQ(Queue(plan, "n2.batch1.in0").depth, 3u);
  EXPECT_EQ(Queue(plan, "n2.batch1.in0").policy, EnqueuePolicy::kFifo);
  EXPECT_EQ(Queue(plan, "n2.in1").depth, 3u);
}

// ---- The C++ API --------------------------------------------------------

FlowGraph ApiGraph(FlowNode& n1, FlowNode& n2, FlowData& a) {
  FunctionPp p1("p1"), p2("p2");
  p1.SetFunction("_BuiltIn_Identity");
  p2.SetFunction("_BuiltIn_Identity");
  n1.AddPp(p1).SetInput(0, a);
  n2.AddPp(p2).SetInput(0, n1, 0);
  FlowGraph g("api");
  g.SetInputs({a}).SetOutputs({n2});
  return g;
}

TEST(FlowAttrApiTest, SettersReachThePlan) {
  FlowData a("a", 0);
  FlowNode n1("n1", 1, 1), n2("n2", 1, 1);
  FlowGraph g = ApiGraph(n1, n2, a);
  // Set after the FlowData was copied into the node and the graph: copies
  // share it.
  a.SetFlowAttr({6, EnqueuePolicy::kUnset});
  n1.SetOutputFlowAttr(0, {0, EnqueuePolicy::kOverwrite});
  n2.SetFlowAttr({9, EnqueuePolicy::kFifo});
  g.SetFlowAttr({20, EnqueuePolicy::kUnset});
  GraphDef def;
  Status s = GraphFromFlowGraph(g, &def);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Plan plan = MakeTestPlan(def);
  EXPECT_EQ(Queue(plan, "n1.in0").depth, 6u);
  EXPECT_EQ(Queue(plan, "n1.in0").policy, EnqueuePolicy::kFifo);
  EXPECT_EQ(Queue(plan, "n2.in0").depth, 9u);
  EXPECT_EQ(Queue(plan, "n2.in0").policy, EnqueuePolicy::kOverwrite);
  EXPECT_EQ(Queue(plan, "out0").depth, 20u);
  n2.SetInputFlowAttr(0, {3, EnqueuePolicy::kFifo});
  ASSERT_TRUE(GraphFromFlowGraph(g, &def).ok());
  plan = MakeTestPlan(def);
  EXPECT_EQ(Queue(plan, "n2.in0").depth, 3u);
  EXPECT_EQ(Queue(plan, "n2.in0").policy, EnqueuePolicy::kFifo);
}

TEST(FlowAttrApiTest, MisuseIsReportedNamingGraphNodeAndCall) {
  struct Case {
    std::function<void(FlowNode&, FlowNode&, FlowData&, FlowGraph&)> misuse;
    std::string expected;
  };
  const Case cases[] = {
      {[](FlowNode&, FlowNode& n2, FlowData&, FlowGraph&) {
         n2.SetFlowAttr({1, EnqueuePolicy::kFifo});
       },
       "FlowGraph api: node 'n2': SetFlowAttr: depth 1: must be at least 2"},
      {[](FlowNode& n1, FlowNode&, FlowData&, FlowGraph&) {
         n1.SetOutputFlowAttr(1, {4, EnqueuePolicy::kFifo});
       },
       "node 'n1': SetOutputFlowAttr(1, ...): node output index 1 out of "
       "range (1 outputs)"},
      {[](FlowNode&, FlowNode& n2, FlowData&, FlowGraph&) {
         n2.SetInputFlowAttr(2, {4, EnqueuePolicy::kFifo});
       },
       "node 'n2': SetInputFlowAttr(2, ...): node input index 2 out of range"},
      {[](FlowNode&, FlowNode&, FlowData& a, FlowGraph&) {
         a.SetFlowAttr({0, static_cast<EnqueuePolicy>(7)});
       },
       "FlowData 'a': SetFlowAttr: enqueue policy 7 is not an EnqueuePolicy"},
      {[](FlowNode&, FlowNode&, FlowData&, FlowGraph& g) {
         g.SetFlowAttr({-1, EnqueuePolicy::kFifo});
       },
       "FlowGraph api: SetFlowAttr: depth -1: must be at least 2"},
  };
  for (const Case& c : cases) {
    FlowData a("a", 0);
    FlowNode n1("n1", 1, 1), n2("n2", 1, 1);
    FlowGraph g = ApiGraph(n1, n2, a);
    c.misuse(n1, n2, a, g);
    GraphDef def;
    Status s = GraphFromFlowGraph(g, &def);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.expected;
    EXPECT_THAT(s.message(), HasSubstr(c.expected));
  }
}

TEST(FlowAttrApiTest, PolicyNamesAreGes) {
  EnqueuePolicy p = EnqueuePolicy::kUnset;
  EXPECT_TRUE(ParseEnqueuePolicy("OVERWRITE", &p));
  EXPECT_EQ(p, EnqueuePolicy::kOverwrite);
  EXPECT_TRUE(ParseEnqueuePolicy("FIFO", &p));
  EXPECT_EQ(p, EnqueuePolicy::kFifo);
  EXPECT_FALSE(ParseEnqueuePolicy("fifo", &p));
  EXPECT_STREQ(EnqueuePolicyName(EnqueuePolicy::kOverwrite), "OVERWRITE");
  EXPECT_STREQ(EnqueuePolicyName(EnqueuePolicy::kUnset), "");
}

}  // namespace
}  // namespace deploy
}  // namespace hflow
