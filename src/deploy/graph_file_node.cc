// The graph file parser's node-level fields (graph_file_parser.h): a
// node's names, arity, processing point (function, compile config,
// func_list, model pp, init params, invoked closures), input/output maps,
// batch attributes, balance and flow attributes. Every error names the file
// and JSON path.
//
// Thread-safety: reentrant.
#include <cctype>

#include "deploy/graph_file_fields.h"
#include "deploy/graph_file_parser.h"
#include "flow_func/compile_config.h"
#include "flow_func/init_params.h"
#include "model/model_config.h"

namespace hflow {
namespace deploy {
namespace graph_file {

// Everything of a node but its input references (Refs resolves those once
// every node's output count is known).
Status Parser::Node(const Json& j, const std::string& path, NodeDef* n) const {
  HFLOW_RETURN_IF_ERROR(
      Keys(j, path,
           {"name", "inputs", "outputs", "function", "compile_config",
            "init_params", "input_map", "output_map", "input_attrs",
            "flow_attr", "input_flow_attrs", "output_flow_attrs", "balance",
            "model_pp", "invoked_closures", "func_list"}));
  if (!j.contains("inputs") || !j["inputs"].is_array()) {
    return Error(path + ".inputs",
                 "must be an array of references (graph "
                 "input names or 'node:output_index')",
                 "write [] for a source node");
  }
  n->inputs.resize(j["inputs"].size());
  if (!j.contains("outputs")) {
    return Error(path + ".outputs", "is missing",
                 "give the node's output count");
  }
  int64_t outputs = 0;
  HFLOW_RETURN_IF_ERROR(Int(j["outputs"], path + ".outputs", 0, &outputs));
  n->output_num = static_cast<uint32_t>(outputs);
  HFLOW_RETURN_IF_ERROR(Pp(j, path, n));
  if (j.contains("input_map")) {
    HFLOW_RETURN_IF_ERROR(
        Map(j["input_map"], path + ".input_map", &n->input_map));
  }
  if (j.contains("output_map")) {
    HFLOW_RETURN_IF_ERROR(
        Map(j["output_map"], path + ".output_map", &n->output_map));
  }
  if (j.contains("input_attrs")) {
    HFLOW_RETURN_IF_ERROR(
        ParseInputAttrs(*this, j["input_attrs"], path + ".input_attrs", n));
  }
  if (j.contains("balance")) {
    HFLOW_RETURN_IF_ERROR(Balance(j["balance"], path + ".balance", n));
  }
  return NodeFlowAttrs(j, path, n);
}

Status Parser::NodeFlowAttrs(const Json& j, const std::string& path,
                             NodeDef* n) const {
  if (j.contains("flow_attr")) {
    HFLOW_RETURN_IF_ERROR(ParseFlowAttr(*this, j["flow_attr"],
                                        path + ".flow_attr", &n->flow_attr));
  }
  auto indexes = [](size_t count) {
    std::vector<std::string> v;
    for (size_t i = 0; i < count; ++i) v.push_back(std::to_string(i));
    return v;
  };
  if (j.contains("input_flow_attrs")) {
    HFLOW_RETURN_IF_ERROR(ParseFlowAttrMap(
        *this, j["input_flow_attrs"], path + ".input_flow_attrs",
        indexes(n->inputs.size()), false, &n->input_flow_attrs));
  }
  if (j.contains("output_flow_attrs")) {
    HFLOW_RETURN_IF_ERROR(ParseFlowAttrMap(
        *this, j["output_flow_attrs"], path + ".output_flow_attrs",
        indexes(n->output_num), false, &n->output_flow_attrs));
  }
  return Status::OK();
}

// GE's SetBalanceScatter / SetBalanceGather: one or the other.
Status Parser::Balance(const Json& j, const std::string& path,
                       NodeDef* n) const {
  std::string v;
  const std::string hint = "write \"scatter\" or \"gather\"";
  HFLOW_RETURN_IF_ERROR(String(j, path, &v, hint));
  if (v == "scatter") {
    n->balance = flow_func::BalanceKind::kScatter;
  } else if (v == "gather") {
    n->balance = flow_func::BalanceKind::kGather;
  } else {
    return Error(path, "'" + v + "' is not a balance kind", hint);
  }
  return Status::OK();
}

// A model process point: {"name": ..., "type": "GraphPp" | "FlowGraphPp",
// "compile_config": ...}, described as "GraphPp 'name'"; a GraphPp may
// name its model file as GE's GraphProcessPoint does ("framework",
// "graph_file", "load_params") and "intra_op_threads". A node whose model
// has a file runs the model UDF (src/model/model_udf.cc); an invoked
// closure's is loaded with the instances of the UDF that invokes it.
Status Parser::ModelPp(const Json& j, const std::string& path, std::string* out,
                       ModelDef* m) const {
  HFLOW_RETURN_IF_ERROR(Object(j, path, "give {\"name\": ..., \"type\": ...}"));
  HFLOW_RETURN_IF_ERROR(
      Keys(j, path,
           {"name", "type", "compile_config", "framework", "graph_file",
            "load_params", "intra_op_threads"}));
  std::string name, type;
  HFLOW_RETURN_IF_ERROR(String(j.value("name", Json()), path + ".name", &name));
  HFLOW_RETURN_IF_ERROR(String(j.value("type", Json()), path + ".type", &type));
  if (type != "GraphPp" && type != "FlowGraphPp") {
    return Error(path + ".type", "'" + type + "' is not a model process point",
                 "write \"GraphPp\" or \"FlowGraphPp\"");
  }
  *out = type + " '" + name + "'";
  if (!j.contains("graph_file")) {
    for (const char* k : {"framework", "load_params", "intra_op_threads"}) {
      if (j.contains(k)) {
        return Error(path + "." + k, "is given without \"graph_file\"",
                     "name the model file in \"graph_file\"");
      }
    }
    return Status::OK();
  }
  if (type != "GraphPp") {
    return Error(path + ".graph_file", "only a GraphPp runs a model file",
                 "write \"type\": \"GraphPp\"");
  }
  return ModelFile(j, path, m);
}

namespace {
// The node runs the model UDF with its model in the init params.
void UseModelFunction(NodeDef* n) {
  const ModelDef& m = n->model;
  using flow_func::AttrValueImpl;
  auto str = [](const std::string& v) {
    return std::make_shared<AttrValueImpl>(AttrValueImpl::Value(v));
  };
  n->pp.function = model::kModelFunction;
  n->pp.init_params[model::kAttrFramework] = str(m.framework);
  n->pp.init_params[model::kAttrGraphFile] = str(m.graph_file);
  n->pp.init_params[model::kAttrCompileConfig] = str(m.compile_config);
  n->pp.init_params[model::kAttrLoadParams] = str(Json(m.load_params).dump());
  n->pp.init_params[model::kAttrIntraOpThreads] =
      std::make_shared<AttrValueImpl>(AttrValueImpl::Value(m.intra_op_threads));
}
}  // namespace

Status Parser::ModelFile(const Json& j, const std::string& path,
                         ModelDef* out) const {
  ModelDef& m = *out;
  std::string file;
  HFLOW_RETURN_IF_ERROR(String(j["graph_file"], path + ".graph_file", &file));
  m.graph_file = Resolve(base_dir_, file);
  m.framework = "onnx";
  if (j.contains("framework")) {
    HFLOW_RETURN_IF_ERROR(
        String(j["framework"], path + ".framework", &m.framework));
    for (char& c : m.framework) c = static_cast<char>(std::tolower(c));
    if (m.framework != model::kFrameworkOnnx &&
        m.framework != model::kFrameworkTensorFlow &&
        m.framework != model::kFrameworkGeGraph) {
      return Error(path + ".framework",
                   "'" + m.framework + "' is not a framework hflow reads",
                   "write \"onnx\", \"tensorflow\" or \"ge_graph\" (a GE "
                   "graph file)");
    }
  }
  if (j.contains("load_params")) {
    const Json& lp = j["load_params"];
    HFLOW_RETURN_IF_ERROR(Object(lp, path + ".load_params",
                                 "give GE's parser options as strings"));
    for (const auto& [k, v] : lp.items()) {
      std::string s;
      HFLOW_RETURN_IF_ERROR(String(v, path + ".load_params." + k, &s));
      m.load_params[k] = s;
    }
  }
  if (j.contains("compile_config")) {
    std::string rel;
    HFLOW_RETURN_IF_ERROR(
        String(j["compile_config"], path + ".compile_config", &rel));
    m.compile_config = Resolve(base_dir_, rel);
  }
  if (j.contains("intra_op_threads")) {
    HFLOW_RETURN_IF_ERROR(Int(j["intra_op_threads"], path + ".intra_op_threads",
                              1, &m.intra_op_threads, 256));
  }
  return Status::OK();
}

Status Parser::Pp(const Json& j, const std::string& path, NodeDef* n) const {
  n->pp.name = n->name;
  if (j.contains("invoked_closures")) {
    const Json& c = j["invoked_closures"];
    if (!c.is_object()) {
      return Error(path + ".invoked_closures", "must be an object",
                   "key each closure by the name the UDF invokes it by");
    }
    for (const auto& [key, pp] : c.items()) {
      InvokedModelDef d;
      d.key = key;
      HFLOW_RETURN_IF_ERROR(
          ModelPp(pp, path + ".invoked_closures." + key, &d.what, &d.model));
      d.what += " invoked as '" + key + "'";
      n->invoked.push_back(std::move(d));
    }
  }
  if (j.contains("model_pp")) {
    for (const char* k : {"function", "compile_config", "func_list"}) {
      if (j.contains(k)) {
        return Error(path + "." + k, "cannot be given with \"model_pp\"",
                     "a model node runs its model; give the model's compile "
                     "config inside model_pp");
      }
    }
    HFLOW_RETURN_IF_ERROR(
        ModelPp(j["model_pp"], path + ".model_pp", &n->model_pp, &n->model));
    if (!n->model.graph_file.empty()) UseModelFunction(n);
    return Status::OK();
  }
  if (j.contains("func_list")) return FuncList(j, path, n);
  if (!j.contains("function") && !j.contains("compile_config")) {
    return Error(
        path, "node '" + n->name + "' needs \"function\" or \"compile_config\"",
        "give \"function\" (a registered UDF name), "
        "\"compile_config\" (a GE compile config), or both");
  }
  if (j.contains("function")) {
    HFLOW_RETURN_IF_ERROR(
        String(j["function"], path + ".function", &n->pp.function));
  }
  if (j.contains("compile_config")) {
    std::string rel;
    HFLOW_RETURN_IF_ERROR(
        String(j["compile_config"], path + ".compile_config", &rel));
    n->pp.compile_config = Resolve(base_dir_, rel);
  }
  return InitParams(j, path, n);
}

Status Parser::InitParams(const Json& j, const std::string& path,
                          NodeDef* n) const {
  if (!j.contains("init_params")) return Status::OK();
  return flow_func::AttrMapFromJson(j["init_params"],
                                    source() + ": " + path + ".init_params",
                                    &n->pp.init_params);
}

// "func_list": functions registered in the process (the Python package's
// UDFs), with the compile config's func_list form; nothing to load.
Status Parser::FuncList(const Json& j, const std::string& path,
                        NodeDef* n) const {
  if (j.contains("function") || j.contains("compile_config")) {
    return Error(path + ".func_list",
                 "cannot be given with \"function\" or \"compile_config\"",
                 "list registered functions here, or name them through "
                 "\"function\"/\"compile_config\"");
  }
  HFLOW_RETURN_IF_ERROR(flow_func::ParseFuncList(
      *this, j["func_list"], path + ".func_list",
      static_cast<int32_t>(n->inputs.size()),
      static_cast<int32_t>(n->output_num), &n->pp.funcs));
  return InitParams(j, path, n);
}

Status Parser::Map(const Json& j, const std::string& path,
                   std::vector<uint32_t>* out) const {
  HFLOW_RETURN_IF_ERROR(Array(j, path, "write one pp index per entry"));
  for (size_t i = 0; i < j.size(); ++i) {
    int64_t v = 0;
    HFLOW_RETURN_IF_ERROR(Int(j[i], At(path, i), 0, &v));
    out->push_back(static_cast<uint32_t>(v));
  }
  return Status::OK();
}

}  // namespace graph_file
}  // namespace deploy
}  // namespace hflow
