// GraphFromFlowGraph: a finished FlowGraph built with hflow/graph.h as a
// GraphDef, reporting the first builder misuse a handle remembered (naming
// the graph, node and call). Nodes are found by walking back from the graph
// outputs; they are listed in creation order, which is what a reader of the
// building code expects as "file order" for stable topological sorting.
//
// Thread-safety: a finished FlowGraph may be converted from any thread
// (conversion only reads).
#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <type_traits>

#include "deploy/graph_def.h"
#include "deploy/graph_impl.h"
#include "flow_func/tensor_data_type.h"
#include "hflow/graph.h"

namespace hflow {

using FlowFunc::TensorDataType;

namespace deploy {
namespace {

namespace fs = std::filesystem;
using NodeImpl = GraphAccess::NodeImpl;
using GraphImpl = GraphAccess::GraphImpl;
using PpImpl = GraphAccess::PpImpl;

flow_func::AttrValueImpl::Value ToAttrValue(const InitParam& p) {
  return std::visit(
      [](const auto& v) -> flow_func::AttrValueImpl::Value {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, DataType>) {
          return static_cast<TensorDataType>(v);
        } else if constexpr (std::is_same_v<T, std::vector<DataType>>) {
          std::vector<TensorDataType> out;
          for (DataType d : v) out.push_back(static_cast<TensorDataType>(d));
          return out;
        } else {
          return v;
        }
      },
      p);
}

// Every node reachable backwards from the outputs, each once, in creation
// order.
std::vector<const NodeImpl*> CollectNodes(const GraphImpl& g) {
  std::set<const NodeImpl*> seen;
  std::vector<const NodeImpl*> stack, out;
  for (const auto& o : g.outputs) stack.push_back(o.first.get());
  while (!stack.empty()) {
    const NodeImpl* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    out.push_back(n);
    for (const auto& in : n->inputs) {
      if (in.node) stack.push_back(in.node.get());
    }
  }
  std::sort(out.begin(), out.end(), [](const NodeImpl* a, const NodeImpl* b) {
    return a->seq < b->seq;
  });
  return out;
}

Status ConvertInput(const GraphImpl& g, const NodeImpl::Input& in, size_t i,
                    OutputRef* out) {
  using Kind = NodeImpl::Input::Kind;
  if (in.kind == Kind::kNode) {
    *out = OutputRef{in.node->name, in.index};
    return Status::OK();
  }
  if (in.kind == Kind::kUnset) return Status::OK();  // validation names it
  const FlowData& d = *in.data;
  const std::string where =
      "input " + std::to_string(i) + ": FlowData '" + d.name() + "'";
  auto it =
      std::find_if(g.inputs.begin(), g.inputs.end(),
                   [&](const FlowData& x) { return x.name() == d.name(); });
  if (it == g.inputs.end()) {
    return Status::InvalidArgument(where +
                                   " is not a graph input; list it "
                                   "in FlowGraph::SetInputs");
  }
  if (it->index() != d.index()) {
    return Status::InvalidArgument(
        where + " has index " + std::to_string(d.index()) +
        " but the graph input of that name has index " +
        std::to_string(it->index()) + "; use the same FlowData");
  }
  *out = OutputRef{d.name(), 0};
  return Status::OK();
}

// Unmapped entries default to identity (graph.h: "map in order unless
// MapInput/MapOutput say otherwise"); no mapping at all stays empty.
std::vector<uint32_t> ConvertMap(
    const std::vector<std::optional<uint32_t>>& m) {
  if (std::none_of(m.begin(), m.end(), [](const auto& e) { return e; })) {
    return {};
  }
  std::vector<uint32_t> out;
  for (size_t i = 0; i < m.size(); ++i) {
    out.push_back(m[i] ? *m[i] : static_cast<uint32_t>(i));
  }
  return out;
}

PpDef ConvertPp(const PpImpl& pp) {
  PpDef out;
  out.name = pp.name;
  out.function = pp.function;
  if (!pp.compile_config.empty()) {
    out.compile_config =
        fs::absolute(pp.compile_config).lexically_normal().string();
  }
  for (const auto& [key, value] : pp.init_params) {
    out.init_params[key] =
        std::make_shared<flow_func::AttrValueImpl>(ToAttrValue(value));
  }
  return out;
}

Status ConvertNode(const GraphImpl& g, const NodeImpl& n, NodeDef* out) {
  if (!n.error.empty()) return Status::InvalidArgument(n.error);
  if (!n.pp) {
    return Status::InvalidArgument("has no FunctionPp; call AddPp");
  }
  out->name = n.name;
  out->output_num = n.output_num;
  out->inputs.resize(n.inputs.size());
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    HFLOW_RETURN_IF_ERROR(ConvertInput(g, n.inputs[i], i, &out->inputs[i]));
  }
  out->pp = ConvertPp(*n.pp);
  out->input_map = ConvertMap(n.input_map);
  out->output_map = ConvertMap(n.output_map);
  out->input_attrs = n.input_attrs;
  out->flow_attr = n.flow_attr;
  out->input_flow_attrs = n.input_flow_attrs;
  out->output_flow_attrs = n.output_flow_attrs;
  out->balance = n.balance;
  return Status::OK();
}

Status CheckGraphInputs(const GraphImpl& g) {
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (g.inputs[i].index() != static_cast<int32_t>(i)) {
      return Status::InvalidArgument(
          "SetInputs: FlowData '" + g.inputs[i].name() + "' has index " +
          std::to_string(g.inputs[i].index()) + " but is at position " +
          std::to_string(i) + "; list graph inputs in index order from 0");
    }
    const std::string problem = FlowAttrProblem(g.inputs[i].flow_attr());
    if (!problem.empty()) {
      return Status::InvalidArgument("FlowData '" + g.inputs[i].name() +
                                     "': SetFlowAttr: " + problem);
    }
  }
  return Status::OK();
}

}  // namespace

Status GraphFromFlowGraph(const FlowGraph& graph, GraphDef* out) {
  const GraphImpl& g = *GraphAccess::Of(graph);
  const std::string source = "FlowGraph " + g.name;
  // Messages read "FlowGraph g: node 'add': MapInput(3, ...): ...".
  auto bad = [&source](const Status& s, const std::string& ctx) {
    return s.WithContext(source + ": " + ctx);
  };
  if (!g.error.empty()) return bad(Status::InvalidArgument(g.error), "");
  HFLOW_RETURN_IF_ERROR(bad(CheckGraphInputs(g), ""));
  if (g.outputs.empty()) {
    // Nodes are found from the outputs: without any there is no graph.
    return bad(Status::InvalidArgument("no outputs; call SetOutputs with the "
                                       "nodes whose outputs are fetched"),
               "");
  }
  GraphDef def;
  def.name = g.name;
  def.source = source;
  std::error_code ec;
  def.base_dir = fs::current_path(ec).string();
  for (const auto& in : g.inputs) {
    def.inputs.push_back(in.name());
    def.input_flow_attrs.push_back(in.flow_attr());
  }
  def.flow_attr = g.flow_attr;
  for (const NodeImpl* n : CollectNodes(g)) {
    NodeDef node;
    Status s = ConvertNode(g, *n, &node);
    if (!s.ok()) return bad(s, "node '" + n->name + "': ");
    def.nodes.push_back(std::move(node));
  }
  for (const auto& [node, index] : g.outputs) {
    def.outputs.push_back(OutputRef{node->name, index});
  }
  def.exception_catch = g.exception_catch;
  def.align = g.align;
  def.deploy_info_json = g.deploy_info_json;
  HFLOW_RETURN_IF_ERROR(ValidateGraphStructure(def));
  *out = std::move(def);
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow
