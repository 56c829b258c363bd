// GE host program: GE's dflow front end (dflow/dflow_api.h) instead of
// ge::Session. DFlowInitialize, a DFlowSession taking the FlowGraph itself,
// feeds and fetches of tensors and messages, DFlowFinalize; and the two
// front ends share one state (GEInitialize's is DFlowInitialize's).
//
//   a ─┐
//      ├─ node "add" (AddPair: a + b) ── out
//   b ─┘
#include <cstdint>
#include <memory>
#include <vector>

#include "dflow/dflow_api.h"
#include "ge_check.h"

using namespace ge;
using namespace dflow;
using namespace ge_host;

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  StatusIs(DFlowInitialize(InitOptions()), SUCCESS, "DFlowInitialize");
  {
    std::map<AscendString, AscendString> options;
    DFlowSession session(options);
    FlowData a("a", 0);
    FlowData b("b", 1);
    FunctionPp pp("add_pp");
    pp.SetCompileConfig("config/add_pair.json");
    FlowNode node("add", 2, 1);
    node.SetInput(0, a).SetInput(1, b).AddPp(pp);
    FlowGraph graph("dflow_session");
    graph.SetInputs({a, b}).SetOutputs({node});
    StatusIs(session.AddGraph(1, graph), SUCCESS, "DFlowSession::AddGraph");
    StatusIs(session.BuildGraph(1, std::vector<Tensor>()), SUCCESS,
             "BuildGraph");

    DataFlowInfo info;
    info.SetTransactionId(9);
    StatusIs(
        session.FeedDataFlowGraph(
            1, {Int32s({3}, {1, 2, 3}), Int32s({3}, {4, 5, 6})}, info, 3000),
        SUCCESS, "feed tensors (transaction 9)");
    std::vector<Tensor> out;
    DataFlowInfo out_info;
    StatusIs(session.FetchDataFlowGraph(1, out, out_info, 3000), SUCCESS,
             "fetch tensors");
    if (Eq(out.size(), static_cast<size_t>(1), "outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({5, 7, 9}), "a + b");
    }
    Eq(out_info.GetTransactionId(), static_cast<uint64_t>(9), "transaction id");

    StatusIs(session.FeedDataFlowGraph(
                 1,
                 {FlowBufferFactory::ToFlowMsg(Int32s({1}, {20})),
                  FlowBufferFactory::ToFlowMsg(Int32s({1}, {22}))},
                 3000),
             SUCCESS, "feed messages");
    std::vector<FlowMsgPtr> msgs;
    StatusIs(session.FetchDataFlowGraph(1, msgs, 3000), SUCCESS,
             "fetch messages");
    if (Eq(msgs.size(), static_cast<size_t>(1), "messages") && msgs[0] &&
        msgs[0]->GetTensor() != nullptr) {
      Eq(Values<int32_t>(*msgs[0]->GetTensor()), std::vector<int32_t>({42}),
         "message a + b");
    }
    // One state: GE's initialize is the same one (a no-op now).
    StatusIs(GEInitialize(InitOptions()), SUCCESS,
             "GEInitialize after DFlowInitialize");
    StatusIs(session.RemoveGraph(1), SUCCESS, "RemoveGraph");
    Fails(session.FeedDataFlowGraph(1, {Int32s({1}, {1}), Int32s({1}, {1})},
                                    info, 100),
          "feed a removed graph");
  }
  StatusIs(DFlowFinalize(), SUCCESS, "DFlowFinalize");
  return Finish("dflow_session");
}
