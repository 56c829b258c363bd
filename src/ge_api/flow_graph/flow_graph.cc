// DataFlow's FlowData, FlowNode and FlowGraph (flow_graph/flow_graph.h).
// Part of libflow_graph.so (old string ABI). A FlowNode's DataFlow state
// lives behind its operator (OperatorImpl::flow), so the FlowOperator
// copies FlowGraph::SetInputs/SetOutputs take (sliced) still find it.
//
// Thread-safety: as the handles.
#include "ge_api/flow_graph/flow_graph_internal.h"

namespace ge {
namespace dflow {
namespace {
std::string Str(const char* s) { return s == nullptr ? "" : s; }

void Misuse(OperatorImpl* op, const std::string& what) {
  if (op->error.empty()) op->error = what;
}

std::string NameOf(const ge::Operator& op) {
  const auto& impl = OperatorAccess::Impl(op);
  return impl ? impl->name : "";
}
}  // namespace

FlowOperator::FlowOperator(const char* name, const char* type)
    : ge::Operator(name, type) {}
FlowOperator::~FlowOperator() = default;

FlowData::FlowData(const char* name, int64_t index)
    : FlowOperator(name, "Data") {
  OutputRegister("y");
  SetAttr("index", index);
}
FlowData::~FlowData() = default;

FlowNode::FlowNode(const char* name, uint32_t input_num, uint32_t output_num)
    : FlowOperator(name, "FlowNode"), impl_(std::make_shared<FlowNodeImpl>()) {
  DynamicInputRegister("x", input_num);
  DynamicOutputRegister("y", output_num);
  impl_->input_num = input_num;
  impl_->output_num = output_num;
  OperatorAccess::Impl(*this)->flow = impl_;
}
FlowNode::~FlowNode() = default;

FlowNode& FlowNode::SetInput(uint32_t dst_index, const FlowOperator& src_op,
                             uint32_t src_index) {
  OperatorImpl* op = OperatorAccess::Impl(*this).get();
  const std::string call = "SetInput(" + std::to_string(dst_index) + ", '" +
                           NameOf(src_op) + "', " + std::to_string(src_index) +
                           ")";
  if (dst_index >= impl_->input_num) {
    Misuse(op, call + ": input index out of range (the node has " +
                   std::to_string(impl_->input_num) + " inputs)");
    return *this;
  }
  const auto& src = OperatorAccess::Impl(src_op);
  if (src && src_index >= src->output_names.size()) {
    Misuse(op, call + ": '" + src->name + "' has " +
                   std::to_string(src->output_names.size()) + " output(s)");
    return *this;
  }
  ge::Operator::SetInput(dst_index, src_op, src_index);
  return *this;
}

FlowNode& FlowNode::AddPp(const ProcessPoint& pp) {
  OperatorImpl* op = OperatorAccess::Impl(*this).get();
  if (!impl_->pp.is_null()) {
    Misuse(op, "AddPp('" + Str(pp.GetProcessPointName()) +
                   "'): the node has a process point already ('" +
                   impl_->pp_name + "'); a node runs one");
    return *this;
  }
  AscendString text;
  pp.Serialize(text);
  impl_->pp = Json::parse(text.GetString(), nullptr, false);
  impl_->pp_name = Str(pp.GetProcessPointName());
  // A GraphPp (or a FunctionPp's invoked GraphPp) whose graph could not
  // be saved: the node reports it at AddGraph.
  std::vector<std::pair<std::string, Json*>> models;
  if (impl_->pp.contains("model_pp")) {
    models.push_back({"", &impl_->pp["model_pp"]});
  }
  if (impl_->pp.contains("invoked_closures") &&
      impl_->pp["invoked_closures"].is_object()) {
    for (auto& c : impl_->pp["invoked_closures"].items()) {
      models.push_back({" invoked closure '" + c.key() + "'", &c.value()});
    }
  }
  for (const auto& m : models) {
    if (!m.second->is_object() || !m.second->contains("error")) continue;
    Misuse(op, "AddPp('" + impl_->pp_name + "')" + m.first + ": " +
                   (*m.second)["error"].get<std::string>());
    m.second->erase("error");
  }
  if (pp.GetProcessPointType() == ProcessPointType::FUNCTION &&
      Str(pp.GetCompileConfig()).empty()) {
    Misuse(op, "AddPp('" + impl_->pp_name +
                   "'): the FunctionPp has no compile config; call "
                   "SetCompileConfig with its JSON file first");
  }
  return *this;
}

namespace {
// The graph-file attr of one DataFlowInputAttr, or null (with a misuse).
Json InputAttr(OperatorImpl* op, const std::string& call,
               const DataFlowInputAttr& a) {
  if (a.attr_value == nullptr) {
    Misuse(op, call + ": an input attribute has a null attr_value");
    return nullptr;
  }
  // Only the fields GE enables pass on (GE's CountBatch ignores batch_dim,
  // flag and drop_remainder; its TimeBatch ignores time_interval, timeout,
  // flag and padding), so hflow's defaults apply to the rest as GE's do.
  if (a.attr_type == DataFlowAttrType::COUNT_BATCH) {
    const auto* c = static_cast<const CountBatch*>(a.attr_value);
    return {{"count_batch",
             {{"batch_size", c->batch_size},
              {"slide_stride", c->slide_stride},
              {"timeout", c->timeout},
              {"padding", c->padding}}}};
  }
  if (a.attr_type == DataFlowAttrType::TIME_BATCH) {
    const auto* t = static_cast<const TimeBatch*>(a.attr_value);
    return {{"time_batch",
             {{"time_window", t->time_window},
              {"batch_dim", t->batch_dim},
              {"drop_remainder", t->drop_remainder}}}};
  }
  Misuse(op, call + ": input attribute type " +
                 std::to_string(static_cast<int>(a.attr_type)) +
                 " is neither COUNT_BATCH nor TIME_BATCH");
  return nullptr;
}
}  // namespace

FlowNode& FlowNode::MapInput(uint32_t node_input_index, const ProcessPoint& pp,
                             uint32_t pp_input_index,
                             const std::vector<DataFlowInputAttr>& attrs) {
  OperatorImpl* op = OperatorAccess::Impl(*this).get();
  const std::string call = "MapInput(" + std::to_string(node_input_index) +
                           ", '" + Str(pp.GetProcessPointName()) + "', " +
                           std::to_string(pp_input_index) + ")";
  if (node_input_index >= impl_->input_num) {
    Misuse(op, call + ": input index out of range (the node has " +
                   std::to_string(impl_->input_num) + " inputs)");
    return *this;
  }
  if (impl_->pp.is_null() || impl_->pp_name != Str(pp.GetProcessPointName())) {
    Misuse(op, call + ": the process point is not the one AddPp added" +
                   (impl_->pp.is_null() ? " (call AddPp first)" : ""));
    return *this;
  }
  impl_->input_map[node_input_index] = pp_input_index;
  if (attrs.size() > 1) {
    Misuse(op, call + ": give at most one input attribute per input");
    return *this;
  }
  for (const auto& a : attrs) {
    Json j = InputAttr(op, call, a);
    if (!j.is_null()) impl_->input_attrs[node_input_index] = j;
  }
  return *this;
}

FlowNode& FlowNode::MapOutput(uint32_t node_output_index,
                              const ProcessPoint& pp,
                              uint32_t pp_output_index) {
  OperatorImpl* op = OperatorAccess::Impl(*this).get();
  const std::string call = "MapOutput(" + std::to_string(node_output_index) +
                           ", '" + Str(pp.GetProcessPointName()) + "', " +
                           std::to_string(pp_output_index) + ")";
  if (node_output_index >= impl_->output_num) {
    Misuse(op, call + ": output index out of range (the node has " +
                   std::to_string(impl_->output_num) + " outputs)");
    return *this;
  }
  if (impl_->pp.is_null() || impl_->pp_name != Str(pp.GetProcessPointName())) {
    Misuse(op, call + ": the process point is not the one AddPp added");
    return *this;
  }
  impl_->output_map[node_output_index] = pp_output_index;
  return *this;
}

FlowNode& FlowNode::SetBalanceScatter() {
  impl_->balance = "scatter";
  return *this;
}
FlowNode& FlowNode::SetBalanceGather() {
  impl_->balance = "gather";
  return *this;
}

// ---- FlowGraph ----
class FlowGraphImpl {
 public:
  std::shared_ptr<FlowGraphData> data = std::make_shared<FlowGraphData>();
  // Refers to `data` (not to this object), so there is no cycle and a
  // ge::Graph copied out of ToGeGraph stays usable on its own.
  ge::Graph graph;
};

FlowGraph::FlowGraph(const char* name)
    : impl_(std::make_shared<FlowGraphImpl>()) {
  impl_->data->name = Str(name);
  impl_->graph = ge::Graph(name);
  std::shared_ptr<const FlowGraphData> data = impl_->data;
  GraphAccess::Impl(impl_->graph)->flow_json = [data](std::string* json,
                                                      std::string* error) {
    return FlowGraphJson(*data, json, error);
  };
}
FlowGraph::~FlowGraph() = default;

const ge::Graph& FlowGraph::ToGeGraph() const { return impl_->graph; }

FlowGraph& FlowGraph::SetInputs(const std::vector<FlowOperator>& inputs) {
  impl_->data->inputs.assign(inputs.begin(), inputs.end());
  return *this;
}
FlowGraph& FlowGraph::SetOutputs(const std::vector<FlowOperator>& outputs) {
  impl_->data->outputs.clear();
  for (const auto& o : outputs) impl_->data->outputs.push_back({o, {}});
  return *this;
}
FlowGraph& FlowGraph::SetOutputs(
    const std::vector<std::pair<FlowOperator, std::vector<size_t>>>& outputs) {
  impl_->data->outputs.clear();
  for (const auto& o : outputs) {
    if (o.second.empty() && impl_->data->error.empty()) {
      impl_->data->error = "SetOutputs: node '" + NameOf(o.first) +
                           "' is given with no output indexes";
    }
    impl_->data->outputs.push_back({o.first, o.second});
  }
  return *this;
}
void FlowGraph::SetGraphPpBuilderAsync(bool async) {
  impl_->data->graphpp_builder_async = async;
}
const char* FlowGraph::GetName() const { return impl_->data->name.c_str(); }
FlowGraph& FlowGraph::SetContainsNMappingNode(bool contains) {
  impl_->data->contains_n_mapping = contains;
  return *this;
}
FlowGraph& FlowGraph::SetInputsAlignAttrs(uint32_t max_cache, int32_t timeout,
                                          bool dropout) {
  impl_->data->align_set = true;
  impl_->data->align_max_cache = max_cache;
  impl_->data->align_timeout = timeout;
  impl_->data->align_dropout = dropout;
  return *this;
}
FlowGraph& FlowGraph::SetExceptionCatch(bool enable) {
  impl_->data->exception_catch = enable;
  return *this;
}

}  // namespace dflow
}  // namespace ge
