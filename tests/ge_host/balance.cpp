// GE host program (f): balance scatter and gather (FlowNode::
// SetBalanceScatter / SetBalanceGather), with node placement from a deploy
// info file (ge.experiment.data_flow_deploy_info_path), and placement by
// GE's logical device options.
//
//   x ── cut (scatter, on the first device) ── work (a replica on every
//        device) ── join (gather by row, on the last device) ── sink
//        (replicas on the first two devices) ── out
//
// cut cuts each transaction v into a 2 x 3 grid of cells v * 100 + cell;
// every fetched cell says which work and sink device handled it. Checked:
// each cell comes back once, each transaction's cells reach every work
// replica, each row meets in one sink replica and the two rows in two.
// A second graph, x ── where (on ge.exec.logicalDeviceId's device, with
// ge.exec.logicalDeviceClusterDeployMode SINGLE) ── out, checks that GE's
// logical device options place its node.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "flow_graph/data_flow.h"
#include "ge/ge_api.h"
#include "ge_check.h"

using namespace ge;
using namespace dflow;
using namespace ge_host;

namespace {

FunctionPp Pp(const char* name, const char* config) {
  FunctionPp pp(name);
  pp.SetCompileConfig(config);
  return pp;
}

std::string Logic(int32_t device) { return "0:0:" + Str(device); }

// Writes the deploy info for `devices` next to the program's temp files.
std::string WriteDeployInfo(const std::vector<int32_t>& devices) {
  std::string work;
  for (size_t i = 0; i < devices.size(); ++i) {
    work += (i ? "," : "") + Logic(devices[i]);
  }
  std::string json =
      "{\"batch_deploy_info\": [{\"flow_node_list\": [\"work\"], "
      "\"logic_device_list\": \"" +
      work +
      "\"}, "
      "{\"flow_node_list\": [\"sink\"], \"logic_device_list\": \"" +
      Logic(devices[0]) + "," + Logic(devices[1]) +
      "\"}], "
      "\"deploy_info\": [{\"flow_node_name\": \"cut\", \"logic_device_id\": "
      "\"" +
      Logic(devices[0]) +
      "\"}, {\"flow_node_name\": \"join\", "
      "\"logic_device_id\": \"" +
      Logic(devices.back()) + "\"}]}\n";
  const char* tmp = std::getenv("TMPDIR");
  std::string path = std::string(tmp ? tmp : "/tmp") + "/ge_host_balance_" +
                     Str(getpid()) + ".json";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return "";
  std::fputs(json.c_str(), f);
  std::fclose(f);
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  const int kTransactions = 4;
  const int kCells = 6;
  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  std::string deploy = WriteDeployInfo(devices);
  Check(!deploy.empty(), "deploy info written: " + deploy);
  {
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);

    FlowData x("x", 0);
    FlowNode cut("cut", 1, 1);
    FlowNode work("work", 1, 1);
    FlowNode join("join", 1, 1);
    FlowNode sink("sink", 1, 1);
    cut.SetInput(0, x).AddPp(Pp("cut_pp", "config/bal_cut.json"));
    cut.SetBalanceScatter();
    work.SetInput(0, cut).AddPp(Pp("work_pp", "config/bal_work.json"));
    join.SetInput(0, work).AddPp(Pp("join_pp", "config/bal_join.json"));
    join.SetBalanceGather();
    sink.SetInput(0, join).AddPp(Pp("sink_pp", "config/bal_sink.json"));
    FlowGraph graph("balance");
    graph.SetInputs({x}).SetOutputs({sink});

    std::map<AscendString, AscendString> graph_options;
    graph_options["ge.experiment.data_flow_deploy_info_path"] =
        AscendString(deploy.c_str());
    StatusIs(session->AddGraph(1, graph.ToGeGraph(), graph_options), SUCCESS,
             "AddGraph with the deploy info");
    StatusIs(session->BuildGraph(1, std::vector<Tensor>()), SUCCESS,
             "BuildGraph");
    DataFlowInfo feed_info;
    for (int t = 1; t <= kTransactions; ++t) {
      StatusIs(
          session->FeedDataFlowGraph(1, {Int64s({1}, {t})}, feed_info, 3000),
          SUCCESS, "feed " + Str(t));
    }
    std::set<int64_t> cells;
    std::map<int64_t, std::set<int64_t> > work_devices;  // per transaction
    std::map<std::pair<int64_t, int64_t>, std::set<int64_t> > row_sinks;
    int fetched = 0;
    for (int i = 0; i < kTransactions * kCells; ++i) {
      std::vector<Tensor> out;
      DataFlowInfo info;
      if (session->FetchDataFlowGraph(1, out, info, 3000) != SUCCESS ||
          out.size() != 1) {
        Check(false, "fetch cell " + Str(i) + ": " + GEGetErrorMsg());
        break;
      }
      std::vector<int64_t> v = Values<int64_t>(out[0]);
      if (!Eq(v.size(), static_cast<size_t>(3), "cell: [value, work, sink]")) {
        break;
      }
      ++fetched;
      if (!cells.insert(v[0]).second)
        Check(false, "cell " + Str(v[0]) + " twice");
      work_devices[v[0] / 100].insert(v[1]);
      row_sinks[std::make_pair(v[0] / 100, (v[0] % 100) / 3)].insert(v[2]);
    }
    Eq(fetched, kTransactions * kCells, "cells fetched");
    std::set<int64_t> expected;
    for (int t = 1; t <= kTransactions; ++t) {
      for (int c = 0; c < kCells; ++c) expected.insert(t * 100 + c);
    }
    Check(cells == expected, "every cell of every transaction once");
    std::set<int64_t> all(devices.begin(), devices.end());
    for (int t = 1; t <= kTransactions; ++t) {
      Check(work_devices[t] == all,
            "transaction " + Str(t) + ": cells on work devices " +
                Str(std::vector<int64_t>(work_devices[t].begin(),
                                         work_devices[t].end())));
      const std::set<int64_t>& r0 = row_sinks[std::make_pair(t, 0)];
      const std::set<int64_t>& r1 = row_sinks[std::make_pair(t, 1)];
      Check(r0.size() == 1 && r1.size() == 1 && *r0.begin() != *r1.begin(),
            "transaction " + Str(t) + ": each row on one sink, rows apart (" +
                Str(std::vector<int64_t>(r0.begin(), r0.end())) + " " +
                Str(std::vector<int64_t>(r1.begin(), r1.end())) + ")");
    }

    // Placement by GE's logical device options instead of a deploy info
    // file: SINGLE puts every node of the graph on ge.exec.logicalDeviceId.
    FlowData y("y", 0);
    FlowNode where("where", 1, 1);
    where.SetInput(0, y).AddPp(Pp("where_pp", "config/bal_work.json"));
    FlowGraph placed("placed");
    placed.SetInputs({y}).SetOutputs({where});
    std::map<AscendString, AscendString> single;
    single["ge.exec.logicalDeviceClusterDeployMode"] = "SINGLE";
    const std::string logical = "[0:" + Str(devices.back()) + "]";
    single["ge.exec.logicalDeviceId"] = AscendString(logical.c_str());
    StatusIs(session->AddGraph(2, placed.ToGeGraph(), single), SUCCESS,
             "AddGraph with SINGLE on " + logical);
    StatusIs(session->FeedDataFlowGraph(2, {Int64s({1}, {5})}, feed_info, 3000),
             SUCCESS, "feed the placed graph");
    std::vector<Tensor> out;
    DataFlowInfo info;
    StatusIs(session->FetchDataFlowGraph(2, out, info, 3000), SUCCESS,
             "fetch the placed graph");
    if (Eq(out.size(), static_cast<size_t>(1), "placed: outputs")) {
      Eq(Values<int64_t>(out[0]),
         std::vector<int64_t>({5, static_cast<int64_t>(devices.back())}),
         "placed: [value, the device the node ran on]");
    }
  }
  std::remove(deploy.c_str());
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  return Finish("balance");
}
