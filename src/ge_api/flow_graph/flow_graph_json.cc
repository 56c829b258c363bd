// FlowGraphJson: a DataFlow FlowGraph as hflow graph-file JSON (docs/
// formats.md "Graph file"). Every problem is worded in GE's terms, naming
// the graph, the node and the builder call, because the user wrote calls,
// not a file.
//
// Thread-safety: reads a finished graph; reentrant.
#include <algorithm>
#include <set>
#include <variant>

#include "ge_api/flow_graph/flow_graph_internal.h"

namespace ge {
namespace dflow {
namespace {

// GE's flow attributes on an operator (`_flow_attr` true, with
// `_flow_attr_depth` and `_flow_attr_enqueue_policy`), as a graph-file flow
// attr; null when the operator has none.
Json FlowAttrOf(const OperatorImpl& op) {
  auto on = op.attrs.find("_flow_attr");
  if (on == op.attrs.end() || !std::holds_alternative<bool>(on->second) ||
      !std::get<bool>(on->second)) {
    return nullptr;
  }
  Json attr = Json::object();
  auto depth = op.attrs.find("_flow_attr_depth");
  if (depth != op.attrs.end() &&
      std::holds_alternative<int64_t>(depth->second)) {
    attr["depth"] = std::get<int64_t>(depth->second);
  }
  auto policy = op.attrs.find("_flow_attr_enqueue_policy");
  if (policy != op.attrs.end() &&
      std::holds_alternative<std::string>(policy->second) &&
      !std::get<std::string>(policy->second).empty()) {
    attr["enqueue_policy"] = std::get<std::string>(policy->second);
  }
  return attr;
}

class Writer {
 public:
  explicit Writer(const FlowGraphData& g) : g_(g) {}

  bool Write(std::string* json, std::string* error) {
    Json doc = {{"name", g_.name}};
    if (!g_.error.empty()) return Fail(g_.error, error);
    if (!Inputs(&doc, error) || !Outputs(&doc, error)) return false;
    Json nodes = Json::array();
    for (const OperatorImpl* n : order_) {
      Json node;
      if (!Node(*n, &node, error)) return false;
      nodes.push_back(node);
    }
    if (nodes.empty()) return Fail("the graph has no FlowNode", error);
    doc["nodes"] = nodes;
    doc["exception_catch"] = g_.exception_catch;
    if (g_.align_set) {
      doc["inputs_align"] = {{"max_cache_num", g_.align_max_cache},
                             {"timeout_ms", g_.align_timeout},
                             {"dropout", g_.align_dropout}};
    }
    *json = doc.dump();
    return true;
  }

 private:
  bool Fail(const std::string& what, std::string* error) {
    *error = "FlowGraph '" + g_.name + "': " + what;
    return false;
  }

  static const FlowNodeImpl* NodeOf(const OperatorImpl& op) {
    return static_cast<const FlowNodeImpl*>(op.flow.get());
  }

  // Graph inputs in FlowData index order when the indexes are 0..n-1 (as
  // GE requires), else as SetInputs listed them.
  bool Inputs(Json* doc, std::string* error) {
    std::vector<std::pair<int64_t, std::string>> in;
    Json input_attrs = Json::object();
    for (const Operator& op : g_.inputs) {
      const auto& impl = OperatorAccess::Impl(op);
      if (!impl || impl->type != "Data") {
        return Fail("SetInputs: '" + (impl ? impl->name : "") +
                        "' is not a FlowData (graph inputs are FlowData)",
                    error);
      }
      int64_t index = 0;
      op.GetAttr("index", index);
      in.push_back({index, impl->name});
      inputs_.insert(impl.get());
      Json attr = FlowAttrOf(*impl);
      if (!attr.is_null()) input_attrs[impl->name] = attr;
    }
    std::vector<std::pair<int64_t, std::string>> sorted = in;
    std::sort(sorted.begin(), sorted.end());
    bool dense = true;
    for (size_t i = 0; i < sorted.size(); ++i) {
      dense = dense && sorted[i].first == static_cast<int64_t>(i);
    }
    Json names = Json::array();
    for (const auto& p : dense ? sorted : in) names.push_back(p.second);
    (*doc)["inputs"] = names;
    if (!input_attrs.empty()) (*doc)["input_flow_attrs"] = input_attrs;
    return true;
  }

  bool Outputs(Json* doc, std::string* error) {
    if (g_.outputs.empty()) {
      return Fail("no outputs; call SetOutputs with the nodes to fetch", error);
    }
    Json refs = Json::array();
    for (const auto& o : g_.outputs) {
      const auto& impl = OperatorAccess::Impl(o.first);
      const FlowNodeImpl* n = impl ? NodeOf(*impl) : nullptr;
      if (n == nullptr) {
        return Fail("SetOutputs: '" + (impl ? impl->name : "") +
                        "' is not a FlowNode (outputs are FlowNode outputs)",
                    error);
      }
      std::vector<size_t> idx = o.second;
      if (idx.empty()) {
        for (uint32_t i = 0; i < n->output_num; ++i) idx.push_back(i);
      }
      for (size_t i : idx) {
        if (i >= n->output_num) {
          return Fail("SetOutputs: node '" + impl->name + "' has " +
                          std::to_string(n->output_num) + " output(s); index " +
                          std::to_string(i) + " is out of range",
                      error);
        }
        refs.push_back(impl->name + ":" + std::to_string(i));
      }
      Visit(impl.get());
    }
    (*doc)["outputs"] = refs;
    return true;
  }

  // Post-order over node inputs: producers before consumers.
  void Visit(const OperatorImpl* op) {
    if (op == nullptr || NodeOf(*op) == nullptr) return;
    if (!seen_.insert(op).second) return;
    for (const auto& in : op->inputs) Visit(in.second.src.get());
    order_.push_back(op);
  }

  bool Node(const OperatorImpl& op, Json* out, std::string* error) {
    const FlowNodeImpl& n = *NodeOf(op);
    const std::string where = "node '" + op.name + "': ";
    if (!op.error.empty()) return Fail(where + op.error, error);
    if (n.pp.is_null()) {
      return Fail(where + "no process point; call AddPp with a FunctionPp",
                  error);
    }
    Json inputs = Json::array();
    for (uint32_t i = 0; i < n.input_num; ++i) {
      auto it = op.inputs.find(i);
      if (it == op.inputs.end() || !it->second.src) {
        return Fail(where + "input " + std::to_string(i) +
                        " is not set; call SetInput(" + std::to_string(i) +
                        ", ...)",
                    error);
      }
      const OperatorImpl& src = *it->second.src;
      if (NodeOf(src) == nullptr) {
        inputs.push_back(src.name);  // a FlowData: a graph input
      } else {
        inputs.push_back(src.name + ":" + std::to_string(it->second.src_index));
      }
    }
    Json node = {
        {"name", op.name}, {"inputs", inputs}, {"outputs", n.output_num}};
    for (const auto& kv : n.pp.items()) node[kv.key()] = kv.value();
    if (!n.input_map.empty()) node["input_map"] = Map(n.input_map, n.input_num);
    if (!n.output_map.empty()) {
      node["output_map"] = Map(n.output_map, n.output_num);
    }
    if (!n.input_attrs.empty()) {
      Json attrs = Json::object();
      for (const auto& a : n.input_attrs)
        attrs[std::to_string(a.first)] = a.second;
      node["input_attrs"] = attrs;
    }
    if (!n.balance.empty()) node["balance"] = n.balance;
    Json attr = FlowAttrOf(op);
    if (!attr.is_null()) node["flow_attr"] = attr;
    *out = node;
    return true;
  }

  // A full map: indexes not mapped keep their own index.
  static Json Map(const std::map<uint32_t, uint32_t>& m, uint32_t count) {
    Json list = Json::array();
    for (uint32_t i = 0; i < count; ++i) {
      auto it = m.find(i);
      list.push_back(it == m.end() ? i : it->second);
    }
    return list;
  }

  const FlowGraphData& g_;
  std::set<const OperatorImpl*> inputs_;
  std::set<const OperatorImpl*> seen_;
  std::vector<const OperatorImpl*> order_;
};

}  // namespace

bool FlowGraphJson(const FlowGraphData& graph, std::string* json,
                   std::string* error) {
  return Writer(graph).Write(json, error);
}

}  // namespace dflow
}  // namespace ge
