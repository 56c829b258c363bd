// The graph file parser's node-level fields (graph_file_parser.h): a
// node's names, arity, processing point (function, compile config,
// func_list, model pp, init params, invoked closures), input/output maps,
// batch attributes, balance and flow attributes. Every error names the file
// and JSON path.
//
// Thread-safety: reentrant.
#include "deploy/graph_file_fields.h"
#include "deploy/graph_file_parser.h"
#include "flow_func/compile_config.h"

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
// "compile_config": ...}, described as "GraphPp 'name'".
Status Parser::ModelPp(const Json& j, const std::string& path,
                       std::string* out) const {
  HFLOW_RETURN_IF_ERROR(Object(j, path, "give {\"name\": ..., \"type\": ...}"));
  HFLOW_RETURN_IF_ERROR(Keys(j, path, {"name", "type", "compile_config"}));
  std::string name, type;
  HFLOW_RETURN_IF_ERROR(String(j.value("name", Json()), path + ".name", &name));
  HFLOW_RETURN_IF_ERROR(String(j.value("type", Json()), path + ".type", &type));
  if (type != "GraphPp" && type != "FlowGraphPp") {
    return Error(path + ".type", "'" + type + "' is not a model process point",
                 "write \"GraphPp\" or \"FlowGraphPp\"");
  }
  *out = type + " '" + name + "'";
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
      std::string what;
      HFLOW_RETURN_IF_ERROR(
          ModelPp(pp, path + ".invoked_closures." + key, &what));
      n->invoked_models.push_back(what + " invoked as '" + key + "'");
    }
  }
  if (j.contains("model_pp")) {
    return ModelPp(j["model_pp"], path + ".model_pp", &n->model_pp);
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
