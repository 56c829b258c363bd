// The state behind DataFlow's handles (FlowNode, process points, FlowGraph)
// in libflow_graph.so (old string ABI), and the writer that turns a
// FlowGraph into hflow's graph-file JSON (docs/formats.md "Graph file"),
// which is how a GE program's graph reaches hflow's core: text crosses the
// string-ABI boundary between these libraries and libhflow unchanged.
//
// Thread-safety: as the handles: built on one thread, read from any.
#ifndef HFLOW_GE_API_FLOW_GRAPH_FLOW_GRAPH_INTERNAL_H_
#define HFLOW_GE_API_FLOW_GRAPH_FLOW_GRAPH_INTERNAL_H_

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "flow_graph/flow_graph.h"
#include "ge_api/graph/graph_internal.h"

namespace ge {
namespace dflow {

using Json = nlohmann::json;

class ProcessPointImpl {
 public:
  std::string name;
  ProcessPointType type = ProcessPointType::INVALID;
  std::string compile_config;
};

class FlowNodeImpl {
 public:
  uint32_t input_num = 0;
  uint32_t output_num = 0;
  // The process point as Serialize wrote it when it was added (GE
  // serializes at AddPp too), and its name; null before AddPp.
  Json pp;
  std::string pp_name;
  std::map<uint32_t, uint32_t> input_map;   // node input -> pp input
  std::map<uint32_t, uint32_t> output_map;  // node output -> pp output
  std::map<uint32_t, Json> input_attrs;     // node input -> graph-file attr
  std::string balance;                      // "", "scatter" or "gather"
};

struct FlowGraphData {
  std::string name;
  std::vector<Operator> inputs;
  // (node, output indexes); an empty list means every output.
  std::vector<std::pair<Operator, std::vector<size_t>>> outputs;
  bool exception_catch = false;
  bool align_set = false;
  uint32_t align_max_cache = 0;
  int32_t align_timeout = -1;
  bool align_dropout = false;
  bool contains_n_mapping = false;
  bool graphpp_builder_async = false;
  std::string error;  // the first misuse of a graph-level call
};

// The graph as hflow graph-file JSON, or false with the first problem
// (a builder misuse, an unset input, a node without a process point) in
// *error, naming the graph, the node and the call.
bool FlowGraphJson(const FlowGraphData& graph, std::string* json,
                   std::string* error);

// Writes a GE graph file's `bytes` into this process's folder of them
// (Note [GraphPp graph files], graph_file_dir.cc, removed at exit); *path
// is the new file, or false with *error.
bool WriteGraphFile(const std::string& bytes, const std::string& name,
                    std::string* path, std::string* error);

}  // namespace dflow
}  // namespace ge

#endif  // HFLOW_GE_API_FLOW_GRAPH_FLOW_GRAPH_INTERNAL_H_
