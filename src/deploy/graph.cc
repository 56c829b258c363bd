// The public graph-building API (hflow/graph.h): FlowData, FunctionPp,
// FlowNode and FlowGraph. graph_convert.cc turns a finished FlowGraph into a
// GraphDef.
//
// Builder calls return the builder for chaining, so they cannot fail on the
// spot (GE's DataFlow API has the same shape). Instead each handle remembers
// its first misuse — with the call and its arguments — and
// GraphFromFlowGraph reports it, naming the graph, node and call.
//
// Node inputs hold their producers with shared_ptr, as GE operators hold
// their upstream, so a graph stays alive while its outputs are held. A
// cyclic graph (rejected by validation) therefore keeps itself alive until
// one of its inputs is re-set.
//
// Thread-safety: build on one thread.
#include "hflow/graph.h"

#include <atomic>
#include <nlohmann/json.hpp>

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

}  // namespace hflow
