// Graph model tests: graphs built with the C++ API (hflow/graph.h) convert
// into GraphDef with every field carried over; every builder misuse and
// every structural error is reported naming the graph, node and call; and
// TopologicalOrder is stable (file order among ready nodes).
#include "deploy/graph_def.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "flow_func/init_params.h"

namespace hflow {
namespace deploy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

FunctionPp AddPp(const std::string& name = "add_pp") {
  return FunctionPp(name).SetFunction("_BuiltIn_Add");
}

std::vector<std::string> Names(const std::vector<const NodeDef*>& nodes) {
  std::vector<std::string> out;
  for (const auto* n : nodes) out.push_back(n->name);
  return out;
}

std::vector<std::string> Names(const GraphDef& g) {
  std::vector<std::string> out;
  for (const auto& n : g.nodes) out.push_back(n.name);
  return out;
}

// The error message of converting `g` (empty when it converts).
std::string ConvertError(const FlowGraph& g) {
  GraphDef def;
  Status s = GraphFromFlowGraph(g, &def);
  EXPECT_TRUE(s.ok() || s.code() == StatusCode::kInvalidArgument)
      << s.ToString();
  return s.message();
}

// a, b -> add -> graph output, the README example.
struct AddGraph {
  FlowData a{"a", 0};
  FlowData b{"b", 1};
  FunctionPp pp = AddPp();
  FlowNode add{"add", 2, 1};
  FlowGraph graph{"g"};
  AddGraph() {
    add.SetInput(0, a).SetInput(1, b).AddPp(pp);
    graph.SetInputs({a, b}).SetOutputs({add});
  }
};

TEST(GraphApiTest, ConvertsAddGraphWithEveryField) {
  AddGraph t;
  t.pp.SetCompileConfig("cfg/../udf/add.json")
      .SetInitParam("out_type", DataType::kInt32)
      .SetInitParam("scale", 2.5f)
      .SetInitParam("n", int64_t{3})
      .SetInitParam("tag", std::string("x"))
      .SetInitParam("types",
                    std::vector<DataType>{DataType::kFloat, DataType::kInt64})
      .SetInitParam("shape", std::vector<std::vector<int64_t>>{{1, 2}, {3}});
  t.graph.SetExceptionCatch(true).SetDeployInfo(
      R"({"deploy_info": [{"flow_node_name": "add", "logic_device_id": "0:0:2"}]})");
  GraphDef def;
  ASSERT_TRUE(GraphFromFlowGraph(t.graph, &def).ok());
  EXPECT_EQ(def.name, "g");
  EXPECT_EQ(def.source, "FlowGraph g");
  EXPECT_EQ(def.base_dir, std::filesystem::current_path().string());
  EXPECT_THAT(def.inputs, ElementsAre("a", "b"));
  ASSERT_EQ(def.nodes.size(), 1u);
  const NodeDef& n = def.nodes[0];
  EXPECT_THAT(n.inputs, ElementsAre(OutputRef{"a", 0}, OutputRef{"b", 0}));
  EXPECT_EQ(n.output_num, 1u);
  EXPECT_EQ(n.pp.name, "add_pp");
  EXPECT_EQ(n.pp.function, "_BuiltIn_Add");
  EXPECT_EQ(n.pp.compile_config,
            (std::filesystem::current_path() / "udf/add.json").string());
  EXPECT_TRUE(n.input_map.empty());
  EXPECT_TRUE(n.output_map.empty());
  EXPECT_THAT(def.outputs, ElementsAre(OutputRef{"add", 0}));
  EXPECT_TRUE(def.exception_catch);
  EXPECT_THAT(def.deploy_info_json, HasSubstr("logic_device_id"));
  EXPECT_TRUE(def.deploy_info_path.empty());

  ASSERT_EQ(n.pp.init_params.size(), 6u);
  FlowFunc::TensorDataType dt;
  EXPECT_EQ(n.pp.init_params.at("out_type")->GetVal(dt), 0);
  EXPECT_EQ(dt, FlowFunc::TensorDataType::DT_INT32);
  float f = 0;
  EXPECT_EQ(n.pp.init_params.at("scale")->GetVal(f), 0);
  EXPECT_FLOAT_EQ(f, 2.5f);
  int64_t i = 0;
  EXPECT_EQ(n.pp.init_params.at("n")->GetVal(i), 0);
  EXPECT_EQ(i, 3);
  std::vector<FlowFunc::TensorDataType> dts;
  EXPECT_EQ(n.pp.init_params.at("types")->GetVal(dts), 0);
  EXPECT_THAT(dts, ElementsAre(FlowFunc::TensorDataType::DT_FLOAT,
                               FlowFunc::TensorDataType::DT_INT64));
  std::vector<std::vector<int64_t>> shape;
  EXPECT_EQ(n.pp.init_params.at("shape")->GetVal(shape), 0);
  EXPECT_EQ(shape, (std::vector<std::vector<int64_t>>{{1, 2}, {3}}));
}

TEST(GraphApiTest, HandlesShareTheirNodeAndLaterInitParamWins) {
  AddGraph t;
  FlowNode copy = t.add;
  FunctionPp pp_copy = t.pp;
  pp_copy.SetInitParam("k", int64_t{1}).SetInitParam("k", int64_t{2});
  EXPECT_EQ(copy.name(), "add");
  EXPECT_EQ(&copy.name(), &t.add.name());  // one node behind both handles
  GraphDef def;
  ASSERT_TRUE(GraphFromFlowGraph(t.graph, &def).ok());
  int64_t k = 0;
  EXPECT_EQ(def.nodes[0].pp.init_params.at("k")->GetVal(k), 0);
  EXPECT_EQ(k, 2);
}

// a -> split(1 in, 2 out) -> left, right -> join -> output: every node once.
TEST(GraphApiTest, DiamondCollectsEachNodeOnceInCreationOrder) {
  FlowData a("a", 0);
  FlowNode split("split", 1, 2), left("left", 1, 1), right("right", 1, 1),
      join("join", 2, 1);
  split.SetInput(0, a).AddPp(AddPp("p0"));
  left.SetInput(0, split, 0).AddPp(AddPp("p1"));
  right.SetInput(0, split, 1).AddPp(AddPp("p2"));
  join.SetInput(0, left).SetInput(1, right).AddPp(AddPp("p3"));
  FlowGraph g("diamond");
  g.SetInputs({a}).SetOutputs({join});
  GraphDef def;
  ASSERT_TRUE(GraphFromFlowGraph(g, &def).ok());
  EXPECT_THAT(Names(def), ElementsAre("split", "left", "right", "join"));
  EXPECT_THAT(def.FindNode("right")->inputs,
              ElementsAre(OutputRef{"split", 1}));
  EXPECT_THAT(def.FindNode("join")->inputs,
              ElementsAre(OutputRef{"left", 0}, OutputRef{"right", 0}));
  EXPECT_THAT(Names(TopologicalOrder(def)),
              ElementsAre("split", "left", "right", "join"));
}

// Eight nodes created consumers first, wired afterwards: GraphDef keeps
// creation order and TopologicalOrder puts producers first, taking ready
// nodes in that order.
TEST(GraphApiTest, EightNodeGraphOrdersProducersFirstStably) {
  FlowData x("x", 0), y("y", 1);
  std::vector<FlowNode> n;
  for (int i = 7; i >= 0; --i) n.emplace_back("n" + std::to_string(i), 2, 2);
  std::reverse(n.begin(), n.end());  // n[i] is "ni", created in order 7..0
  auto wire = [](FlowNode& node, auto in0, auto in1) {
    node.SetInput(0, in0).SetInput(1, in1).AddPp(AddPp("pp_" + node.name()));
  };
  wire(n[0], x, y);
  wire(n[1], y, x);
  n[2].SetInput(0, n[0], 0).SetInput(1, n[1], 1).AddPp(AddPp());
  n[3].SetInput(0, n[0], 1).SetInput(1, x).AddPp(AddPp());
  n[4].SetInput(0, n[2], 0).SetInput(1, n[3], 0).AddPp(AddPp());
  n[5].SetInput(0, n[2], 1).SetInput(1, n[1], 0).AddPp(AddPp());
  n[6].SetInput(0, n[4], 0).SetInput(1, n[5], 1).AddPp(AddPp());
  n[7].SetInput(0, n[6], 0).SetInput(1, n[3], 1).AddPp(AddPp());
  FlowGraph g("eight");
  g.SetInputs({x, y}).SetOutputs({{n[7], 1}, {n[5], 0}});
  GraphDef def;
  Status s = GraphFromFlowGraph(g, &def);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_THAT(Names(def),
              ElementsAre("n7", "n6", "n5", "n4", "n3", "n2", "n1", "n0"));
  EXPECT_THAT(def.outputs, ElementsAre(OutputRef{"n7", 1}, OutputRef{"n5", 0}));
  EXPECT_THAT(Names(TopologicalOrder(def)),
              ElementsAre("n1", "n0", "n3", "n2", "n5", "n4", "n6", "n7"));
}

TEST(GraphApiTest,
     SetOutputsOfNodesListsEveryOutputAndUnreachableNodesAreLeft) {
  FlowData a("a", 0);
  FlowNode two("two", 1, 2), unused("unused", 1, 1);
  two.SetInput(0, a).AddPp(AddPp());
  unused.SetInput(0, a).AddPp(AddPp()).AddPp(AddPp());  // error, not reached
  FlowGraph g("g");
  g.SetInputs({a}).SetOutputs({two});
  GraphDef def;
  ASSERT_TRUE(GraphFromFlowGraph(g, &def).ok());
  EXPECT_THAT(Names(def), ElementsAre("two"));
  EXPECT_THAT(def.outputs,
              ElementsAre(OutputRef{"two", 0}, OutputRef{"two", 1}));
}

TEST(GraphApiTest, SourceNodeWithoutInputsIsAllowed) {
  FlowNode src("src", 0, 1);
  src.AddPp(AddPp());
  FlowGraph g("g");
  g.SetOutputs({src});
  GraphDef def;
  ASSERT_TRUE(GraphFromFlowGraph(g, &def).ok());
  EXPECT_TRUE(def.inputs.empty());
}

TEST(GraphApiTest, MapInputAndOutputWithBatchAttrs) {
  FlowData a("a", 0), b("b", 1);
  FunctionPp pp = AddPp();
  FlowNode node("node", 2, 2);
  CountBatch cb;
  cb.batch_size = 4;
  cb.timeout = 100;
  node.SetInput(0, a)
      .SetInput(1, b)
      .AddPp(pp)
      .MapInput(0, pp, 1, {cb})
      .MapInput(1, pp, 0, {TimeBatch{50, 0, -1, false, true}})
      .MapOutput(1, pp, 0)
      .MapOutput(0, pp, 1);
  FlowGraph g("g");
  g.SetInputs({a, b}).SetOutputs({node});
  GraphDef def;
  Status s = GraphFromFlowGraph(g, &def);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const NodeDef& n = def.nodes[0];
  EXPECT_THAT(n.input_map, ElementsAre(1u, 0u));
  EXPECT_THAT(n.output_map, ElementsAre(1u, 0u));
  ASSERT_EQ(n.input_attrs.size(), 2u);
  ASSERT_EQ(n.input_attrs[0].size(), 1u);
  EXPECT_EQ(std::get<CountBatch>(n.input_attrs[0][0]).batch_size, 4);
  EXPECT_EQ(std::get<TimeBatch>(n.input_attrs[1][0]).time_window, 50);
  EXPECT_TRUE(std::get<TimeBatch>(n.input_attrs[1][0]).drop_remainder);
}

TEST(GraphApiTest, PartialMapDefaultsToIdentityForTheRest) {
  FlowData a("a", 0), b("b", 1), c("c", 2);
  FunctionPp pp = AddPp();
  FlowNode node("node", 3, 1);
  node.SetInput(0, a).SetInput(1, b).SetInput(2, c).AddPp(pp).MapInput(1, pp,
                                                                       1);
  FlowGraph g("g");
  g.SetInputs({a, b, c}).SetOutputs({node});
  GraphDef def;
  ASSERT_TRUE(GraphFromFlowGraph(g, &def).ok());
  EXPECT_THAT(def.nodes[0].input_map, ElementsAre(0u, 1u, 2u));
}

// ---- Builder misuse: deferred, reported with graph, node and call. ----

TEST(GraphApiErrorTest, MapInputIndexOutOfRange) {
  AddGraph t;
  t.add.MapInput(3, t.pp, 0);
  EXPECT_EQ(ConvertError(t.graph),
            "FlowGraph g: node 'add': MapInput(3, ...): node input index 3 "
            "out of range (2 inputs)");
}

TEST(GraphApiErrorTest, EachBuilderMisuseIsNamed) {
  struct Case {
    std::function<void(AddGraph&)> misuse;
    const char* message;
  };
  const Case cases[] = {
      {[](AddGraph& t) { t.add.AddPp(AddPp("second")); },
       "node 'add': AddPp('second'): the node already has FunctionPp 'add_pp'"},
      {[](AddGraph& t) { t.add.MapInput(0, AddPp("other"), 0); },
       "node 'add': MapInput(0, ...): FunctionPp 'other' was not added"},
      {[](AddGraph& t) { t.add.MapOutput(0, AddPp("other"), 0); },
       "node 'add': MapOutput(0, ...): FunctionPp 'other' was not added"},
      {[](AddGraph& t) { t.add.MapInput(1, t.pp, 2); },
       "node 'add': MapInput(1, ...): pp input index 2 out of range (2 "
       "inputs)"},
      {[](AddGraph& t) { t.add.MapOutput(1, t.pp, 0); },
       "node 'add': MapOutput(1, ...): node output index 1 out of range (1 "
       "outputs)"},
      {[](AddGraph& t) { t.add.MapOutput(0, t.pp, 1); },
       "MapOutput(0, ...): pp output index 1 out of range"},
      {[](AddGraph& t) { t.add.MapInput(0, t.pp, 1).MapInput(0, t.pp, 0); },
       "MapInput(0, ...): node input 0 is already mapped"},
      {[](AddGraph& t) { t.add.SetInput(2, t.a); },
       "node 'add': SetInput(2, ...): node input index 2 out of range (2 "
       "inputs)"},
      {[](AddGraph& t) {
         FlowNode up("up", 0, 1);
         t.add.SetInput(0, up, 1);
       },
       "node 'add': SetInput(0, 'up', 1): node 'up' has 1 output(s); output "
       "index 1 out of range"},
      {[](AddGraph& t) { t.graph.SetDeployInfo("deploy.json"); },
       "FlowGraph g: SetDeployInfo: the text is not a JSON object"},
      {[](AddGraph& t) {
         t.graph.SetInputs({t.b, t.a});
       },
       "FlowGraph g: SetInputs: FlowData 'b' has index 1 but is at position "
       "0"},
      {[](AddGraph& t) { t.graph.SetOutputs(std::vector<FlowNode>{}); },
       "FlowGraph g: no outputs; call SetOutputs"},
      {[](AddGraph& t) { t.graph.SetInputs({t.a}); },
       "node 'add': input 1: FlowData 'b' is not a graph input; list it in "
       "FlowGraph::SetInputs"},
      {[](AddGraph& t) { t.add.SetInput(1, FlowData("a", 1)); },
       "node 'add': input 1: FlowData 'a' has index 1 but the graph input of "
       "that name has index 0"},
  };
  for (const auto& c : cases) {
    AddGraph t;
    c.misuse(t);
    EXPECT_THAT(ConvertError(t.graph), HasSubstr(c.message));
  }
}

TEST(GraphApiErrorTest, NodeWithoutPpAndFirstErrorInCreationOrder) {
  FlowData a("a", 0);
  FlowNode first("first", 1, 1), second("second", 1, 1);
  first.SetInput(0, a);  // no AddPp
  second.SetInput(0, first).AddPp(AddPp()).SetInput(3, a);
  FlowGraph g("g");
  g.SetInputs({a}).SetOutputs({second});
  EXPECT_EQ(ConvertError(g),
            "FlowGraph g: node 'first': has no FunctionPp; call AddPp");
}

// ---- Structural errors found by ValidateGraphStructure via the API. ----

TEST(GraphApiErrorTest, StructuralErrorsNameGraphAndNode) {
  {
    AddGraph t;
    FlowNode dup("add", 1, 1);
    dup.SetInput(0, t.add).AddPp(AddPp());
    t.graph.SetOutputs({dup});
    EXPECT_THAT(ConvertError(t.graph),
                HasSubstr("FlowGraph g: node 'add' is defined twice"));
  }
  {
    FlowData a("add", 0);
    FlowNode add("add", 1, 1);
    add.SetInput(0, a).AddPp(AddPp());
    FlowGraph g("g");
    g.SetInputs({a}).SetOutputs({add});
    EXPECT_THAT(ConvertError(g),
                HasSubstr("node 'add' has the name of a graph input"));
  }
  {
    AddGraph t;
    FlowNode lone("lone", 2, 1);
    lone.SetInput(0, t.add).AddPp(AddPp());
    t.graph.SetOutputs({lone});
    EXPECT_EQ(ConvertError(t.graph),
              "FlowGraph g: node 'lone': input 1 is not connected; connect "
              "every node input to a graph input or a node output");
  }
  {
    AddGraph t;
    t.graph.SetOutputs({{t.add, 1}});
    EXPECT_THAT(ConvertError(t.graph),
                HasSubstr("FlowGraph g: output 0: 'add:1' is out of range: "
                          "node 'add' has 1 output(s)"));
  }
  {
    AddGraph t;
    FlowGraph unnamed("");
    unnamed.SetInputs({t.a, t.b}).SetOutputs({t.add});
    EXPECT_THAT(ConvertError(unnamed),
                HasSubstr("the graph has an empty name"));
  }
  {
    AddGraph t;
    t.add.MapInput(0, t.pp, 1);  // input 1 keeps identity: pp input 1 twice
    EXPECT_THAT(ConvertError(t.graph),
                HasSubstr("node 'add': input_map[1]: pp index 1 is mapped "
                          "twice"));
  }
  {
    AddGraph t;
    t.add.MapInput(0, t.pp, 0, {CountBatch{}});
    EXPECT_THAT(ConvertError(t.graph),
                HasSubstr("node 'add': input 0: count batch batch_size must "
                          "be >= 1"));
  }
  {
    AddGraph t;
    CountBatch cb;
    cb.batch_size = 2;
    t.add.MapInput(0, t.pp, 0, {cb, TimeBatch{10}});
    EXPECT_THAT(ConvertError(t.graph), HasSubstr("an input takes one"));
  }
}

TEST(GraphApiErrorTest, CycleIsNamedAndCanBeBroken) {
  FlowData a("a", 0);
  FlowNode x("x", 1, 1), y("y", 1, 1), z("z", 1, 1);
  x.SetInput(0, z).AddPp(AddPp());
  y.SetInput(0, x).AddPp(AddPp());
  z.SetInput(0, y).AddPp(AddPp());
  FlowGraph g("g");
  g.SetInputs({a}).SetOutputs({z});
  EXPECT_THAT(ConvertError(g),
              HasSubstr("FlowGraph g: cycle: x -> y -> z -> x"));
  x.SetInput(0, a);  // breaks the cycle (and the shared_ptr loop)
  EXPECT_EQ(ConvertError(g), "");
}

TEST(GraphApiErrorTest, SelfLoop) {
  FlowNode s("s", 1, 1);
  s.SetInput(0, s).AddPp(AddPp());
  FlowGraph g("g");
  g.SetOutputs({s});
  EXPECT_THAT(ConvertError(g), HasSubstr("cycle: s -> s"));
  s.SetInput(0, FlowData("a", 0));
}

}  // namespace
}  // namespace deploy
}  // namespace hflow
