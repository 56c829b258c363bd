// DataFlow's process points (flow_graph/process_point.h). Serialize writes
// the graph-file fields of a node running the process point: a FunctionPp's
// compile config, init params and invoked closures; a model's "model_pp".
// Part of libflow_graph.so (old string ABI).
//
// Thread-safety: as the handles.
#include <cmath>
#include <cstdio>

#include "ge_api/flow_graph/flow_graph_internal.h"

namespace ge {
namespace dflow {

class FunctionPpImpl {
 public:
  Json init_params = Json::object();
  Json closures = Json::object();
  std::map<const std::string, const GraphPp> graph_closures;
};
class GraphPpImpl {
 public:
  GraphBuilder builder;
};
class FlowGraphPpImpl {
 public:
  FlowGraphBuilder builder;
};

namespace {
std::string Str(const char_t* s) { return s == nullptr ? "" : s; }

const char* TypeName(ProcessPointType t) {
  switch (t) {
    case ProcessPointType::GRAPH:
      return "GraphPp";
    case ProcessPointType::FLOW_GRAPH:
      return "FlowGraphPp";
    case ProcessPointType::FUNCTION:
      return "FunctionPp";
    default:
      return "ProcessPoint";
  }
}

// The model_pp of a GraphPp: its graph built and saved (Note [GraphPp graph
// files]), or an "error" the node reports at AddPp.
void SaveGraph(const GraphPp& pp, const GraphBuilder& builder, Json* m) {
  std::string bytes, error;
  if (!builder) {
    error = "the GraphPp has no graph builder";
  } else {
    const Graph graph = builder();
    if (!GraphToBytes(graph, &bytes, &error)) {
      error = "its graph builder's graph: " + error;
    }
  }
  std::string path;
  if (error.empty()) {
    WriteGraphFile(bytes, Str(pp.GetProcessPointName()), &path, &error);
  }
  if (!error.empty()) {
    (*m)["error"] = error;
    return;
  }
  (*m)["graph_file"] = path;
  (*m)["framework"] = "ge_graph";
}

Json ModelPp(const ProcessPoint& pp) {
  Json m = {{"name", Str(pp.GetProcessPointName())},
            {"type", TypeName(pp.GetProcessPointType())}};
  if (!Str(pp.GetCompileConfig()).empty()) {
    m["compile_config"] = pp.GetCompileConfig();
  }
  return m;
}
}  // namespace

// ---- ProcessPoint ----
ProcessPoint::ProcessPoint(const char_t* pp_name, ProcessPointType pp_type)
    : impl_(std::make_shared<ProcessPointImpl>()) {
  impl_->name = Str(pp_name);
  impl_->type = pp_type;
}
ProcessPoint::~ProcessPoint() = default;
ProcessPointType ProcessPoint::GetProcessPointType() const {
  return impl_->type;
}
const char_t* ProcessPoint::GetProcessPointName() const {
  return impl_->name.c_str();
}
const char_t* ProcessPoint::GetCompileConfig() const {
  return impl_->compile_config.c_str();
}
void ProcessPoint::SetCompileConfigFile(const char_t* path) {
  impl_->compile_config = Str(path);
}

// ---- GraphPp / FlowGraphPp ----
GraphPp::GraphPp(const char_t* pp_name, const GraphBuilder& builder)
    : ProcessPoint(pp_name, ProcessPointType::GRAPH),
      impl_(std::make_shared<GraphPpImpl>()) {
  impl_->builder = builder;
}
GraphPp::~GraphPp() = default;
GraphPp& GraphPp::SetCompileConfig(const char_t* path) {
  SetCompileConfigFile(path);
  return *this;
}
GraphBuilder GraphPp::GetGraphBuilder() const { return impl_->builder; }
void GraphPp::Serialize(AscendString& str) const {
  Json m = ModelPp(*this);
  SaveGraph(*this, impl_->builder, &m);
  str = AscendString(Json{{"model_pp", m}}.dump().c_str());
}

FlowGraphPp::FlowGraphPp(const char_t* pp_name, const FlowGraphBuilder& builder)
    : ProcessPoint(pp_name, ProcessPointType::FLOW_GRAPH),
      impl_(std::make_shared<FlowGraphPpImpl>()) {
  impl_->builder = builder;
}
FlowGraphPp::~FlowGraphPp() = default;
FlowGraphPp& FlowGraphPp::SetCompileConfig(const char_t* path) {
  SetCompileConfigFile(path);
  return *this;
}
GraphBuilder FlowGraphPp::GetGraphBuilder() const { return GraphBuilder(); }
void FlowGraphPp::Serialize(AscendString& str) const {
  str = AscendString(Json{{"model_pp", ModelPp(*this)}}.dump().c_str());
}

// ---- FunctionPp ----
FunctionPp::FunctionPp(const char_t* pp_name)
    : ProcessPoint(pp_name, ProcessPointType::FUNCTION),
      impl_(std::make_shared<FunctionPpImpl>()) {}
FunctionPp::~FunctionPp() = default;
FunctionPp& FunctionPp::SetCompileConfig(const char_t* path) {
  SetCompileConfigFile(path);
  return *this;
}

#define HFLOW_GE_INIT_PARAM(T, expr)                                       \
  FunctionPp& FunctionPp::SetInitParam(const char_t* attr_name, T value) { \
    impl_->init_params[Str(attr_name)] = (expr);                           \
    return *this;                                                          \
  }
HFLOW_GE_INIT_PARAM(const AscendString&, std::string(value.GetString()))
HFLOW_GE_INIT_PARAM(const char_t*, Str(value))
HFLOW_GE_INIT_PARAM(const int64_t&, value)
HFLOW_GE_INIT_PARAM(const std::vector<int64_t>&, value)
HFLOW_GE_INIT_PARAM(const std::vector<std::vector<int64_t>>&, value)
HFLOW_GE_INIT_PARAM(const bool&, value)
HFLOW_GE_INIT_PARAM(const std::vector<bool>&, value)
HFLOW_GE_INIT_PARAM(const DataType&, DataTypeGeName(value))
#undef HFLOW_GE_INIT_PARAM

FunctionPp& FunctionPp::SetInitParam(const char_t* attr_name,
                                     const std::vector<AscendString>& value) {
  Json list = Json::array();
  for (const auto& v : value) list.push_back(std::string(v.GetString()));
  impl_->init_params[Str(attr_name)] = list;
  return *this;
}
// A float is written so the graph file reads it back as a float even when
// it holds an integral value (2.0, not 2).
FunctionPp& FunctionPp::SetInitParam(const char_t* attr_name,
                                     const float& value) {
  impl_->init_params[Str(attr_name)] = static_cast<double>(value);
  return *this;
}
FunctionPp& FunctionPp::SetInitParam(const char_t* attr_name,
                                     const std::vector<float>& value) {
  Json list = Json::array();
  for (float v : value) list.push_back(static_cast<double>(v));
  impl_->init_params[Str(attr_name)] = list;
  return *this;
}
FunctionPp& FunctionPp::SetInitParam(const char_t* attr_name,
                                     const std::vector<DataType>& value) {
  Json list = Json::array();
  for (DataType v : value) list.push_back(DataTypeGeName(v));
  impl_->init_params[Str(attr_name)] = list;
  return *this;
}

FunctionPp& FunctionPp::AddInvokedClosure(const char_t* name,
                                          const GraphPp& graph_pp) {
  Json m = ModelPp(graph_pp);
  SaveGraph(graph_pp, graph_pp.GetGraphBuilder(), &m);
  impl_->closures[Str(name)] = m;
  impl_->graph_closures.emplace(Str(name), graph_pp);
  return *this;
}
FunctionPp& FunctionPp::AddInvokedClosure(const char_t* name,
                                          const FlowGraphPp& graph_pp) {
  impl_->closures[Str(name)] = ModelPp(graph_pp);
  return *this;
}
FunctionPp& FunctionPp::AddInvokedClosure(const char_t* name,
                                          const ProcessPoint& pp) {
  impl_->closures[Str(name)] = ModelPp(pp);
  return *this;
}
const std::map<const std::string, const GraphPp>&
FunctionPp::GetInvokedClosures() const {
  return impl_->graph_closures;
}

void FunctionPp::Serialize(AscendString& str) const {
  Json j = Json::object();
  if (!Str(GetCompileConfig()).empty())
    j["compile_config"] = GetCompileConfig();
  if (!impl_->init_params.empty()) j["init_params"] = impl_->init_params;
  if (!impl_->closures.empty()) j["invoked_closures"] = impl_->closures;
  str = AscendString(j.dump().c_str());
}

}  // namespace dflow
}  // namespace ge
