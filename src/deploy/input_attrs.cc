// ExpandInputAttrs (see graph_def.h): DataFlow's CountBatch/TimeBatch input
// attributes become built-in batch nodes (GE runs them as built-in UDFs too).
//
//   producer ──[in i, CountBatch]── node
//   becomes
//   producer ── node.batch<i> (_BuiltIn_CountBatch) ── node
//
// Thread-safety: works on the caller's GraphDef.
#include <memory>

#include "deploy/graph_def.h"
#include "flow_func/init_params.h"

namespace hflow {
namespace deploy {
namespace {

using flow_func::AttrValueImpl;

std::shared_ptr<const FlowFunc::AttrValue> Int(int64_t v) {
  return std::make_shared<AttrValueImpl>(AttrValueImpl::Value(v));
}
std::shared_ptr<const FlowFunc::AttrValue> Bool(bool v) {
  return std::make_shared<AttrValueImpl>(AttrValueImpl::Value(v));
}

PpDef BatchPp(const InputAttr& attr, const std::string& name) {
  PpDef pp;
  pp.name = name;
  if (const auto* c = std::get_if<CountBatch>(&attr)) {
    pp.function = "_BuiltIn_CountBatch";
    pp.init_params = {{"batch_size", Int(c->batch_size)},
                      {"slide_stride", Int(c->slide_stride)},
                      {"timeout", Int(c->timeout)},
                      {"padding", Bool(c->padding)},
                      {"batch_dim", Int(c->batch_dim)},
                      {"drop_remainder", Bool(c->drop_remainder)}};
  } else {
    const auto& t = std::get<TimeBatch>(attr);
    pp.function = "_BuiltIn_TimeBatch";
    pp.init_params = {{"time_window", Int(t.time_window)},
                      {"timeout", Int(t.timeout)},
                      {"batch_dim", Int(t.batch_dim)},
                      {"padding", Bool(t.padding)},
                      {"drop_remainder", Bool(t.drop_remainder)}};
  }
  return pp;
}

}  // namespace

Status ExpandInputAttrs(GraphDef* graph) {
  std::vector<NodeDef> added;
  for (NodeDef& n : graph->nodes) {
    for (size_t i = 0; i < n.input_attrs.size() && i < n.inputs.size(); ++i) {
      if (n.input_attrs[i].empty()) continue;
      if (n.input_attrs[i].size() > 1) {
        return Status::InvalidArgument(graph->source + ": node '" + n.name +
                                       "': input " + std::to_string(i) +
                                       " has more than one batch attribute");
      }
      NodeDef b;
      b.name = n.name + ".batch" + std::to_string(i);
      if (graph->FindNode(b.name) != nullptr) {
        return Status::InvalidArgument(graph->source + ": node name '" +
                                       b.name +
                                       "' is reserved for the batch "
                                       "of node '" +
                                       n.name + "'");
      }
      b.inputs = {n.inputs[i]};
      b.output_num = 1;
      b.pp = BatchPp(n.input_attrs[i].front(), b.name);
      b.colocate_with = n.name;
      // The producer now fills the batch node's queue: the node's flow
      // attributes for this input apply there (and still to the queue
      // between the batch node and the node).
      b.flow_attr = n.flow_attr;
      if (i < n.input_flow_attrs.size()) {
        b.input_flow_attrs = {n.input_flow_attrs[i]};
      }
      n.inputs[i] = OutputRef{b.name, 0};
      n.input_attrs[i].clear();
      added.push_back(std::move(b));
    }
  }
  for (auto& b : added) graph->nodes.push_back(std::move(b));
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow
