// Graph builders and placement helpers shared by hflow's tests: one way to
// make a node running one function, a linear chain of such nodes, the
// two-input add pipeline, and deploy info written from a C++ description
// ({{"node", {devices...}}}) instead of retyped JSON text. Tests of the
// deploy-info parser itself keep their literal JSON.
//
// Thread-safety: the helpers are reentrant; the returned graphs are values
// owned by the caller.
#ifndef HFLOW_TESTS_TEST_GRAPHS_H_
#define HFLOW_TESTS_TEST_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hflow/graph.h"
#include "hflow/session.h"

namespace hflow {
namespace testing {

// "0:0:<device>": the logic device id of a local device.
std::string LogicDevice(int32_t device);

// "0:0:<a>,0:0:<b>,...": a logic device list naming `devices` in order.
std::string LogicDeviceList(const std::vector<int32_t>& devices);

// Where one node runs: one device, or several (the node's replicas, in
// order).
struct NodePlacement {
  std::string node;
  std::vector<int32_t> devices;
};
using Placement = std::vector<NodePlacement>;

// Deploy-info JSON for `placement`: a node on one device becomes a
// "deploy_info" entry, a node on several a "batch_deploy_info" entry of its
// own. An empty placement gives "{}" (the deployer's round robin).
std::string DeployInfoJson(const Placement& placement);

// Sets `g`'s deploy info to DeployInfoJson(placement); returns `g`.
FlowGraph& Place(FlowGraph& g, const Placement& placement);

// A pp `pp_name` running `func`.
FunctionPp Pp(const std::string& pp_name, const std::string& func);

// A node `name` with `inputs` inputs and `outputs` outputs and one pp
// running `func`; the pp is named `pp_name`, or "<name>_pp" when empty.
// Inputs are left for the caller to set.
FlowNode FuncNode(const std::string& name, const std::string& func,
                  uint32_t inputs = 1, uint32_t outputs = 1,
                  const std::string& pp_name = "");

// One node of a chain: its name, function and devices (several make
// replicas), its pp's name ("<node>_pp" when empty), and how many inputs it
// has (each fed by the previous node's output 0, as add(c, c) is).
struct ChainStage {
  std::string node;
  std::string func;
  std::vector<int32_t> devices;
  std::string pp = "";
  uint32_t inputs = 1;
};

// x ── stages[0] ── stages[1] ── ... ── out: graph `name` with one input
// "x", the last stage its output, each stage placed on its devices.
FlowGraph ChainGraph(const std::string& name,
                     const std::vector<ChainStage>& stages);

// x ── id@devices.front() ── <node>@devices.back() ── out: graph `name`
// whose second node runs `func` (pps "id_pp" and "<node>_pp"); the hang and
// crash tests' graph, the UDF under test on the set's last device.
FlowGraph IdentityThen(const std::string& name, const std::string& node,
                       const std::string& func,
                       const std::vector<int32_t>& devices);

// x ── a@2 ── b@3 ── c@4 ── add(c, c)@5 ── out (out = 2x): the fault tests'
// chain; a runs `first_func` in pp `first_pp`, b and c in pps "id_pp".
FlowGraph DoublingChain(const std::string& name,
                        const std::string& first_func = "_BuiltIn_Identity",
                        const std::string& first_pp = "first_pp");

//   a ─┐
//      ├─ add@d0 ── twice@d1 (add + add) ── out
//   b ─┘
// The two-input add pipeline "add_pipeline" (out = 2(a + b)).
FlowGraph AddPipeline(int32_t d0 = 2, int32_t d1 = 3);

//   x ── id (replicas on `id_devices`) ── add(id, id)@add_devices ── out
// (out = 2x; pps "id_pp" and "add_pp").
FlowGraph ReplicatedDoubler(const std::string& name,
                            const std::vector<int32_t>& id_devices = {2, 3, 4,
                                                                      5},
                            const std::vector<int32_t>& add_devices = {3});

//   a ─┐
//      ├─ add@device ── out    (graph `name`, pp "add_pp")
//   b ─┘
FlowGraph TwoInputAdd(const std::string& name, int32_t device);

// A one-element int64 tensor holding `v`: the input the chains above take.
Tensor I64(int64_t v);

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_TEST_GRAPHS_H_
