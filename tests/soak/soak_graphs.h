// The graphs hflow_soak runs and how their messages are made and checked.
// Every graph maps a message of value v (a tensor of n copies of v) to one
// output of n copies of 2v, so an output names the message it came from.
//
// Thread-safety: pure functions.
#ifndef HFLOW_TESTS_SOAK_SOAK_GRAPHS_H_
#define HFLOW_TESTS_SOAK_SOAK_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "hflow/hflow.h"

namespace hflow {
namespace soak {

inline constexpr int kGraphKinds = 3;

// 0: x ── a@2 ── b@3 ── c@4 ── add(c, c)@5
// 1: x ── id (replicas on 2~5) ── add(id, id)@3
// 2: a, b ── add@4
inline FlowGraph MakeGraph(int kind) {
  FunctionPp id_pp("id_pp");
  id_pp.SetFunction("_BuiltIn_Identity");
  FunctionPp add_pp("add_pp");
  add_pp.SetFunction("_BuiltIn_Add");
  FlowNode add("add", 2, 1);
  if (kind == 0) {
    FlowData x("x", 0);
    FlowNode a("a", 1, 1), b("b", 1, 1), c("c", 1, 1);
    a.SetInput(0, x).AddPp(id_pp);
    b.SetInput(0, a, 0).AddPp(id_pp);
    c.SetInput(0, b, 0).AddPp(id_pp);
    add.SetInput(0, c, 0).SetInput(1, c, 0).AddPp(add_pp);
    FlowGraph g("soak_chain");
    g.SetInputs({x}).SetOutputs({add});
    g.SetDeployInfo(R"({"deploy_info": [
        {"flow_node_name": "a", "logic_device_id": "0:0:2"},
        {"flow_node_name": "b", "logic_device_id": "0:0:3"},
        {"flow_node_name": "c", "logic_device_id": "0:0:4"},
        {"flow_node_name": "add", "logic_device_id": "0:0:5"}]})");
    return g;
  }
  if (kind == 1) {
    FlowData x("x", 0);
    FlowNode id("id", 1, 1);
    id.SetInput(0, x).AddPp(id_pp);
    add.SetInput(0, id, 0).SetInput(1, id, 0).AddPp(add_pp);
    FlowGraph g("soak_replicas");
    g.SetInputs({x}).SetOutputs({add});
    g.SetDeployInfo(R"({"batch_deploy_info": [
        {"flow_node_list": ["id"], "logic_device_list": "0:0:2~5"},
        {"flow_node_list": ["add"], "logic_device_list": "0:0:3"}]})");
    return g;
  }
  FlowData a("a", 0), b("b", 1);
  add.SetInput(0, a).SetInput(1, b).AddPp(add_pp);
  FlowGraph g("soak_two_inputs");
  g.SetInputs({a, b}).SetOutputs({add});
  g.SetDeployInfo(R"({"deploy_info": [
      {"flow_node_name": "add", "logic_device_id": "0:0:4"}]})");
  return g;
}

// The inputs of one message of value `v` with `n` elements per tensor.
inline std::vector<Tensor> MakeInputs(int kind, int64_t v, size_t n) {
  Tensor t = Tensor::From<int64_t>(DataType::kInt64, {int64_t(n)},
                                   std::vector<int64_t>(n, v));
  if (kind == 2) return {t, t};
  return {t};
}

// Empty when `out` is a well-formed output; sets *v to the message value.
inline std::string CheckOutput(const std::vector<Tensor>& out, int64_t* v) {
  if (out.size() != 1) return "expected one output tensor";
  std::vector<int64_t> d = out[0].As<int64_t>();
  if (d.empty() || d.size() > 64) return "bad output size";
  for (int64_t x : d) {
    if (x != d[0]) return "output elements differ (corrupted data)";
  }
  if (d[0] % 2 != 0) return "output is not twice an input";
  *v = d[0] / 2;
  return "";
}

}  // namespace soak
}  // namespace hflow

#endif  // HFLOW_TESTS_SOAK_SOAK_GRAPHS_H_
