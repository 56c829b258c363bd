// The private state behind the graph API's handles (hflow/graph.h):
// FunctionPp, FlowNode and FlowGraph each hold a shared Impl defined here,
// and GraphAccess is the one door to it. Only src/deploy/graph.cc (the
// builder calls and the conversion to GraphDef) includes this header.
//
// Thread-safety: plain data; the handles' rules apply (build on one
// thread, read a finished graph from any).
#ifndef HFLOW_DEPLOY_GRAPH_IMPL_H_
#define HFLOW_DEPLOY_GRAPH_IMPL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "deploy/graph_def.h"
#include "hflow/graph.h"

namespace hflow {

// The one door to the handles' private Impl (a friend of each handle):
// hflow/graph.h only forward-declares Impl; this header defines it.
class GraphAccess {
 public:
  using PpImpl = FunctionPp::Impl;
  using NodeImpl = FlowNode::Impl;
  using GraphImpl = FlowGraph::Impl;
  static const std::shared_ptr<PpImpl>& Of(const FunctionPp& pp) {
    return pp.impl_;
  }
  static const std::shared_ptr<NodeImpl>& Of(const FlowNode& node) {
    return node.impl_;
  }
  static const std::shared_ptr<GraphImpl>& Of(const FlowGraph& graph) {
    return graph.impl_;
  }
};

struct FunctionPp::Impl {
  std::string name;
  std::string compile_config;  // as given; made absolute on conversion
  std::string function;
  std::map<std::string, InitParam> init_params;  // a later Set wins
};

struct FlowNode::Impl {
  // One node input: unset, a graph input, or output `index` of `node`.
  struct Input {
    enum class Kind { kUnset, kData, kNode } kind = Kind::kUnset;
    std::optional<FlowData> data;
    std::shared_ptr<GraphAccess::NodeImpl> node;
    uint32_t index = 0;
  };

  std::string name;
  uint32_t input_num = 0;
  uint32_t output_num = 0;
  uint64_t seq = 0;  // creation order
  std::vector<Input> inputs;
  std::shared_ptr<GraphAccess::PpImpl> pp;
  std::vector<std::optional<uint32_t>> input_map;  // node input -> pp input
  std::vector<std::optional<uint32_t>> output_map;
  std::vector<std::vector<InputAttr>> input_attrs;
  FlowAttr flow_attr;
  std::vector<FlowAttr> input_flow_attrs;   // sized to input_num
  std::vector<FlowAttr> output_flow_attrs;  // sized to output_num
  flow_func::BalanceKind balance = flow_func::BalanceKind::kNone;
  std::string error;  // the first misuse, "Call(args): what"

  void Fail(const std::string& e) {
    if (error.empty()) error = e;
  }
  bool InputInRange(const std::string& call, uint32_t i) {
    if (i < input_num) return true;
    Fail(call + ": node input index " + std::to_string(i) + " out of range (" +
         std::to_string(input_num) + " inputs)");
    return false;
  }
};

struct FlowGraph::Impl {
  std::string name;
  std::vector<FlowData> inputs;
  std::vector<std::pair<std::shared_ptr<GraphAccess::NodeImpl>, uint32_t>>
      outputs;
  bool exception_catch = false;
  deploy::InputsAlign align;
  std::string deploy_info_json;
  FlowAttr flow_attr;
  std::string error;

  void Fail(const std::string& e) {
    if (error.empty()) error = e;
  }
};

}  // namespace hflow

#endif  // HFLOW_DEPLOY_GRAPH_IMPL_H_
