// DataFlow's graph: FlowData (graph inputs) and FlowNode (compute nodes, one
// process point each) are GE operators; FlowGraph ties them into the graph
// ge::Session::AddGraph takes (ToGeGraph).
//
//   FlowData a ─┐
//               ├─ FlowNode add (FunctionPp) ── graph output
//   FlowData b ─┘
//
// Errors: builder calls chain and cannot fail on the spot. A node remembers
// its first misuse (an input index out of range, a second AddPp, a MapInput
// naming another process point, a null input attribute); AddGraph then
// fails with ACL_ERROR_GE_PARAM_INVALID and a log line naming the graph,
// the node and the call.
//
// Thread-safety: build on one thread; copies share their node.
#ifndef HFLOW_GE_FLOW_GRAPH_FLOW_GRAPH_H_
#define HFLOW_GE_FLOW_GRAPH_FLOW_GRAPH_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "flow_graph/flow_attr.h"
#include "flow_graph/process_point.h"
#include "graph/graph.h"

namespace ge {
namespace dflow {
class FlowOperator : public ge::Operator {
 public:
  ~FlowOperator() override;

 protected:
  FlowOperator(const char* name, const char* type);
};

class FlowData : public FlowOperator {
 public:
  FlowData(const char* name, int64_t index);
  ~FlowData() override;
};

class FlowNodeImpl;
class FlowNode : public FlowOperator {
 public:
  FlowNode(const char* name, uint32_t input_num, uint32_t output_num);
  ~FlowNode() override;
  FlowNode& SetInput(uint32_t dst_index, const FlowOperator& src_op,
                     uint32_t src_index = 0);
  FlowNode& MapInput(uint32_t node_input_index, const ProcessPoint& pp,
                     uint32_t pp_input_index,
                     const std::vector<DataFlowInputAttr>& attrs = {});
  FlowNode& MapOutput(uint32_t node_output_index, const ProcessPoint& pp,
                      uint32_t pp_output_index);
  FlowNode& AddPp(const ProcessPoint& pp);
  FlowNode& SetBalanceScatter();
  FlowNode& SetBalanceGather();

 private:
  std::shared_ptr<FlowNodeImpl> impl_;
};

class FlowGraphImpl;
using FlowGraphImplPtr = std::shared_ptr<FlowGraphImpl>;
class FlowGraph {
 public:
  explicit FlowGraph(const char* name);
  ~FlowGraph();
  // The ge::Graph for ge::Session::AddGraph. It refers to this flow graph:
  // later builder calls reach it, as in GE.
  const ge::Graph& ToGeGraph() const;
  FlowGraph& SetInputs(const std::vector<FlowOperator>& inputs);
  // Every output of each node, in order.
  FlowGraph& SetOutputs(const std::vector<FlowOperator>& outputs);
  // Chosen outputs of each node.
  FlowGraph& SetOutputs(
      const std::vector<std::pair<FlowOperator, std::vector<size_t>>>&
          output_indexes);
  // GE builds GraphPps' graphs asynchronously when set; hflow runs no model
  // graphs, so it only records it.
  void SetGraphPpBuilderAsync(bool graphpp_builder_async);
  const char* GetName() const;
  // GE's hint that a node maps one input to many outputs (or many to one);
  // hflow pairs outputs by transaction either way, so it only records it.
  FlowGraph& SetContainsNMappingNode(bool contains_n_mapping_node);
  // Input alignment of fetches: at most `align_max_cache_num` (0 = off,
  // up to 1024) incomplete transactions kept for `align_timeout` ms each
  // (-1 = forever, else up to 600000); past either, dropped or returned
  // with ACL_ERROR_GE_DATA_NOT_ALIGNED.
  FlowGraph& SetInputsAlignAttrs(uint32_t align_max_cache_num,
                                 int32_t align_timeout,
                                 bool dropout_when_not_align = false);
  // A UDF's RaiseException reaches the fetcher
  // (ACL_ERROR_GE_USER_RAISE_EXCEPTION) and drops the transaction.
  FlowGraph& SetExceptionCatch(bool enable_exception_catch);

 private:
  FlowGraphImplPtr impl_;
};
}  // namespace dflow
}  // namespace ge

#endif  // HFLOW_GE_FLOW_GRAPH_FLOW_GRAPH_H_
