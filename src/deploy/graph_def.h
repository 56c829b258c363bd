// GraphDef: the plain, validated description of a flow graph that planning
// and deployment work on. Both front ends produce it: the C++ graph API
// (hflow::FlowGraph) and the JSON graph file (docs/formats.md).
//
// Thread-safety: plain values; functions are reentrant.
#ifndef HFLOW_DEPLOY_GRAPH_DEF_H_
#define HFLOW_DEPLOY_GRAPH_DEF_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "flow_func/balance.h"
#include "flow_func/compile_config.h"
#include "flow_func/init_params.h"
#include "hflow/graph.h"
#include "hflow/status.h"

namespace hflow {
namespace deploy {

// A producer: graph input `op` (index unused), or output `index` of node `op`.
struct OutputRef {
  std::string op;
  uint32_t index = 0;
  bool operator==(const OutputRef& o) const {
    return op == o.op && index == o.index;
  }
  std::string ToString() const;  // "add:0" or "a"
};

struct PpDef {
  std::string name;
  std::string compile_config;  // absolute path, or empty
  std::string function;        // registered name when no compile config
  // "func_list" of the graph file: functions registered in the process,
  // each with its indexes (neither function nor compile config then).
  std::vector<flow_func::FuncDesc> funcs;
  flow_func::AttrMap init_params;
};

// A model node's model (model_pp with a graph file): what the model UDF of
// libhflow_model.so loads (src/model/model_config.h). Paths are absolute.
struct ModelDef {
  std::string framework;   // "onnx"
  std::string graph_file;  // empty: no model file (a GE graph, kept)
  std::map<std::string, std::string> load_params;  // GE's parser options
  std::string compile_config;    // GE's graph compile config, or empty
  int64_t intra_op_threads = 0;  // 0: the default (1)
};

// A model a UDF invokes (FunctionPp::AddInvokedClosure; "invoked_closures"
// in the graph file): RunFlowModel(key, ...) runs it.
struct InvokedModelDef {
  std::string key;   // the name the UDF invokes it by
  std::string what;  // "GraphPp 'name' invoked as 'key'", for messages
  ModelDef model;    // graph_file empty: none (fails at build)
};

struct NodeDef {
  std::string name;
  std::vector<OutputRef> inputs;  // one per node input
  uint32_t output_num = 0;
  PpDef pp;
  // Node input i feeds pp input input_map[i]; node output j is pp output
  // output_map[j]. Identity when not mapped.
  std::vector<uint32_t> input_map;
  std::vector<uint32_t> output_map;
  std::vector<std::vector<InputAttr>> input_attrs;  // per node input
  // Flow attributes as given (hflow/graph.h FlowAttr; unset fields
  // inherit): node level, per node input, per node output. The vectors are
  // empty or sized to inputs/output_num.
  FlowAttr flow_attr;
  std::vector<FlowAttr> input_flow_attrs;
  std::vector<FlowAttr> output_flow_attrs;
  // Placed on the first device of this node (nodes hflow inserts).
  std::string colocate_with;
  // SetBalanceScatter / SetBalanceGather, "balance" in the graph file.
  flow_func::BalanceKind balance = flow_func::BalanceKind::kNone;
  // Model process points ("model_pp" and "invoked_closures" in the graph
  // file; GE's GraphPp, FlowGraphPp and FunctionPp::AddInvokedClosure):
  // each entry reads "GraphPp 'name'" (closures add " invoked as 'key'").
  // A model_pp with a graph file (`model`) runs as the model UDF (its pp
  // names it); an invoked closure with one is loaded with each instance of
  // the node; one without a graph file fails at build.
  std::string model_pp;
  ModelDef model;
  std::vector<InvokedModelDef> invoked;
};

// The inputs and outputs of a node's process point (its input and output
// maps applied).
inline uint32_t PpInputs(const NodeDef& n) {
  if (n.input_map.empty()) return static_cast<uint32_t>(n.inputs.size());
  uint32_t top = 0;
  for (uint32_t i : n.input_map) top = i > top ? i : top;
  return top + 1;
}

inline uint32_t PpOutputs(const NodeDef& n) {
  if (n.output_map.empty()) return n.output_num;
  uint32_t top = 0;
  for (uint32_t i : n.output_map) top = i > top ? i : top;
  return top + 1;
}

// Input alignment of a graph's fetches (FlowGraph::SetInputsAlignAttrs),
// with GE's limits.
inline constexpr uint32_t kMaxAlignCache = 1024;
inline constexpr int32_t kMaxAlignTimeoutMs = 600 * 1000;
struct InputsAlign {
  uint32_t max_cache = 0;  // 0: off
  int32_t timeout_ms = -1;
  bool dropout = false;
};

struct GraphDef {
  std::string name;
  std::string source;    // file name or "FlowGraph <name>" (for messages)
  std::string base_dir;  // resolves relative paths (compile configs, deploy)
  std::vector<std::string> inputs;  // graph input names, by index
  std::vector<NodeDef> nodes;
  std::vector<OutputRef> outputs;
  bool exception_catch = false;
  InputsAlign align;
  std::string deploy_info_json;            // inline deploy info, or
  std::string deploy_info_path;            // a deploy info file (absolute)
  FlowAttr flow_attr;                      // graph level
  std::vector<FlowAttr> input_flow_attrs;  // per graph input; empty or sized

  const NodeDef* FindNode(std::string_view name) const;
  bool IsGraphInput(std::string_view name) const;
};

// The JSON graph file (docs/formats.md), paths relative to the file.
Status LoadGraphFile(const std::string& path, GraphDef* out);
Status ParseGraphJson(std::string_view text, std::string_view source,
                      const std::string& base_dir, GraphDef* out);

// The C++ graph API.
Status GraphFromFlowGraph(const FlowGraph& graph, GraphDef* out);

// Structure: unique names, every reference resolves (graph input or node
// output within range), every node input connected, outputs valid, mappings
// in range, no cycles. Each error names the source, node and field.
Status ValidateGraphStructure(const GraphDef& graph);

// Nodes running a built-in function (no compile config) are wired as it
// needs: _BuiltIn_Add 2 inputs and 1 output, _BuiltIn_Identity at most one
// output per input. Checked when functions are resolved (BuildGraph,
// hflow validate and run), not by ValidateGraphStructure, whose graphs may
// name a built-in before they are complete.
Status CheckBuiltinArity(const GraphDef& graph);

// kNotSupported naming the first node that runs or invokes a model graph
// hflow does not run yet (a model_pp without a graph file, an invoked
// closure); OK otherwise. CheckBuiltinArity checks it too, so every build and
// plan does.
Status CheckModelNodes(const GraphDef& graph);

// Turns CountBatch/TimeBatch input attributes into built-in batch nodes in
// front of the input ("<node>.batch<i>", placed with the node), so the
// executor sees plain UDF nodes.
Status ExpandInputAttrs(GraphDef* graph);

// A flow attribute's problem ("depth 1: must be at least 2"), or "" when
// it is valid (unset fields are valid). Both front ends word their errors
// around it.
std::string FlowAttrProblem(const FlowAttr& attr);

// The depth and policy of one queue (Note [Flow attribute precedence] in
// flow_attrs.cc): the queue of `consumer`'s input `input`, or, with a null
// consumer, the graph output queue of `producer`.
struct QueueAttr {
  uint32_t depth = 0;
  EnqueuePolicy policy = EnqueuePolicy::kFifo;
};
QueueAttr ResolveQueueAttr(const GraphDef& graph, const NodeDef* consumer,
                           uint32_t input, const OutputRef& producer,
                           uint32_t default_depth);

// Nodes in an order where every node comes after its producers.
std::vector<const NodeDef*> TopologicalOrder(const GraphDef& graph);

}  // namespace deploy
}  // namespace hflow

#endif  // HFLOW_DEPLOY_GRAPH_DEF_H_
