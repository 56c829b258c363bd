// GE host program (g): what hflow does not run yet fails cleanly. A model
// node (a GraphPp whose graph is built from all_ops.h's op::Data and
// op::Add), a UDF with an invoked closure, the model parsers and RunGraph
// each return a GE error, never crash, and the build errors name the node.
//
//   a ─┐
//      ├─ node "model" (GraphPp "add_pp": Data a, Data b -> Add) ── out
//   b ─┘
//
// The session stays usable: a plain UDF graph added afterwards runs.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "all_ops.h"
#include "flow_graph/data_flow.h"
#include "ge/ge_api.h"
#include "ge_check.h"
#include "parser/onnx_parser.h"
#include "parser/tensorflow_parser.h"

using namespace ge;
using namespace dflow;
using namespace ge_host;

namespace {

Graph AddModel() {
  op::Data a("a");
  a.set_attr_index(0);
  op::Data b("b");
  b.set_attr_index(1);
  op::Add add("add");
  add.set_input_x1(a).set_input_x2(b);
  Graph graph("add_model");
  graph.SetInputs({a, b}).SetOutputs({add});
  return graph;
}

// GE's samples give a GraphPp a compile config of build options; the
// first graph's node has one, the second's none.
FlowGraph ModelGraph(const char* node_name, const char* compile_config) {
  FlowData a("a", 0);
  FlowData b("b", 1);
  GraphPp pp("add_pp", AddModel);
  if (compile_config != nullptr) pp.SetCompileConfig(compile_config);
  FlowNode node(node_name, 2, 1);
  node.SetInput(0, a).SetInput(1, b).AddPp(pp);
  node.MapInput(0, pp, 0).MapInput(1, pp, 1).MapOutput(0, pp, 0);
  FlowGraph graph("model_graph");
  graph.SetInputs({a, b}).SetOutputs({node});
  return graph;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  {
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);

    // The model graph itself is well formed.
    Graph model = AddModel();
    Check(model.IsValid(), "op::Data/op::Add graph is valid");
    std::vector<AscendString> names;
    StatusIs(model.GetAllOpName(names), GRAPH_SUCCESS, "GetAllOpName");
    Eq(names.size(), static_cast<size_t>(3), "model ops");

    // AddGraph takes a graph with a model node; BuildGraph refuses it,
    // naming the node and the process point.
    FlowGraph g1 = ModelGraph("model", "config/add_graph.json");
    StatusIs(session->AddGraph(1, g1.ToGeGraph()), SUCCESS,
             "AddGraph with a GraphPp node");
    Fails(session->BuildGraph(1, std::vector<Tensor>()),
          "BuildGraph with a GraphPp node");
    Contains(GEGetErrorMsg(), "'model'", "the error names the node");
    Contains(GEGetErrorMsg(), "add_pp", "the error names the process point");

    // The first feed builds the graph: the same failure comes back, and
    // again on the next feed (nothing half-built).
    FlowGraph g2 = ModelGraph("model_fed", nullptr);
    StatusIs(session->AddGraph(2, g2.ToGeGraph()), SUCCESS,
             "AddGraph with a GraphPp node without compile config");
    for (int i = 1; i <= 2; ++i) {
      DataFlowInfo info;
      Fails(session->FeedDataFlowGraph(2, {Int32s({1}, {1}), Int32s({1}, {2})},
                                       info, 1000),
            "feed " + Str(i) + " of a graph with a GraphPp node");
      Contains(GEGetErrorMsg(), "'model_fed'",
               "the feed's error names the node");
    }
    StatusIs(session->RemoveGraph(2), SUCCESS, "RemoveGraph of it");

    // A UDF that may invoke a model closure.
    FlowData x("x", 0);
    FunctionPp fpp("pass_pp");
    fpp.SetCompileConfig("config/pass_through.json");
    fpp.AddInvokedClosure("model_key", GraphPp("closure_pp", AddModel));
    FlowNode invoker("invoker", 1, 1);
    invoker.SetInput(0, x).AddPp(fpp);
    FlowGraph g3("invoked_closure");
    g3.SetInputs({x}).SetOutputs({invoker});
    StatusIs(session->AddGraph(3, g3.ToGeGraph()), SUCCESS,
             "AddGraph with an invoked closure");
    Fails(session->BuildGraph(3, std::vector<Tensor>()),
          "BuildGraph of a UDF with an invoked closure");
    Contains(GEGetErrorMsg(), "'invoker'", "the error names the node");
    Contains(GEGetErrorMsg(), "closure_pp", "and the closure");

    // The parsers: GRAPH_FAILED, an empty graph.
    Graph parsed("parsed");
    Eq(aclgrphParseONNX("no_such_model.onnx", parsed), GRAPH_FAILED,
       "aclgrphParseONNX");
    std::map<AscendString, AscendString> parser_params;
    Eq(aclgrphParseTensorFlow("no_such_model.pb", parser_params, parsed),
       GRAPH_FAILED, "aclgrphParseTensorFlow");

    // RunGraph: not for DataFlow graphs.
    std::vector<Tensor> outputs;
    StatusIs(session->RunGraph(3, {Int32s({1}, {1})}, outputs),
             ACL_ERROR_GE_PARAM_INVALID, "RunGraph");

    // The session still runs a plain UDF graph.
    FlowData a("a", 0);
    FlowData b("b", 1);
    FunctionPp add_pp("add_pp");
    add_pp.SetCompileConfig("config/add_pair.json");
    FlowNode add("add", 2, 1);
    add.SetInput(0, a).SetInput(1, b).AddPp(add_pp);
    FlowGraph g4("plain");
    g4.SetInputs({a, b}).SetOutputs({add});
    StatusIs(session->AddGraph(4, g4.ToGeGraph()), SUCCESS, "AddGraph plain");
    DataFlowInfo info;
    StatusIs(session->FeedDataFlowGraph(
                 4, {Int32s({2}, {1, 2}), Int32s({2}, {10, 20})}, info, 3000),
             SUCCESS, "feed the plain graph");
    std::vector<Tensor> out;
    DataFlowInfo out_info;
    StatusIs(session->FetchDataFlowGraph(4, out, out_info, 3000), SUCCESS,
             "fetch the plain graph");
    if (Eq(out.size(), static_cast<size_t>(1), "plain: outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({11, 22}),
         "plain: a + b");
    }
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  return Finish("model_node");
}
