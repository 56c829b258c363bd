// GE host program (a): a multi-function node fed and fetched by index.
//
//   x0 ── node in 0 ─ pp in 1 ─[Negate: -x]──── pp out 1 ─ node out 0 ── out 0
//   x1 ── node in 1 ─ pp in 0 ─[Scale: x * 3]── pp out 0 ─ node out 1 ── out 1
//
// (node inputs and outputs map crosswise onto the pp's: MapInput/MapOutput)
//
// Each proc runs when its own input arrives, so a feed of input 1 alone is
// fetched from output 1 alone (and 0 from 0); a feed of both inputs is one
// transaction whose two outputs a fetch of both returns together.
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_graph/data_flow.h"
#include "ge/ge_api.h"
#include "ge_check.h"

using namespace ge;
using namespace dflow;
using namespace ge_host;

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  {
    std::map<AscendString, AscendString> session_options;
    std::shared_ptr<Session> session =
        std::make_shared<Session>(session_options);

    FlowData x0("x0", 0);
    FlowData x1("x1", 1);
    FunctionPp pp("multi_pp");
    pp.SetCompileConfig("config/multi.json")
        .SetInitParam("factor", static_cast<int64_t>(3));
    FlowNode node("multi", 2, 2);
    node.SetInput(0, x0).SetInput(1, x1).AddPp(pp);
    node.MapInput(0, pp, 1).MapInput(1, pp, 0);
    node.MapOutput(0, pp, 1).MapOutput(1, pp, 0);
    FlowGraph flow_graph("multi_function");
    flow_graph.SetInputs({x0, x1}).SetOutputs({node});

    const uint32_t graph_id = 1;
    StatusIs(session->AddGraph(graph_id, flow_graph.ToGeGraph()), SUCCESS,
             "AddGraph");
    StatusIs(session->BuildGraph(graph_id, std::vector<Tensor>()), SUCCESS,
             "BuildGraph");

    // Input 1 alone -> Scale -> output 1 alone.
    DataFlowInfo feed_info;
    StatusIs(session->FeedDataFlowGraph(graph_id, {1}, {Int32s({3}, {1, 2, 3})},
                                        feed_info, 3000),
             SUCCESS, "feed index {1}");
    std::vector<Tensor> out;
    DataFlowInfo info;
    StatusIs(session->FetchDataFlowGraph(graph_id, {1}, out, info, 3000),
             SUCCESS, "fetch index {1}");
    if (Eq(out.size(), static_cast<size_t>(1), "fetch {1}: outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({3, 6, 9}),
         "output 1 = x1 * 3");
      Eq(Dims(out[0]), std::vector<int64_t>({3}), "output 1 shape");
      Eq(static_cast<int>(out[0].GetTensorDesc().GetDataType()),
         static_cast<int>(DT_INT32), "output 1 dtype");
    }
    Eq(info.GetTransactionId(), static_cast<uint64_t>(1),
       "fetch {1}: transaction id");

    // Input 0 alone -> Negate -> output 0 alone.
    StatusIs(session->FeedDataFlowGraph(graph_id, {0}, {Int32s({2}, {5, -6})},
                                        feed_info, 3000),
             SUCCESS, "feed index {0}");
    StatusIs(session->FetchDataFlowGraph(graph_id, {0}, out, info, 3000),
             SUCCESS, "fetch index {0}");
    if (Eq(out.size(), static_cast<size_t>(1), "fetch {0}: outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({-5, 6}),
         "output 0 = -x0");
    }
    Eq(info.GetTransactionId(), static_cast<uint64_t>(2),
       "fetch {0}: transaction id");

    // Both inputs in one transaction with its own id: both outputs, paired.
    DataFlowInfo both_info;
    both_info.SetTransactionId(42);
    StatusIs(session->FeedDataFlowGraph(
                 graph_id, {Int32s({2}, {7, 8}), Int32s({2}, {10, 20})},
                 both_info, 3000),
             SUCCESS, "feed both inputs (transaction 42)");
    StatusIs(session->FetchDataFlowGraph(graph_id, out, info, 3000), SUCCESS,
             "fetch both outputs");
    if (Eq(out.size(), static_cast<size_t>(2), "fetch all: outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({-7, -8}),
         "output 0 = -x0");
      Eq(Values<int32_t>(out[1]), std::vector<int32_t>({30, 60}),
         "output 1 = x1 * 3");
    }
    Eq(info.GetTransactionId(), static_cast<uint64_t>(42),
       "fetch all: transaction id");

    // Fetch by index in the other order: {1, 0}.
    StatusIs(
        session->FeedDataFlowGraph(
            graph_id, {Int32s({1}, {1}), Int32s({1}, {2})}, feed_info, 3000),
        SUCCESS, "feed both inputs again");
    StatusIs(session->FetchDataFlowGraph(graph_id, {1, 0}, out, info, 3000),
             SUCCESS, "fetch indexes {1, 0}");
    if (Eq(out.size(), static_cast<size_t>(2), "fetch {1, 0}: outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({6}),
         "out[0] is output 1");
      Eq(Values<int32_t>(out[1]), std::vector<int32_t>({-1}),
         "out[1] is output 0");
    }
    StatusIs(session->RemoveGraph(graph_id), SUCCESS, "RemoveGraph");
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  return Finish("multi_function");
}
