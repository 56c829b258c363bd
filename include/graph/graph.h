// ge::Graph: a GE graph of operators (a model, as GraphPp builds it), or the
// graph a DataFlow FlowGraph hands to ge::Session::AddGraph (ToGeGraph).
//
// Graphs are handles: copies refer to the same graph.
//
// Errors: setters return the graph for chaining; the graphStatus calls
// return GRAPH_SUCCESS, GRAPH_FAILED (saving or loading model files: hflow
// does not read or write GE's model formats) or GRAPH_PARAM_INVALID.
//
// Thread-safety: build a graph on one thread; a finished graph may be read
// from any thread.
#ifndef HFLOW_GE_GRAPH_GRAPH_H_
#define HFLOW_GE_GRAPH_GRAPH_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/operator.h"

namespace ge {
class GraphImpl;
class GraphAccess;
class Graph;
using GraphPtr = std::shared_ptr<Graph>;
using ConstGraphPtr = std::shared_ptr<const Graph>;

class Graph {
 public:
  ATTRIBUTED_DEPRECATED(Graph(const char_t*))
  explicit Graph(const std::string& name);
  explicit Graph(const char_t* name);
  Graph() = default;
  ~Graph() = default;

  Graph& SetInputs(const std::vector<Operator>& inputs);
  Graph& SetOutputs(const std::vector<Operator>& outputs);
  Graph& SetOutputs(const std::vector<std::pair<Operator, std::vector<size_t>>>&
                        output_indexs);
  Graph& SetOutputs(
      const std::vector<std::pair<Operator, AscendString>>& outputs);
  Graph& SetTargets(const std::vector<Operator>& targets);

  // True once the graph has a name and inputs or outputs.
  bool IsValid() const;
  graphStatus AddOp(const Operator& op);
  graphStatus FindOpByName(const char_t* name, Operator& op) const;
  graphStatus FindOpByType(const char_t* type,
                           std::vector<Operator>& ops) const;
  graphStatus GetAllOpName(std::vector<AscendString>& names) const;
  graphStatus SaveToFile(const char_t* file_name) const;
  graphStatus LoadFromFile(const char_t* file_name);
  ATTRIBUTED_DEPRECATED(graphStatus GetName(AscendString&) const)
  const std::string& GetName() const;
  graphStatus GetName(AscendString& name) const;
  void SetNeedIteration(bool need_iteration);

 private:
  friend class GraphAccess;
  std::shared_ptr<GraphImpl> impl_{nullptr};
};
}  // namespace ge

#endif  // HFLOW_GE_GRAPH_GRAPH_H_
