// The DataFlow graph model (GE dflow): FlowData (graph inputs), FlowNode
// (compute nodes with one FunctionPp), FunctionPp (a UDF: compile config,
// function name, init params) and FlowGraph. The same model loads from the
// JSON graph file of docs/user_guide.md (hflow::LoadGraphFile).
//
//   FlowData a ─┐
//               ├─ FlowNode add (FunctionPp "Add") ── graph output
//   FlowData b ─┘
//
// FlowNode and FunctionPp are handles: copies refer to the same node, so
// SetInput(…, upstream) links nodes as GE's operators do, and FlowGraph
// finds every node by walking back from its outputs.
//
// Errors: builder calls return the builder for chaining and cannot fail on
// the spot. Each handle remembers its first misuse (an index out of range,
// a second AddPp, a MapInput naming another node's FunctionPp, bad deploy
// info JSON, a flow attribute's depth below 2) with the call and its arguments;
// Session::AddGraph then fails with kInvalidArgument naming the graph, node and
// call. No call throws.
//
// Thread-safety: build a graph on one thread (handles share their node, so
// two threads using copies of one handle race); a finished FlowGraph may
// be read from any thread (AddGraph only reads it).
#ifndef HFLOW_GRAPH_H_
#define HFLOW_GRAPH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "hflow/status.h"
#include "hflow/types.h"

namespace hflow {

// Input attributes (FlowNode::MapInput): DataFlow's CountBatch / TimeBatch.
struct CountBatch {
  int64_t batch_size = 0;
  int64_t slide_stride = 0;
  int64_t timeout = 0;  // ms, 0 = wait until full
  bool padding = false;
  int64_t batch_dim = -1;  // -1: stack along a new leading dimension
  bool drop_remainder = false;
};
struct TimeBatch {
  int64_t time_window = 0;  // ms (-1: whole segments)
  int64_t timeout = 0;
  int64_t batch_dim = -1;
  bool padding = false;
  bool drop_remainder = false;
};
using InputAttr = std::variant<CountBatch, TimeBatch>;

// Flow attributes (GE's `_flow_attr`, `_flow_attr_depth`,
// `_flow_attr_enqueue_policy`): the depth and enqueue policy of the queues
// messages wait in. They are set at four levels; for each queue, each of
// the two fields comes from the most specific level that sets it:
//   1. edge, consumer side: FlowNode::SetInputFlowAttr (that input's queue);
//   2. edge, producer side: FlowNode::SetOutputFlowAttr, FlowData::
//      SetFlowAttr (every queue that output or graph input feeds, graph
//      output queues included);
//   3. node: FlowNode::SetFlowAttr (the queues of all the node's inputs);
//   4. graph: FlowGraph::SetFlowAttr (every queue);
// and else Options::queue_depth and FIFO.
enum class EnqueuePolicy {
  kUnset,      // not set at this level: the next level decides
  kFifo,       // GE "FIFO": an enqueue into a full queue waits for room
  kOverwrite,  // GE "OVERWRITE": it drops the oldest message, never waits
};
struct FlowAttr {
  int64_t depth = 0;  // messages a queue holds, at least 2; 0 = not set
  EnqueuePolicy enqueue_policy = EnqueuePolicy::kUnset;
};
// GE's spellings, exact case: "FIFO" and "OVERWRITE" (false for others).
bool ParseEnqueuePolicy(const std::string& text, EnqueuePolicy* out);
// "FIFO", "OVERWRITE", or "" for kUnset.
const char* EnqueuePolicyName(EnqueuePolicy policy);

// An init param value (what GetAttr in the UDF sees).
using InitParam =
    std::variant<int64_t, float, bool, std::string, std::vector<int64_t>,
                 std::vector<float>, std::vector<bool>,
                 std::vector<std::string>, std::vector<std::vector<int64_t>>,
                 DataType, std::vector<DataType>>;

class FlowData {
 public:
  FlowData(std::string name, int32_t index);
  const std::string& name() const { return name_; }
  int32_t index() const { return index_; }
  // Edge level: every queue this graph input feeds. Copies of a FlowData
  // share it (as FlowNode handles share their node). A bad value (depth
  // below 2) is reported by AddGraph.
  FlowData& SetFlowAttr(const FlowAttr& attr);
  const FlowAttr& flow_attr() const { return *flow_attr_; }

 private:
  std::string name_;
  int32_t index_;
  std::shared_ptr<FlowAttr> flow_attr_;
};

class FunctionPp {
 public:
  explicit FunctionPp(std::string name);
  // GE compile config (docs/user_guide.md); its func_list names the functions.
  FunctionPp& SetCompileConfig(std::string json_file);
  // A registered function (built in, e.g. "_BuiltIn_Add", or loaded), for
  // FunctionPps without a compile config.
  FunctionPp& SetFunction(std::string function);
  FunctionPp& SetInitParam(std::string name, InitParam value);

 private:
  // Defined in src/deploy/graph_impl.h; hflow's graph conversion reads it
  // through GraphAccess (declared and defined there only).
  struct Impl;
  friend class GraphAccess;
  std::shared_ptr<Impl> impl_;
};

class FlowNode {
 public:
  FlowNode(std::string name, uint32_t input_num, uint32_t output_num);
  // Input `dst_index` is graph input `src`, or output `src_index` of `src`.
  FlowNode& SetInput(uint32_t dst_index, const FlowData& src);
  FlowNode& SetInput(uint32_t dst_index, const FlowNode& src,
                     uint32_t src_index = 0);
  // One process point per node (as GE); inputs/outputs map in order unless
  // MapInput/MapOutput say otherwise.
  FlowNode& AddPp(const FunctionPp& pp);
  FlowNode& MapInput(uint32_t node_input, const FunctionPp& pp,
                     uint32_t pp_input, std::vector<InputAttr> attrs = {});
  FlowNode& MapOutput(uint32_t node_output, const FunctionPp& pp,
                      uint32_t pp_output);
  // Flow attributes (see FlowAttr): node level (the queues of all its
  // inputs), one input's queue, every queue one output feeds.
  FlowNode& SetFlowAttr(const FlowAttr& attr);
  FlowNode& SetInputFlowAttr(uint32_t node_input, const FlowAttr& attr);
  FlowNode& SetOutputFlowAttr(uint32_t node_output, const FlowAttr& attr);
  // Load balancing (docs/user_guide.md "Load balancing"): a scatter node's
  // UDF cuts a transaction into cells sent without affinity, a gather
  // node's re-sends them by row or column (OutOptions' BalanceConfig). A
  // node is one or the other: setting both is an error BuildGraph reports.
  FlowNode& SetBalanceScatter();
  FlowNode& SetBalanceGather();
  const std::string& name() const;

 private:
  // Defined in src/deploy/graph_impl.h; hflow's graph conversion reads it
  // through GraphAccess (declared and defined there only).
  struct Impl;
  friend class GraphAccess;
  std::shared_ptr<Impl> impl_;
};

class FlowGraph {
 public:
  explicit FlowGraph(std::string name);
  FlowGraph& SetInputs(std::vector<FlowData> inputs);
  // Every output of each node, in order.
  FlowGraph& SetOutputs(std::vector<FlowNode> nodes);
  // Chosen outputs: (node, output index) pairs.
  FlowGraph& SetOutputs(std::vector<std::pair<FlowNode, uint32_t>> outputs);
  // With exception catch, RaiseException in a UDF reaches the fetcher.
  FlowGraph& SetExceptionCatch(bool enable);
  // Input alignment (GE's SetInputsAlignAttrs): a fetch waits for a
  // transaction on every output it takes, caching at most `max_cache_num`
  // incomplete transactions (1..1024; 0 turns alignment off) for at most
  // `timeout_ms` each (-1: forever, else 1..600000). A transaction past
  // either limit is dropped (`dropout_when_not_align`) or returned as it
  // is, with kNotAligned. Out of range values are reported by AddGraph.
  FlowGraph& SetInputsAlignAttrs(uint32_t max_cache_num, int32_t timeout_ms,
                                 bool dropout_when_not_align = false);
  // Placement (GE deploy info JSON text), as the graph file's "deploy".
  FlowGraph& SetDeployInfo(std::string deploy_info_json);
  // Graph level flow attributes: every queue not set more specifically.
  FlowGraph& SetFlowAttr(const FlowAttr& attr);
  const std::string& name() const;

 private:
  // Defined in src/deploy/graph_impl.h; hflow's graph conversion reads it
  // through GraphAccess (declared and defined there only).
  struct Impl;
  friend class GraphAccess;
  std::shared_ptr<Impl> impl_;
};

}  // namespace hflow

#endif  // HFLOW_GRAPH_H_
