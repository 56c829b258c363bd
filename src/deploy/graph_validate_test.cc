// ValidateGraphStructure on hand-written GraphDefs: each structural error
// is reported naming the source, node and field; OutputRef/GraphDef helpers;
// TopologicalOrder is stable (file order among ready nodes) and leaves out
// nodes on cycles.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "deploy/graph_def.h"

namespace hflow {
namespace deploy {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Names(const std::vector<const NodeDef*>& nodes) {
  std::vector<std::string> out;
  for (const auto* n : nodes) out.push_back(n->name);
  return out;
}

NodeDef Node(const std::string& name, std::vector<OutputRef> inputs,
             uint32_t outputs = 1) {
  NodeDef n;
  n.name = name;
  n.inputs = std::move(inputs);
  n.output_num = outputs;
  n.pp.function = "F";
  return n;
}

GraphDef Chain() {
  GraphDef g;
  g.name = "chain";
  g.source = "chain.json";
  g.inputs = {"a"};
  g.nodes = {Node("p", {{"a", 0}}, 2), Node("q", {{"p", 1}, {"p", 0}})};
  g.outputs = {{"q", 0}};
  return g;
}

TEST(GraphValidateTest, AcceptsChainAndHelpersWork) {
  GraphDef g = Chain();
  EXPECT_TRUE(ValidateGraphStructure(g).ok());
  EXPECT_EQ(g.FindNode("q"), &g.nodes[1]);
  EXPECT_EQ(g.FindNode("a"), nullptr);
  EXPECT_TRUE(g.IsGraphInput("a"));
  EXPECT_FALSE(g.IsGraphInput("p"));
  EXPECT_EQ((OutputRef{"p", 1}).ToString(), "p:1");
}

TEST(GraphValidateTest, RejectsEachStructuralError) {
  struct Case {
    std::function<void(GraphDef&)> breakit;
    const char* message;
  };
  const Case cases[] = {
      {[](GraphDef& g) { g.nodes.clear(); },
       "chain.json: the graph has no nodes"},
      {[](GraphDef& g) { g.inputs.push_back("a"); },
       "chain.json: graph input 'a' is declared twice"},
      {[](GraphDef& g) { g.inputs.push_back(""); },
       "graph input has an empty name"},
      {[](GraphDef& g) { g.nodes[1].name = "q:1"; },
       "names may not contain ':'"},
      {[](GraphDef& g) { g.nodes[1].inputs[0].op = "pp"; },
       "chain.json: node 'q': input 0: 'pp:1' is neither a graph input nor a "
       "node (known: a, p, q)"},
      {[](GraphDef& g) { g.nodes[1].inputs[0].index = 2; },
       "node 'q': input 0: 'p:2' is out of range: node 'p' has 2 output(s)"},
      {[](GraphDef& g) { g.nodes[1].pp.function.clear(); },
       "node 'q': has no function and no compile config"},
      {[](GraphDef& g) { g.nodes[1].input_map = {0}; },
       "node 'q': input_map has 1 entries but the node has 2"},
      {[](GraphDef& g) {
         g.nodes[1].input_map = {0, 2};
       },
       "node 'q': input_map[1]: pp index 2 is out of range"},
      {[](GraphDef& g) {
         g.nodes[0].output_map = {1, 1};
       },
       "node 'p': output_map[1]: pp index 1 is mapped twice"},
      {[](GraphDef& g) { g.nodes[1].input_attrs = {{}}; },
       "node 'q': input attrs cover 1 inputs but the node has 2"},
      {[](GraphDef& g) {
         g.nodes[1].input_attrs = {{}, {TimeBatch{0}}};
       },
       "node 'q': input 1: time batch time_window must be > 0 ms"},
      {[](GraphDef& g) { g.outputs.clear(); }, "the graph has no outputs"},
      {[](GraphDef& g) {
         g.outputs = {{"a", 0}};
       },
       "output 0: 'a' is a graph input"},
      {[](GraphDef& g) {
         g.outputs = {{"r", 0}};
       },
       "output 0: 'r:0' is not a node"},
      {[](GraphDef& g) {
         g.nodes[0].inputs[0] = {"q", 0};
       },
       "chain.json: cycle: p -> q -> p"},
  };
  for (const auto& c : cases) {
    GraphDef g = Chain();
    c.breakit(g);
    Status s = ValidateGraphStructure(g);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.message;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
}

TEST(GraphValidateTest, TopologicalOrderIsStableAndLeavesOutCycles) {
  GraphDef g;
  g.name = "t";
  g.inputs = {"a"};
  g.nodes = {Node("late", {{"mid", 0}}), Node("src2", {}),
             Node("mid", {{"a", 0}}), Node("src1", {})};
  g.outputs = {{"late", 0}};
  EXPECT_THAT(Names(TopologicalOrder(g)),
              ElementsAre("src2", "mid", "late", "src1"));
  g.nodes.push_back(Node("c1", {{"c2", 0}}));
  g.nodes.push_back(Node("c2", {{"c1", 0}}));
  EXPECT_THAT(Names(TopologicalOrder(g)),
              ElementsAre("src2", "mid", "late", "src1"));
}

// A chain of 200000 nodes used to overflow the stack: the cycle search was
// recursive, one frame per node on the path. It is iterative now.
TEST(GraphValidateTest, LongChainValidatesWithoutDeepRecursion) {
  constexpr int kNodes = 200000;
  GraphDef g;
  g.name = "long";
  g.source = "long.json";
  g.inputs = {"a"};
  g.nodes.reserve(kNodes);
  g.nodes.push_back(Node("n0", {{"a", 0}}));
  for (int i = 1; i < kNodes; ++i) {
    g.nodes.push_back(
        Node("n" + std::to_string(i), {{"n" + std::to_string(i - 1), 0}}));
  }
  g.outputs = {{"n" + std::to_string(kNodes - 1), 0}};
  Status s = ValidateGraphStructure(g);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(TopologicalOrder(g).size(), static_cast<size_t>(kNodes));

  // Closing the chain into a loop is found at the end of the long path.
  g.nodes[0].inputs.push_back({"n" + std::to_string(kNodes - 1), 0});
  s = ValidateGraphStructure(g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("long.json: cycle: n0 -> n1 -> n2 -> "));
  EXPECT_THAT(s.message(), HasSubstr(" -> n199999 -> n0; a node may not"));
}

// Found by fuzzing (fuzz/regressions/graph_file/batch_name_is_graph_input):
// a batch attr on input i of node n becomes node "n.batch<i>"; a graph input
// of that name passed validation and made the expanded graph invalid.
TEST(GraphValidateTest, BatchNodeNameMayNotBeTaken) {
  GraphDef g;
  g.name = "b";
  g.source = "b.json";
  g.inputs = {"n.batch0"};
  g.nodes = {Node("n", {{"n.batch0", 0}})};
  g.nodes[0].input_attrs = {{CountBatch{2}}};
  g.outputs = {{"n", 0}};
  Status s = ValidateGraphStructure(g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("b.json: node 'n': input 0: its batch attr becomes "
                        "node 'n.batch0', which is already the name of a "
                        "graph input; rename that one"));

  g.inputs = {"a"};
  g.nodes[0].inputs = {{"a", 0}};
  g.nodes.push_back(Node("n.batch0", {{"a", 0}}));
  s = ValidateGraphStructure(g);
  EXPECT_THAT(s.message(), HasSubstr("'n.batch0', which is already the name "
                                     "of a node"));
  g.nodes[0].input_attrs.clear();
  EXPECT_TRUE(ValidateGraphStructure(g).ok());
}

// _BuiltIn_Add with one input failed every Proc with 164000; the graph is
// now refused naming the node (BuildGraph, hflow validate and run).
TEST(GraphValidateTest, BuiltinArityIsChecked) {
  GraphDef g = Chain();
  g.nodes[1].pp.function = "_BuiltIn_Add";
  EXPECT_TRUE(CheckBuiltinArity(g).ok());  // q: 2 inputs, 1 output
  g.nodes[1].inputs = {{"p", 0}};
  EXPECT_TRUE(ValidateGraphStructure(g).ok());  // structure alone is fine
  Status s = CheckBuiltinArity(g);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("chain.json: node 'q': _BuiltIn_Add takes 2 inputs "
                        "and gives 1 output, but the node has 1 input(s)"));
  g.nodes[1].pp.compile_config = "/x/add_func.json";  // a UDF of that name
  EXPECT_TRUE(CheckBuiltinArity(g).ok());

  g = Chain();
  g.nodes[0].pp.function = "_BuiltIn_Identity";  // p: 1 input, 2 outputs
  EXPECT_THAT(CheckBuiltinArity(g).message(),
              HasSubstr("node 'p': _BuiltIn_Identity passes input i to "
                        "output i, but the node has 2 outputs for 1 input"));
}

}  // namespace
}  // namespace deploy
}  // namespace hflow
