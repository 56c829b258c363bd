// GE host program (h): bad calls return GE status codes, never crash, and
// leave the session usable. Calls before GEInitialize; a bad ge.* option
// value; a graph id never added; wrong tensor counts; indexes out of range
// or repeated; bad user-data ranges; and after all of it, a good
// transaction of the same graph still comes back right.
//
//   a ─┐
//      ├─ node "add" (AddPair: a + b) ── out
//   b ─┘
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flow_graph/data_flow.h"
#include "ge/ge_api.h"
#include "ge_check.h"

using namespace ge;
using namespace dflow;
using namespace ge_host;

namespace {

FlowGraph AddGraph() {
  FlowData a("a", 0);
  FlowData b("b", 1);
  FunctionPp pp("add_pp");
  pp.SetCompileConfig("config/add_pair.json");
  FlowNode node("add", 2, 1);
  node.SetInput(0, a).SetInput(1, b).AddPp(pp);
  FlowGraph graph("bad_input");
  graph.SetInputs({a, b}).SetOutputs({node});
  return graph;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  const std::vector<Tensor> two = {Int32s({2}, {1, 2}), Int32s({2}, {3, 4})};
  DataFlowInfo info;
  std::vector<Tensor> out;
  DataFlowInfo out_info;
  FlowGraph graph = AddGraph();

  // Before GEInitialize.
  {
    std::map<AscendString, AscendString> options;
    Session early(options);
    Fails(early.AddGraph(1, graph.ToGeGraph()), "AddGraph before GEInitialize");
    Fails(early.FeedDataFlowGraph(1, two, info, 100),
          "feed before GEInitialize");
    Fails(early.FetchDataFlowGraph(1, out, out_info, 100),
          "fetch before GEInitialize");
  }
  // GE: nothing to finalize is not an error.
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize before GEInitialize");

  // Bad option values and keys: GEInitialize fails and initializes nothing.
  std::map<AscendString, AscendString> bad = InitOptions();
  bad["ge.exec.deviceId"] = "x";
  Fails(GEInitialize(bad), "GEInitialize with ge.exec.deviceId \"x\"");
  Contains(GEGetErrorMsg(), "ge.exec.deviceId", "the error names the key");
  bad = InitOptions();
  bad["ge.exec.deviceId"] = "99";
  Fails(GEInitialize(bad), "GEInitialize with device 99 of a smaller cluster");
  bad = InitOptions();
  bad["ge.graphRunMode"] = "7";
  Fails(GEInitialize(bad), "GEInitialize with ge.graphRunMode \"7\"");
  bad = InitOptions();
  bad["ge.exec.deviceID"] = "0";
  Fails(GEInitialize(bad), "GEInitialize with a misspelt key");
  Contains(GEGetErrorMsg(), "ge.exec.deviceId", "the error suggests the key");

  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  {
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);

    // A graph id never added.
    Fails(session->FeedDataFlowGraph(7, two, info, 100), "feed graph 7");
    Fails(session->FetchDataFlowGraph(7, out, out_info, 100), "fetch graph 7");
    Fails(session->BuildGraph(7, std::vector<Tensor>()), "BuildGraph 7");
    Fails(session->RemoveGraph(7), "RemoveGraph 7");
    Fails(session->FeedRawData(7, {{"a", 1}}, 0, info, 100),
          "FeedRawData graph 7");

    StatusIs(session->AddGraph(1, graph.ToGeGraph()), SUCCESS, "AddGraph 1");
    Fails(session->AddGraph(1, graph.ToGeGraph()), "AddGraph 1 again");
    Fails(session->FetchDataFlowGraph(1, out, out_info, 100),
          "fetch before the graph is built");

    // Bad graph-level option values.
    std::map<AscendString, AscendString> graph_options;
    graph_options["ge.exec.logicalDeviceClusterDeployMode"] = "BOTH";
    Fails(session->AddGraph(2, graph.ToGeGraph(), graph_options),
          "AddGraph with deploy mode \"BOTH\"");
    graph_options.clear();
    graph_options["ge.experiment.data_flow_deploy_info_path"] =
        "/no/such/deploy.json";
    Status s = session->AddGraph(3, graph.ToGeGraph(), graph_options);
    if (s == SUCCESS) s = session->BuildGraph(3, std::vector<Tensor>());
    Fails(s, "a deploy info file that does not exist");

    // A UDF whose Init fails (GeHostMulti without its "factor"): the build
    // fails naming the node, and the graph can be removed.
    FlowData x0("x0", 0);
    FlowData x1("x1", 1);
    FunctionPp multi("multi_pp");
    multi.SetCompileConfig("config/multi.json");
    FlowNode no_factor("no_factor", 2, 2);
    no_factor.SetInput(0, x0).SetInput(1, x1).AddPp(multi);
    FlowGraph init_fails("init_fails");
    init_fails.SetInputs({x0, x1}).SetOutputs({no_factor});
    StatusIs(session->AddGraph(4, init_fails.ToGeGraph()), SUCCESS,
             "AddGraph of a UDF whose Init fails");
    StatusIs(session->BuildGraph(4, std::vector<Tensor>()), FAILED,
             "BuildGraph of it");
    Contains(GEGetErrorMsg(), "no_factor", "the error names the node");
    StatusIs(session->RemoveGraph(4), SUCCESS, "RemoveGraph of it");

    // Wrong tensor counts and indexes: ACL_ERROR_GE_PARAM_INVALID.
    StatusIs(session->FeedDataFlowGraph(1, {two[0]}, info, 100),
             ACL_ERROR_GE_PARAM_INVALID, "feed 1 tensor to 2 inputs");
    StatusIs(session->FeedDataFlowGraph(1, {two[0], two[1], two[0]}, info, 100),
             ACL_ERROR_GE_PARAM_INVALID, "feed 3 tensors to 2 inputs");
    StatusIs(session->FeedDataFlowGraph(1, {0, 2}, two, info, 100),
             ACL_ERROR_GE_PARAM_INVALID, "feed index 2 of 2 inputs");
    StatusIs(session->FeedDataFlowGraph(1, {1, 1}, two, info, 100),
             ACL_ERROR_GE_PARAM_INVALID, "feed index 1 twice");
    StatusIs(session->FeedDataFlowGraph(1, {0}, two, info, 100),
             ACL_ERROR_GE_PARAM_INVALID, "1 index, 2 tensors");
    StatusIs(session->FeedRawData(1, {{"a", 1}}, 5, info, 100),
             ACL_ERROR_GE_PARAM_INVALID, "FeedRawData to input 5");
    StatusIs(session->FeedDataFlowGraph(1, std::vector<FlowMsgPtr>(2), 100),
             ACL_ERROR_GE_PARAM_INVALID, "feed null messages");

    // The good transaction, then fetches with bad indexes (nothing taken).
    StatusIs(session->FeedDataFlowGraph(1, two, info, 3000), SUCCESS,
             "a good feed");
    StatusIs(session->FetchDataFlowGraph(1, {1}, out, out_info, 100),
             ACL_ERROR_GE_PARAM_INVALID, "fetch output 1 of 1");
    StatusIs(session->FetchDataFlowGraph(1, {0, 0}, out, out_info, 100),
             ACL_ERROR_GE_PARAM_INVALID, "fetch output 0 twice");
    StatusIs(session->FetchDataFlowGraph(1, out, out_info, 3000), SUCCESS,
             "fetch the good transaction");
    if (Eq(out.size(), static_cast<size_t>(1), "good: outputs")) {
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({4, 6}), "good: a + b");
    }
    Eq(out_info.GetTransactionId(), static_cast<uint64_t>(1),
       "good: the first transaction fed");

    // A timeout with nothing to fetch is an error, not a hang.
    StatusIs(session->FetchDataFlowGraph(1, out, out_info, 100),
             ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT, "fetch with nothing fed");

    // User data: up to 64 bytes.
    DataFlowInfo ud;
    char bytes[65] = {0};
    StatusIs(ud.SetUserData(bytes, 64), SUCCESS, "SetUserData 64 bytes");
    StatusIs(ud.SetUserData(bytes, 65), ACL_ERROR_GE_PARAM_INVALID,
             "SetUserData 65 bytes");
    StatusIs(ud.SetUserData(bytes, 8, 60), ACL_ERROR_GE_PARAM_INVALID,
             "SetUserData 8 bytes at 60");
    StatusIs(ud.SetUserData(nullptr, 4), ACL_ERROR_GE_PARAM_INVALID,
             "SetUserData null");
    StatusIs(session->RemoveGraph(1), SUCCESS, "RemoveGraph 1");
    Fails(session->FeedDataFlowGraph(1, two, info, 100),
          "feed a removed graph");
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  {
    std::map<AscendString, AscendString> options;
    Session late(options);
    Fails(late.AddGraph(1, graph.ToGeGraph()), "AddGraph after GEFinalize");
  }
  return Finish("bad_input");
}
