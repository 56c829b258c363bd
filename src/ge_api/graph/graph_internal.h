// The state behind ge::Operator and ge::Graph handles, shared by the GE
// libraries (libgraph, libflow_graph, libge_runner), all built with the old
// string ABI. OperatorAccess and GraphAccess are the friends the public
// headers name; nothing outside src/ge_api uses them.
//
// Thread-safety: as the handles: built on one thread, read from any.
#ifndef HFLOW_GE_API_GRAPH_GRAPH_INTERNAL_H_
#define HFLOW_GE_API_GRAPH_GRAPH_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "graph/graph.h"
#include "graph/operator.h"
#include "graph/tensor.h"

namespace ge {

using OpAttr =
    std::variant<int64_t, float, bool, std::string, std::vector<int64_t>,
                 std::vector<float>, Tensor, DataType>;

class OperatorImpl {
 public:
  struct Link {
    std::shared_ptr<OperatorImpl> src;
    uint32_t src_index = 0;
  };
  std::string name;
  std::string type;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
  std::map<uint32_t, Link> inputs;  // by input index
  std::map<std::string, OpAttr> attrs;
  std::map<std::string, TensorDesc> descs;  // input and output descs by name
  // What DataFlow (libflow_graph) knows of the node: its FlowNodeImpl.
  std::shared_ptr<void> flow;
  // The first misuse, with the call ("SetInput(x1): ..."), or "".
  std::string error;

  int InputIndex(const std::string& n) const;
  int OutputIndex(const std::string& n) const;
};

class OperatorAccess {
 public:
  static const std::shared_ptr<OperatorImpl>& Impl(const Operator& op) {
    return op.operator_impl_;
  }
  // A handle on existing state (operators are handles).
  static Operator Wrap(std::shared_ptr<OperatorImpl> impl) {
    Operator op;
    op.operator_impl_ = std::move(impl);
    return op;
  }
};

class GraphImpl {
 public:
  std::string name;
  std::vector<Operator> inputs;
  std::vector<std::pair<Operator, std::vector<size_t>>> outputs;
  std::vector<Operator> targets;
  std::vector<Operator> ops;
  bool need_iteration = false;
  // Set for the graph of a DataFlow FlowGraph (ToGeGraph): writes its
  // description as hflow graph-file JSON, or the first builder misuse into
  // `error`. Called at AddGraph, so builder calls before it count.
  std::function<bool(std::string* json, std::string* error)> flow_json;
};

class GraphAccess {
 public:
  static std::shared_ptr<GraphImpl>& Impl(Graph& g) { return g.impl_; }
  static const std::shared_ptr<GraphImpl>& Impl(const Graph& g) {
    return g.impl_;
  }
};

// GE's DT_* name of `dt` ("DT_UNDEFINED" for one without), and back.
const char* DataTypeGeName(DataType dt);
DataType DataTypeOf(const std::string& name);

// `graph` as a GE graph file's bytes (graph_file.cc; docs/formats.md "GE
// graph file"), or false with *error naming the op.
bool GraphToBytes(const Graph& graph, std::string* bytes, std::string* error);
// A new graph read from a GE graph file's bytes into *graph, or false with
// *error saying what is wrong.
bool GraphFromBytes(const std::string& bytes, Graph* graph, std::string* error);

}  // namespace ge

#endif  // HFLOW_GE_API_GRAPH_GRAPH_INTERNAL_H_
