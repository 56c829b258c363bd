// The public graph-building API (hflow/graph.h) and its conversion into a
// GraphDef (GraphFromFlowGraph).
//
// Builder calls return the builder for chaining, so they cannot fail on the
// spot (GE's DataFlow API has the same shape). Instead each handle remembers
// its first misuse — with the call and its arguments — and
// GraphFromFlowGraph reports it, naming the graph, node and call. Nodes are
// found by walking back from the graph outputs; they are listed in creation
// order, which is what a reader of the building code expects as "file
// order" for stable topological sorting.
//
// Node inputs hold their producers with shared_ptr, as GE operators hold
// their upstream, so a graph stays alive while its outputs are held. A
// cyclic graph (rejected by validation) therefore keeps itself alive until
// one of its inputs is re-set.
//
// Thread-safety: build on one thread; a finished FlowGraph may be converted
// from any thread (conversion only reads).
#include "hflow/graph.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <type_traits>

#include "deploy/graph_def.h"
#include "deploy/graph_impl.h"
#include "flow_func/tensor_data_type.h"

namespace hflow {

using FlowFunc::TensorDataType;

// Init params cross to the UDF unchanged: the numbers must agree.
static_assert(static_cast<int32_t>(DataType::kFloat) ==
              static_cast<int32_t>(TensorDataType::DT_FLOAT));
static_assert(static_cast<int32_t>(DataType::kInt32) ==
              static_cast<int32_t>(TensorDataType::DT_INT32));
static_assert(static_cast<int32_t>(DataType::kInt64) ==
              static_cast<int32_t>(TensorDataType::DT_INT64));
static_assert(static_cast<int32_t>(DataType::kBool) ==
              static_cast<int32_t>(TensorDataType::DT_BOOL));
static_assert(static_cast<int32_t>(DataType::kBf16) ==
              static_cast<int32_t>(TensorDataType::DT_BF16));

namespace {

std::atomic<uint64_t> g_next_node_seq{0};

std::string Args(uint32_t a) { return "(" + std::to_string(a) + ", ...)"; }

}  // namespace

FlowData::FlowData(std::string name, int32_t index)
    : name_(std::move(name)),
      index_(index),
      flow_attr_(std::make_shared<FlowAttr>()) {}

// Checked on conversion (a FlowData has no misuse record of its own).
FlowData& FlowData::SetFlowAttr(const FlowAttr& attr) {
  *flow_attr_ = attr;
  return *this;
}

FunctionPp::FunctionPp(std::string name) : impl_(std::make_shared<Impl>()) {
  impl_->name = std::move(name);
}

FunctionPp& FunctionPp::SetCompileConfig(std::string json_file) {
  impl_->compile_config = std::move(json_file);
  return *this;
}

FunctionPp& FunctionPp::SetFunction(std::string function) {
  impl_->function = std::move(function);
  return *this;
}

FunctionPp& FunctionPp::SetInitParam(std::string name, InitParam value) {
  impl_->init_params[std::move(name)] = std::move(value);
  return *this;
}

FlowNode::FlowNode(std::string name, uint32_t input_num, uint32_t output_num)
    : impl_(std::make_shared<Impl>()) {
  impl_->name = std::move(name);
  impl_->input_num = input_num;
  impl_->output_num = output_num;
  impl_->seq = g_next_node_seq.fetch_add(1, std::memory_order_relaxed);
  impl_->inputs.resize(input_num);
  impl_->input_map.resize(input_num);
  impl_->output_map.resize(output_num);
  impl_->input_attrs.resize(input_num);
  impl_->input_flow_attrs.resize(input_num);
  impl_->output_flow_attrs.resize(output_num);
}

const std::string& FlowNode::name() const { return impl_->name; }

FlowNode& FlowNode::SetInput(uint32_t dst_index, const FlowData& src) {
  if (!impl_->InputInRange("SetInput" + Args(dst_index), dst_index)) {
    return *this;
  }
  Impl::Input& in = impl_->inputs[dst_index];
  in = Impl::Input{Impl::Input::Kind::kData, src, nullptr, 0};
  return *this;
}

FlowNode& FlowNode::SetInput(uint32_t dst_index, const FlowNode& src,
                             uint32_t src_index) {
  const std::string call = "SetInput(" + std::to_string(dst_index) + ", '" +
                           src.name() + "', " + std::to_string(src_index) + ")";
  if (!impl_->InputInRange(call, dst_index)) return *this;
  if (src_index >= src.impl_->output_num) {
    impl_->Fail(call + ": node '" + src.name() + "' has " +
                std::to_string(src.impl_->output_num) +
                " output(s); output index " + std::to_string(src_index) +
                " out of range");
    return *this;
  }
  impl_->inputs[dst_index] =
      Impl::Input{Impl::Input::Kind::kNode, std::nullopt, src.impl_, src_index};
  return *this;
}

FlowNode& FlowNode::AddPp(const FunctionPp& pp) {
  if (impl_->pp) {
    impl_->Fail("AddPp('" + GraphAccess::Of(pp)->name +
                "'): the node already has "
                "FunctionPp '" +
                impl_->pp->name + "'; a node takes one pp");
    return *this;
  }
  impl_->pp = GraphAccess::Of(pp);
  return *this;
}

namespace {

// Shared by MapInput/MapOutput: `pp` must be the node's, indexes in range,
// each node index mapped once.
bool RecordMapping(GraphAccess::NodeImpl* n, const std::string& call,
                   const FunctionPp& pp, uint32_t node_index, uint32_t pp_index,
                   bool input) {
  const char* kind = input ? "input" : "output";
  const uint32_t num = input ? n->input_num : n->output_num;
  auto& map = input ? n->input_map : n->output_map;
  if (n->pp != GraphAccess::Of(pp)) {
    n->Fail(call + ": FunctionPp '" + GraphAccess::Of(pp)->name +
            "' was not added to this node; call AddPp with it first");
    return false;
  }
  if (node_index >= num || pp_index >= num) {
    const bool node_side = node_index >= num;
    n->Fail(call + ": " + (node_side ? "node " : "pp ") + kind + " index " +
            std::to_string(node_side ? node_index : pp_index) +
            " out of range (" + std::to_string(num) + " " + kind + "s)");
    return false;
  }
  if (map[node_index]) {
    n->Fail(call + ": node " + kind + " " + std::to_string(node_index) +
            " is already mapped; map it once");
    return false;
  }
  map[node_index] = pp_index;
  return true;
}

}  // namespace

FlowNode& FlowNode::MapInput(uint32_t node_input, const FunctionPp& pp,
                             uint32_t pp_input, std::vector<InputAttr> attrs) {
  const std::string call = "MapInput" + Args(node_input);
  if (RecordMapping(impl_.get(), call, pp, node_input, pp_input, true)) {
    impl_->input_attrs[node_input] = std::move(attrs);
  }
  return *this;
}

FlowNode& FlowNode::MapOutput(uint32_t node_output, const FunctionPp& pp,
                              uint32_t pp_output) {
  RecordMapping(impl_.get(), "MapOutput" + Args(node_output), pp, node_output,
                pp_output, false);
  return *this;
}

namespace {

// Records `attr` in `*slot`, or the misuse naming `call`.
template <typename Impl>
void SetAttr(Impl* impl, const std::string& call, const FlowAttr& attr,
             FlowAttr* slot) {
  const std::string problem = deploy::FlowAttrProblem(attr);
  if (!problem.empty()) {
    impl->Fail(call + ": " + problem);
    return;
  }
  *slot = attr;
}

}  // namespace

FlowNode& FlowNode::SetFlowAttr(const FlowAttr& attr) {
  SetAttr(impl_.get(), "SetFlowAttr", attr, &impl_->flow_attr);
  return *this;
}

FlowNode& FlowNode::SetInputFlowAttr(uint32_t node_input,
                                     const FlowAttr& attr) {
  const std::string call = "SetInputFlowAttr" + Args(node_input);
  if (!impl_->InputInRange(call, node_input)) return *this;
  SetAttr(impl_.get(), call, attr, &impl_->input_flow_attrs[node_input]);
  return *this;
}

FlowNode& FlowNode::SetOutputFlowAttr(uint32_t node_output,
                                      const FlowAttr& attr) {
  const std::string call = "SetOutputFlowAttr" + Args(node_output);
  if (node_output >= impl_->output_num) {
    impl_->Fail(call + ": node output index " + std::to_string(node_output) +
                " out of range (" + std::to_string(impl_->output_num) +
                " outputs)");
    return *this;
  }
  SetAttr(impl_.get(), call, attr, &impl_->output_flow_attrs[node_output]);
  return *this;
}

FlowGraph& FlowGraph::SetFlowAttr(const FlowAttr& attr) {
  SetAttr(impl_.get(), "SetFlowAttr", attr, &impl_->flow_attr);
  return *this;
}

namespace {
// GE records the second of SetBalanceScatter/SetBalanceGather as an error
// and fails the graph at compile time; hflow reports it at BuildGraph.
void SetBalance(GraphAccess::NodeImpl* n, flow_func::BalanceKind kind,
                const char* call) {
  using flow_func::BalanceKind;
  if (n->balance != BalanceKind::kNone && n->balance != kind) {
    n->Fail(std::string(call) + ": the node is already a " +
            flow_func::BalanceName(n->balance) +
            " node; a node is a balance scatter or a balance gather node, "
            "not both: drop one call");
    return;
  }
  n->balance = kind;
}
}  // namespace

FlowNode& FlowNode::SetBalanceScatter() {
  SetBalance(impl_.get(), flow_func::BalanceKind::kScatter,
             "SetBalanceScatter()");
  return *this;
}

FlowNode& FlowNode::SetBalanceGather() {
  SetBalance(impl_.get(), flow_func::BalanceKind::kGather,
             "SetBalanceGather()");
  return *this;
}

FlowGraph::FlowGraph(std::string name) : impl_(std::make_shared<Impl>()) {
  impl_->name = std::move(name);
}

const std::string& FlowGraph::name() const { return impl_->name; }

FlowGraph& FlowGraph::SetInputs(std::vector<FlowData> inputs) {
  impl_->inputs = std::move(inputs);
  return *this;
}

FlowGraph& FlowGraph::SetOutputs(std::vector<FlowNode> nodes) {
  impl_->outputs.clear();
  for (const auto& n : nodes) {
    for (uint32_t j = 0; j < GraphAccess::Of(n)->output_num; ++j) {
      impl_->outputs.emplace_back(GraphAccess::Of(n), j);
    }
  }
  return *this;
}

FlowGraph& FlowGraph::SetOutputs(
    std::vector<std::pair<FlowNode, uint32_t>> outputs) {
  impl_->outputs.clear();
  for (const auto& [node, index] : outputs) {
    impl_->outputs.emplace_back(GraphAccess::Of(node), index);
  }
  return *this;
}

FlowGraph& FlowGraph::SetExceptionCatch(bool enable) {
  impl_->exception_catch = enable;
  return *this;
}

FlowGraph& FlowGraph::SetInputsAlignAttrs(uint32_t max_cache_num,
                                          int32_t timeout_ms,
                                          bool dropout_when_not_align) {
  const std::string call = "SetInputsAlignAttrs(" +
                           std::to_string(max_cache_num) + ", " +
                           std::to_string(timeout_ms) + ", ...)";
  if (max_cache_num > deploy::kMaxAlignCache) {
    impl_->Fail(call + ": align_max_cache_num is at most " +
                std::to_string(deploy::kMaxAlignCache));
  } else if (timeout_ms != -1 &&
             (timeout_ms <= 0 || timeout_ms > deploy::kMaxAlignTimeoutMs)) {
    impl_->Fail(call + ": align_timeout is -1 (never) or 1.." +
                std::to_string(deploy::kMaxAlignTimeoutMs) + " ms");
  }
  impl_->align = {max_cache_num, timeout_ms, dropout_when_not_align};
  return *this;
}

FlowGraph& FlowGraph::SetDeployInfo(std::string deploy_info_json) {
  auto j = nlohmann::json::parse(deploy_info_json, nullptr,
                                 /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    impl_->Fail(
        "SetDeployInfo: the text is not a JSON object; pass the "
        "deploy info JSON text (docs/formats.md), not a file name");
  }
  impl_->deploy_info_json = std::move(deploy_info_json);
  return *this;
}

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
