// Flow attributes (hflow/graph.h FlowAttr, GE's _flow_attr_depth and
// _flow_attr_enqueue_policy): the policy names, the check both front ends
// share, and how the planner picks each queue's depth and policy from the
// levels a graph sets.
//
// Thread-safety: reentrant; works on the caller's values.
#include <cstdint>
#include <limits>

#include "deploy/graph_def.h"

namespace hflow {

bool ParseEnqueuePolicy(const std::string& text, EnqueuePolicy* out) {
  if (text == "FIFO") {
    *out = EnqueuePolicy::kFifo;
  } else if (text == "OVERWRITE") {
    *out = EnqueuePolicy::kOverwrite;
  } else {
    return false;
  }
  return true;
}

const char* EnqueuePolicyName(EnqueuePolicy policy) {
  switch (policy) {
    case EnqueuePolicy::kFifo:
      return "FIFO";
    case EnqueuePolicy::kOverwrite:
      return "OVERWRITE";
    case EnqueuePolicy::kUnset:
      break;
  }
  return "";
}

namespace deploy {
namespace {

// Queue depths are stored as uint32 and GE's attribute is an int32.
constexpr int64_t kMaxDepth = std::numeric_limits<int32_t>::max();

// The attribute of producer `ref` (a graph input or a node output), or null.
const FlowAttr* ProducerAttr(const GraphDef& g, const OutputRef& ref) {
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    if (g.inputs[i] == ref.op) {
      return i < g.input_flow_attrs.size() ? &g.input_flow_attrs[i] : nullptr;
    }
  }
  const NodeDef* n = g.FindNode(ref.op);
  if (n == nullptr || ref.index >= n->output_flow_attrs.size()) return nullptr;
  return &n->output_flow_attrs[ref.index];
}

}  // namespace

std::string FlowAttrProblem(const FlowAttr& attr) {
  if (attr.depth != 0 && (attr.depth < 2 || attr.depth > kMaxDepth)) {
    return "depth " + std::to_string(attr.depth) +
           (attr.depth < 2 ? ": must be at least 2"
                           : ": must be at most " + std::to_string(kMaxDepth)) +
           " (GE's _flow_attr_depth; 0 leaves it unset)";
  }
  switch (attr.enqueue_policy) {
    case EnqueuePolicy::kUnset:
    case EnqueuePolicy::kFifo:
    case EnqueuePolicy::kOverwrite:
      return "";
  }
  return "enqueue policy " +
         std::to_string(static_cast<int>(attr.enqueue_policy)) +
         " is not an EnqueuePolicy; use kFifo or kOverwrite";
}

// Note [Flow attribute precedence]
// GE reads a queue's flow attribute from the tensor (the edge), else the
// node, else the graph, else its default (depth 128, FIFO), taking the
// whole attribute from the first level that has one. hflow keeps that
// order, makes the consumer's side of an edge win over the producer's (a
// producer output may fan out to several consumers; the consumer input
// names one queue), and resolves depth and policy separately: a node that
// sets only the policy keeps the graph's depth rather than falling back to
// the default. The default is Options::queue_depth (64), not GE's 128, so
// graphs without attributes behave as before.
QueueAttr ResolveQueueAttr(const GraphDef& graph, const NodeDef* consumer,
                           uint32_t input, const OutputRef& producer,
                           uint32_t default_depth) {
  const FlowAttr* levels[4] = {nullptr, nullptr, nullptr, &graph.flow_attr};
  if (consumer != nullptr) {
    if (input < consumer->input_flow_attrs.size()) {
      levels[0] = &consumer->input_flow_attrs[input];
    }
    levels[2] = &consumer->flow_attr;
  }
  levels[1] = ProducerAttr(graph, producer);
  QueueAttr out;
  bool depth_set = false;
  bool policy_set = false;
  for (const FlowAttr* a : levels) {
    if (a == nullptr) continue;
    if (!depth_set && a->depth != 0) {
      out.depth = static_cast<uint32_t>(a->depth);
      depth_set = true;
    }
    if (!policy_set && a->enqueue_policy != EnqueuePolicy::kUnset) {
      out.policy = a->enqueue_policy;
      policy_set = true;
    }
  }
  if (!depth_set) out.depth = default_depth;
  return out;
}

}  // namespace deploy
}  // namespace hflow
