// GE host program (g): model graphs, as GE programs build and run them.
// A GraphPp node whose graph is built from all_ops.h's op::Data and op::Add
// runs on hflow's model executor, typed by its compile config (GE's
// inputs_tensor_desc: the float graph runs as int32, as GE's add sample
// does) or by its Data ops' descs:
//
//   a ─┐
//      ├─ node "model" (GraphPp "add_pp": Data a, Data b -> Add) ── out
//   b ─┘
//
// The same graph runs through Session::AddGraph + RunGraph and
// RunGraphAsync, after Graph::SaveToFile/LoadFromFile, and parsed from
// model files (aclgrphParseTensorFlow, aclgrphParseONNX) when
// HFLOW_GE_MODEL_DIR names a folder of the test models. A UDF runs its
// invoked closure (AddInvokedClosure + RunFlowModel). Bad graphs fail
// cleanly, naming node and closure; the session stays usable.
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
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

// Data a, Data b -> Add; with `typed`, each Data's output desc is int32 [2].
Graph AddModel(bool typed) {
  op::Data a("a");
  a.set_attr_index(0);
  op::Data b("b");
  b.set_attr_index(1);
  if (typed) {
    TensorDesc desc(Shape({2}), FORMAT_ND, DT_INT32);
    a.UpdateOutputDesc("y", desc);
    b.UpdateOutputDesc("y", desc);
  }
  op::Add add("add");
  add.set_input_x1(a).set_input_x2(b);
  Graph graph("add_model");
  graph.SetInputs({a, b}).SetOutputs({add});
  return graph;
}
Graph UntypedAdd() { return AddModel(false); }
Graph TypedAdd() { return AddModel(true); }

FlowGraph ModelGraph(const char* node_name, const GraphPp& pp) {
  FlowData a("a", 0);
  FlowData b("b", 1);
  FlowNode node(node_name, 2, 1);
  node.SetInput(0, a).SetInput(1, b).AddPp(pp);
  node.MapInput(0, pp, 0).MapInput(1, pp, 1).MapOutput(0, pp, 0);
  FlowGraph graph("model_graph");
  graph.SetInputs({a, b}).SetOutputs({node});
  return graph;
}

// Feeds {1,2} and {10,20} to DataFlow graph `id`; checks {11,22} comes back.
void FeedAndCheck(Session& session, uint32_t id, const std::string& what) {
  DataFlowInfo info;
  StatusIs(session.FeedDataFlowGraph(
               id, {Int32s({2}, {1, 2}), Int32s({2}, {10, 20})}, info, 30000),
           SUCCESS, what + ": feed");
  std::vector<Tensor> out;
  DataFlowInfo out_info;
  StatusIs(session.FetchDataFlowGraph(id, out, out_info, 30000), SUCCESS,
           what + ": fetch");
  if (Eq(out.size(), static_cast<size_t>(1), what + ": outputs")) {
    Eq(Values<int32_t>(out[0]), std::vector<int32_t>({11, 22}),
       what + ": a + b");
  }
}

// RunGraph of plain graph `id` on {1,2}+{10,20} as `dt` (int32 or float).
template <typename T>
void RunAndCheck(Session& session, uint32_t id, DataType dt,
                 const std::string& what) {
  std::vector<Tensor> out;
  StatusIs(session.RunGraph(id,
                            {MakeTensor<T>(dt, {2}, {1, 2}),
                             MakeTensor<T>(dt, {2}, {10, 20})},
                            out),
           SUCCESS, what + ": RunGraph");
  if (Eq(out.size(), static_cast<size_t>(1), what + ": outputs")) {
    Eq(Values<T>(out[0]), std::vector<T>({11, 22}), what + ": a + b");
  }
}

void ParsedModels(Session& session, const std::string& dir) {
  Graph tf("tf_add");
  std::map<AscendString, AscendString> params;
  params["input_shape"] = "a:2;b:2";
  StatusIs(aclgrphParseTensorFlow((dir + "/tf_add.pb").c_str(), params, tf),
           GRAPH_SUCCESS, "aclgrphParseTensorFlow(tf_add.pb)");
  std::vector<Operator> data;
  tf.FindOpByType("Data", data);
  Eq(data.size(), static_cast<size_t>(2), "the parsed graph's Data ops");
  StatusIs(session.AddGraph(20, tf), SUCCESS, "AddGraph of the parsed .pb");
  RunAndCheck<float>(session, 20, DT_FLOAT, "tf_add.pb");

  Graph onnx("onnx_add");
  StatusIs(aclgrphParseONNX((dir + "/add.onnx").c_str(), onnx), GRAPH_SUCCESS,
           "aclgrphParseONNX(add.onnx)");
  std::vector<Operator> adds;
  onnx.FindOpByType("ai.onnx::17::Add", adds);
  Eq(adds.size(), static_cast<size_t>(1), "the parsed graph's Add");
  // As a GraphPp node, typed by a compile config (float32 -> int32).
  GraphPp pp("onnx_pp", [onnx] { return onnx; });
  pp.SetCompileConfig("config/add_graph_int32.json");
  StatusIs(session.AddGraph(21, ModelGraph("onnx_model", pp).ToGeGraph()),
           SUCCESS, "AddGraph with the parsed ONNX as a GraphPp");
  FeedAndCheck(session, 21, "add.onnx as int32");

  // Bad files: GRAPH_FAILED naming the file and what is wrong.
  Graph bad("bad");
  Eq(aclgrphParseONNX((dir + "/unsupported.onnx").c_str(), bad), GRAPH_FAILED,
     "aclgrphParseONNX of a model with unsupported ops");
  Contains(GEGetErrorMsg(), "Det", "the error names the op");
  Eq(aclgrphParseTensorFlow("no_such_model.pb", params, bad), GRAPH_FAILED,
     "aclgrphParseTensorFlow of a missing file");
  Contains(GEGetErrorMsg(), "no_such_model.pb", "the error names the file");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  {
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);

    Graph model = UntypedAdd();
    Check(model.IsValid(), "op::Data/op::Add graph is valid");
    std::vector<AscendString> names;
    StatusIs(model.GetAllOpName(names), GRAPH_SUCCESS, "GetAllOpName");
    Eq(names.size(), static_cast<size_t>(3), "model ops");

    // A GraphPp typed by its compile config (GE's add sample), on the
    // cluster's devices; and one typed by its Data ops' descs.
    GraphPp pp1("add_pp", UntypedAdd);
    pp1.SetCompileConfig("config/add_graph_int32.json");
    StatusIs(session->AddGraph(1, ModelGraph("model", pp1).ToGeGraph()),
             SUCCESS, "AddGraph with a GraphPp node");
    StatusIs(session->BuildGraph(1, std::vector<Tensor>()), SUCCESS,
             "BuildGraph with a GraphPp node");
    FeedAndCheck(*session, 1, "GraphPp typed by its compile config");
    FeedAndCheck(*session, 1, "and again");
    GraphPp pp2("typed_pp", TypedAdd);
    StatusIs(session->AddGraph(2, ModelGraph("typed", pp2).ToGeGraph()),
             SUCCESS, "AddGraph with a GraphPp of typed Data ops");
    FeedAndCheck(*session, 2, "GraphPp typed by its Data descs");
    // A wrong dtype fails that transaction, not the graph.
    DataFlowInfo info;
    StatusIs(session->FeedDataFlowGraph(
                 2, {Int64s({2}, {1, 2}), Int64s({2}, {3, 4})}, info, 30000),
             SUCCESS, "feed int64 to the int32 model");
    std::vector<Tensor> out;
    DataFlowInfo out_info;
    Fails(session->FetchDataFlowGraph(2, out, out_info, 30000),
          "the int64 transaction fails");
    FeedAndCheck(*session, 2, "the graph goes on");
    StatusIs(session->RemoveGraph(2), SUCCESS, "RemoveGraph");

    // A GraphPp whose builder's graph has no outputs: AddGraph fails
    // naming the node.
    GraphPp empty_pp("empty_pp", [] { return Graph("no_outputs"); });
    Fails(session->AddGraph(3, ModelGraph("empty", empty_pp).ToGeGraph()),
          "AddGraph with a GraphPp whose graph has no outputs");
    Contains(GEGetErrorMsg(), "'empty'", "the error names the node");

    // A plain ge::Graph: AddGraph + RunGraph, RunGraphAsync.
    StatusIs(session->AddGraph(10, TypedAdd()), SUCCESS, "AddGraph(Graph)");
    RunAndCheck<int32_t>(*session, 10, DT_INT32, "RunGraph");
    std::mutex mu;
    std::condition_variable cv;
    int done = 0;
    std::vector<std::vector<int32_t>> async_out;
    for (int i = 0; i < 3; ++i) {
      StatusIs(session->RunGraphAsync(
                   10, {Int32s({2}, {i, i}), Int32s({2}, {100, 200})},
                   [&](Status s, std::vector<Tensor>& o) {
                     std::lock_guard<std::mutex> lock(mu);
                     async_out.push_back(s == SUCCESS && o.size() == 1
                                             ? Values<int32_t>(o[0])
                                             : std::vector<int32_t>());
                     ++done;
                     cv.notify_all();
                   }),
               SUCCESS, "RunGraphAsync " + Str(i));
    }
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_for(lock, std::chrono::seconds(30), [&] { return done == 3; });
    }
    if (Eq(done, 3, "RunGraphAsync callbacks")) {
      for (int i = 0; i < 3; ++i) {
        Eq(async_out[i], std::vector<int32_t>({100 + i, 200 + i}),
           "RunGraphAsync " + Str(i) + " in order");
      }
    }

    // SaveToFile / LoadFromFile, and the loaded graph runs.
    const char* tmp = std::getenv("TMPDIR");
    const std::string file =
        std::string(tmp != nullptr ? tmp : "/tmp") + "/add_model.hfg";
    StatusIs(TypedAdd().SaveToFile(file.c_str()), GRAPH_SUCCESS, "SaveToFile");
    Graph loaded;
    StatusIs(loaded.LoadFromFile(file.c_str()), GRAPH_SUCCESS, "LoadFromFile");
    Operator found;
    StatusIs(loaded.FindOpByName("add", found), GRAPH_SUCCESS,
             "the loaded graph has op 'add'");
    StatusIs(session->AddGraph(11, loaded), SUCCESS, "AddGraph(loaded)");
    RunAndCheck<int32_t>(*session, 11, DT_INT32, "the loaded graph");
    // A graph whose op feeds itself: refused, not written forever.
    op::Add loop("loop");
    loop.set_input_x1(loop).set_input_x2(loop);
    Graph cyclic("cyclic");
    cyclic.SetOutputs({loop});
    Eq(cyclic.SaveToFile(file.c_str()), GRAPH_FAILED,
       "SaveToFile of a cyclic graph");
    Fails(session->AddGraph(12, cyclic), "AddGraph of a cyclic graph");
    Contains(GEGetErrorMsg(), "'loop'", "the error names the op");
    Graph not_a_graph;
    Eq(not_a_graph.LoadFromFile("config/add_pair.json"), GRAPH_FAILED,
       "LoadFromFile of a file that is not a GE graph");

    // RunGraph of a DataFlow graph: not a model graph.
    StatusIs(session->RunGraph(1, {Int32s({1}, {1})}, out),
             ACL_ERROR_GE_PARAM_INVALID, "RunGraph of a DataFlow graph");

    // A UDF that invokes a model closure (RunFlowModel); one whose
    // closure's graph has no outputs fails AddGraph naming node and closure.
    FlowData x0("x0", 0);
    FlowData x1("x1", 1);
    FunctionPp fpp("invoke_pp");
    fpp.SetCompileConfig("config/invoke_model.json");
    fpp.AddInvokedClosure("model_key", GraphPp("closure_pp", TypedAdd));
    FlowNode invoker("invoker", 2, 1);
    invoker.SetInput(0, x0).SetInput(1, x1).AddPp(fpp);
    FlowGraph g3("invoked_closure");
    g3.SetInputs({x0, x1}).SetOutputs({invoker});
    StatusIs(session->AddGraph(4, g3.ToGeGraph()), SUCCESS,
             "AddGraph with an invoked closure");
    FeedAndCheck(*session, 4, "RunFlowModel of the invoked closure");
    FunctionPp bad_fpp("bad_invoke_pp");
    bad_fpp.SetCompileConfig("config/invoke_model.json");
    bad_fpp.AddInvokedClosure("model_key",
                              GraphPp("empty_closure", [] { return Graph(); }));
    FlowNode bad_invoker("bad_invoker", 2, 1);
    bad_invoker.SetInput(0, x0).SetInput(1, x1).AddPp(bad_fpp);
    FlowGraph g5("bad_invoked_closure");
    g5.SetInputs({x0, x1}).SetOutputs({bad_invoker});
    Fails(session->AddGraph(5, g5.ToGeGraph()),
          "AddGraph with a closure whose graph is empty");
    Contains(GEGetErrorMsg(), "'bad_invoker'", "the error names the node");
    Contains(GEGetErrorMsg(), "'model_key'", "and the closure");

    const char* models = std::getenv("HFLOW_GE_MODEL_DIR");
    if (Check(models != nullptr && *models != '\0',
              "HFLOW_GE_MODEL_DIR names the test models")) {
      ParsedModels(*session, models);
    }

    // The session still runs the first graph.
    FeedAndCheck(*session, 1, "the first graph after all that");
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  return Finish("model_node");
}
