// Shared test graph builders (see test_graphs.h).
#include "test_graphs.h"

namespace hflow {
namespace testing {

std::string LogicDevice(int32_t device) {
  return "0:0:" + std::to_string(device);
}

std::string LogicDeviceList(const std::vector<int32_t>& devices) {
  std::string list;
  for (size_t i = 0; i < devices.size(); ++i) {
    list += (i ? "," : "") + LogicDevice(devices[i]);
  }
  return list;
}

std::string DeployInfoJson(const Placement& placement) {
  // Node names in tests are plain identifiers: no JSON escaping needed.
  std::string single, batch;
  for (const NodePlacement& p : placement) {
    if (p.devices.size() == 1) {
      single += std::string(single.empty() ? "" : ", ") +
                R"({"flow_node_name": ")" + p.node +
                R"(", "logic_device_id": ")" + LogicDevice(p.devices[0]) +
                "\"}";
    } else {
      batch += std::string(batch.empty() ? "" : ", ") +
               R"({"flow_node_list": [")" + p.node +
               R"("], "logic_device_list": ")" + LogicDeviceList(p.devices) +
               "\"}";
    }
  }
  std::string json;
  if (!batch.empty()) json += R"("batch_deploy_info": [)" + batch + "]";
  if (!single.empty()) {
    json += (json.empty() ? "" : ", ") + std::string(R"("deploy_info": [)") +
            single + "]";
  }
  return "{" + json + "}";
}

FlowGraph& Place(FlowGraph& g, const Placement& placement) {
  return g.SetDeployInfo(DeployInfoJson(placement));
}

FunctionPp Pp(const std::string& pp_name, const std::string& func) {
  FunctionPp pp(pp_name);
  pp.SetFunction(func);
  return pp;
}

FlowNode FuncNode(const std::string& name, const std::string& func,
                  uint32_t inputs, uint32_t outputs,
                  const std::string& pp_name) {
  FlowNode n(name, inputs, outputs);
  n.AddPp(Pp(pp_name.empty() ? name + "_pp" : pp_name, func));
  return n;
}

FlowGraph ChainGraph(const std::string& name,
                     const std::vector<ChainStage>& stages) {
  FlowData x("x", 0);
  std::vector<FlowNode> nodes;
  Placement placement;
  for (const ChainStage& s : stages) {
    FlowNode n(s.node, s.inputs, 1);
    for (uint32_t i = 0; i < s.inputs; ++i) {
      if (nodes.empty()) {
        n.SetInput(i, x);
      } else {
        n.SetInput(i, nodes.back(), 0);
      }
    }
    n.AddPp(Pp(s.pp.empty() ? s.node + "_pp" : s.pp, s.func));
    nodes.push_back(n);
    placement.push_back({s.node, s.devices});
  }
  FlowGraph g(name);
  g.SetInputs({x}).SetOutputs({nodes.back()});
  return Place(g, placement);
}

FlowGraph IdentityThen(const std::string& name, const std::string& node,
                       const std::string& func,
                       const std::vector<int32_t>& devices) {
  return ChainGraph(name, {{"id", "_BuiltIn_Identity", {devices.front()}},
                           {node, func, {devices.back()}}});
}

FlowGraph DoublingChain(const std::string& name, const std::string& first_func,
                        const std::string& first_pp) {
  return ChainGraph(name, {{"a", first_func, {2}, first_pp},
                           {"b", "_BuiltIn_Identity", {3}, "id_pp"},
                           {"c", "_BuiltIn_Identity", {4}, "id_pp"},
                           {"add", "_BuiltIn_Add", {5}, "add_pp", 2}});
}

FlowGraph AddPipeline(int32_t d0, int32_t d1) {
  FlowData a("a", 0), b("b", 1);
  FlowNode add = FuncNode("add", "_BuiltIn_Add", 2, 1);
  add.SetInput(0, a).SetInput(1, b);
  FlowNode twice = FuncNode("twice", "_BuiltIn_Add", 2, 1);
  twice.SetInput(0, add, 0).SetInput(1, add, 0);
  FlowGraph g("add_pipeline");
  g.SetInputs({a, b}).SetOutputs({twice});
  return Place(g, {{"add", {d0}}, {"twice", {d1}}});
}

FlowGraph ReplicatedDoubler(const std::string& name,
                            const std::vector<int32_t>& id_devices,
                            const std::vector<int32_t>& add_devices) {
  return ChainGraph(name, {{"id", "_BuiltIn_Identity", id_devices},
                           {"add", "_BuiltIn_Add", add_devices, "add_pp", 2}});
}

FlowGraph TwoInputAdd(const std::string& name, int32_t device) {
  FlowData a("a", 0), b("b", 1);
  FlowNode add = FuncNode("add", "_BuiltIn_Add", 2, 1);
  add.SetInput(0, a).SetInput(1, b);
  FlowGraph g(name);
  g.SetInputs({a, b}).SetOutputs({add});
  return Place(g, {{"add", {device}}});
}

Tensor I64(int64_t v) {
  return Tensor::From<int64_t>(DataType::kInt64, {1}, {v});
}

}  // namespace testing
}  // namespace hflow
