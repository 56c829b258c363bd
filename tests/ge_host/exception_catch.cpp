// GE host program (d): exception catch. A UDF that finds a negative element
// raises an exception (RaiseException with the transaction id) instead of
// sending; with FlowGraph::SetExceptionCatch(true) the fetch of that
// transaction returns ACL_ERROR_GE_USER_RAISE_EXCEPTION, and transactions
// before and after it come back as usual.
//
//   x ── node "check" (CheckNonNegative: x, or raise) ── out
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
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);

    FlowData x("x", 0);
    FunctionPp pp("check_pp");
    pp.SetCompileConfig("config/check_non_negative.json");
    FlowNode node("check", 1, 1);
    node.SetInput(0, x).AddPp(pp);
    FlowGraph graph("exception_catch");
    graph.SetInputs({x}).SetOutputs({node}).SetExceptionCatch(true);
    StatusIs(session->AddGraph(1, graph.ToGeGraph()), SUCCESS, "AddGraph");

    const std::vector<std::vector<int32_t> > feeds = {
        {1, 2}, {-1, 5}, {3, 4}, {0, -7}, {8, 9}};
    DataFlowInfo feed_info;
    for (size_t i = 0; i < feeds.size(); ++i) {
      StatusIs(session->FeedDataFlowGraph(1, {Int32s({2}, feeds[i])}, feed_info,
                                          3000),
               SUCCESS, "feed " + Str(feeds[i]));
    }
    for (size_t i = 0; i < feeds.size(); ++i) {
      const bool raises = feeds[i][0] < 0 || feeds[i][1] < 0;
      const std::string what = "transaction " + Str(i + 1);
      std::vector<Tensor> out;
      DataFlowInfo info;
      Status s = session->FetchDataFlowGraph(1, out, info, 3000);
      Eq(info.GetTransactionId(), static_cast<uint64_t>(i + 1),
         what + ": transaction id");
      if (raises) {
        StatusIs(s, ACL_ERROR_GE_USER_RAISE_EXCEPTION,
                 what + " (" + Str(feeds[i]) + ") raised");
        Check(out.empty() || out[0].GetSize() == 0,
              what + ": no data with the exception");
      } else {
        StatusIs(s, SUCCESS, what + " (" + Str(feeds[i]) + ") passes");
        if (Eq(out.size(), static_cast<size_t>(1), what + ": outputs")) {
          Eq(Values<int32_t>(out[0]), feeds[i], what + ": data");
        }
      }
    }
    // The graph goes on after exceptions, also through message fetches.
    StatusIs(
        session->FeedDataFlowGraph(1, {Int32s({1}, {-3})}, feed_info, 3000),
        SUCCESS, "feed [-3]");
    std::vector<FlowMsgPtr> msgs;
    Status s = session->FetchDataFlowGraph(1, msgs, 3000);
    // As a message: the raised code is the message's ret code (or the
    // fetch says so, as for tensors).
    const int32_t raised = 9900007;  // CheckNonNegative's code
    Check(s == ACL_ERROR_GE_USER_RAISE_EXCEPTION ||
              (s == SUCCESS && msgs.size() == 1 && msgs[0] &&
               msgs[0]->GetRetCode() == raised),
          "message fetch of a raised transaction: status " + Str(s) +
              (msgs.size() == 1 && msgs[0]
                   ? ", ret code " + Str(msgs[0]->GetRetCode())
                   : std::string()));
    StatusIs(session->FeedDataFlowGraph(1, {Int32s({1}, {6})}, feed_info, 3000),
             SUCCESS, "feed [6]");
    std::vector<Tensor> out;
    DataFlowInfo info;
    StatusIs(session->FetchDataFlowGraph(1, out, info, 3000), SUCCESS,
             "fetch after the exceptions");
    if (Eq(out.size(), static_cast<size_t>(1), "last: outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({6}), "last: data");
    }
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  return Finish("exception_catch");
}
