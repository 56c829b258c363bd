// DataFlow's process points: what a FlowNode runs. FunctionPp is a UDF (a
// compile config naming its functions, init params its Init reads, and
// closures it may invoke); GraphPp and FlowGraphPp are model graphs, which
// hflow builds and keeps but does not run yet: a graph that needs one fails
// at build with a not-supported error naming the node and the process point.
//
// Process points are handles: copies share their state.
//
// Thread-safety: build on one thread; a finished process point may be read
// from any thread.
#ifndef HFLOW_GE_FLOW_GRAPH_PROCESS_POINT_H_
#define HFLOW_GE_FLOW_GRAPH_PROCESS_POINT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/types.h"

namespace ge {
namespace dflow {
using GraphBuilder = std::function<ge::Graph()>;
class FlowGraph;
using FlowGraphBuilder = std::function<FlowGraph()>;

enum class ProcessPointType {
  FUNCTION = 0,
  GRAPH = 1,
  INNER = 2,
  FLOW_GRAPH = 3,
  INVALID = 4,
};

class ProcessPointImpl;
class ProcessPoint {
 public:
  virtual ~ProcessPoint();
  ProcessPointType GetProcessPointType() const;
  const char_t* GetProcessPointName() const;
  const char_t* GetCompileConfig() const;
  // A JSON description of the process point (hflow's graph-file terms).
  virtual void Serialize(ge::AscendString& str) const = 0;

 protected:
  ProcessPoint(const char_t* pp_name, ProcessPointType pp_type);
  void SetCompileConfigFile(const char_t* json_file_path);

 private:
  std::shared_ptr<ProcessPointImpl> impl_;
};

class GraphPpImpl;
class GraphPp : public ProcessPoint {
 public:
  GraphPp(const char_t* pp_name, const GraphBuilder& builder);
  ~GraphPp() override;
  GraphPp& SetCompileConfig(const char_t* json_file_path);
  GraphBuilder GetGraphBuilder() const;
  void Serialize(ge::AscendString& str) const override;

 private:
  std::shared_ptr<GraphPpImpl> impl_;
};

class FlowGraphPpImpl;
class FlowGraphPp : public ProcessPoint {
 public:
  FlowGraphPp(const char_t* pp_name, const FlowGraphBuilder& builder);
  ~FlowGraphPp() override;
  FlowGraphPp& SetCompileConfig(const char_t* json_file_path);
  // GE's signature: the builder of a model graph. hflow keeps the flow
  // graph builder; this returns an empty builder.
  GraphBuilder GetGraphBuilder() const;
  void Serialize(ge::AscendString& str) const override;

 private:
  std::shared_ptr<FlowGraphPpImpl> impl_;
};

class FunctionPpImpl;
class FunctionPp : public ProcessPoint {
 public:
  explicit FunctionPp(const char_t* pp_name);
  ~FunctionPp() override;
  FunctionPp& SetCompileConfig(const char_t* json_file_path);
  FunctionPp& SetInitParam(const char_t* attr_name,
                           const ge::AscendString& value);
  FunctionPp& SetInitParam(const char_t* attr_name, const char_t* value);
  FunctionPp& SetInitParam(const char_t* attr_name,
                           const std::vector<ge::AscendString>& value);
  FunctionPp& SetInitParam(const char_t* attr_name, const int64_t& value);
  FunctionPp& SetInitParam(const char_t* attr_name,
                           const std::vector<int64_t>& value);
  FunctionPp& SetInitParam(const char_t* attr_name,
                           const std::vector<std::vector<int64_t>>& value);
  FunctionPp& SetInitParam(const char_t* attr_name, const float& value);
  FunctionPp& SetInitParam(const char_t* attr_name,
                           const std::vector<float>& value);
  FunctionPp& SetInitParam(const char_t* attr_name, const bool& value);
  FunctionPp& SetInitParam(const char_t* attr_name,
                           const std::vector<bool>& value);
  FunctionPp& SetInitParam(const char_t* attr_name, const ge::DataType& value);
  FunctionPp& SetInitParam(const char_t* attr_name,
                           const std::vector<ge::DataType>& value);
  // A closure the UDF may invoke by `name` (a model graph: not run by hflow
  // yet, so a node whose function invokes one fails at build).
  FunctionPp& AddInvokedClosure(const char_t* name, const GraphPp& graph_pp);
  FunctionPp& AddInvokedClosure(const char_t* name,
                                const FlowGraphPp& graph_pp);
  FunctionPp& AddInvokedClosure(const char_t* name, const ProcessPoint& pp);
  const std::map<const std::string, const GraphPp>& GetInvokedClosures() const;
  void Serialize(ge::AscendString& str) const override;

 private:
  friend class FlowGraphUtils;
  std::shared_ptr<FunctionPpImpl> impl_;
};
}  // namespace dflow
}  // namespace ge

#endif  // HFLOW_GE_FLOW_GRAPH_PROCESS_POINT_H_
