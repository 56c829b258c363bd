// The JSON graph file (docs/formats.md, "Graph file") into a GraphDef.
//
// Parsing checks each field where it stands, so every error names the file
// and the JSON path ("g.json: nodes[1].inputs[0]: ...") and says what to do;
// what needs the whole graph (cycles, mappings against arity) is left to
// ValidateGraphStructure, whose messages name the file and node. nlohmann
// exceptions never escape: every value is type-checked before it is read
// (util/json_fields.h; the batch-attr parser lives in graph_file_fields.h).
//
// Accepted beyond the documented example (extensions; unknown keys are
// rejected so typos do not pass silently, except "description", "comment"
// and keys starting with "_"):
//   - "inputs" (graph) may be omitted: a graph of source nodes.
//   - A reference "add" (no ":k") means output 0 of node add; a graph input
//     may be written "a" or "a:0".
//   - Per node, "function" and/or "compile_config" (at least one): with
//     both, function picks one of the config's func_list; a compile config
//     alone makes its whole func_list the node's functions. compile_config
//     and a string "deploy" are relative to the graph file, made absolute.
//   - Per node "input_map": [pp input for each node input] and
//     "output_map": [pp output for each node output] (GE MapInput/MapOutput;
//     omitted = identity).
//   - Per node "input_attrs": {"<node input index>": {"count_batch":
//     {"batch_size", "slide_stride", "timeout", "padding", "batch_dim",
//     "drop_remainder"}}} or {"time_batch": {"time_window", "timeout",
//     "batch_dim", "padding", "drop_remainder"}}; batch_size and time_window
//     are required, the rest default as in hflow/graph.h.
//   - "deploy" is an object (kept as JSON text) or a path to a deploy file.
//   - Flow attributes (GE's _flow_attr_depth / _flow_attr_enqueue_policy):
//     {"depth": n, "enqueue_policy": "FIFO" | "OVERWRITE"} as "flow_attr"
//     of the graph and of a node, in the graph's "input_flow_attrs" keyed
//     by graph input name, and in a node's "input_flow_attrs" and
//     "output_flow_attrs" keyed by index.
//   - Per node "balance": "scatter" | "gather" (GE's SetBalanceScatter /
//     SetBalanceGather).
//   - Per node "func_list" (instead of function/compile_config): functions
//     registered in the process, in the compile config's func_list form.
//
// Thread-safety: reentrant.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "deploy/graph_def.h"
#include "deploy/graph_file_fields.h"
#include "flow_func/compile_config.h"

namespace hflow {
namespace deploy {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string At(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

std::string Resolve(const std::string& base, const std::string& p) {
  fs::path path(p);
  if (path.is_relative()) path = fs::path(base) / path;
  return path.lexically_normal().string();
}

// Field checks come from util::JsonFields.
class Parser : public util::JsonFields {
 public:
  Parser(std::string_view source, const std::string& base_dir)
      : JsonFields(source, "<graph file>") {
    std::error_code ec;
    base_dir_ = fs::absolute(base_dir.empty() ? "." : base_dir, ec)
                    .lexically_normal()
                    .string();
  }

  Status ReadGraph(const Json& root, GraphDef* out) const;

 private:
  Status Name(const Json& j, const std::string& path, std::string* out) const;
  Status Names(const Json& root, GraphDef* g) const;
  Status Node(const Json& j, const std::string& path, NodeDef* n) const;
  Status Pp(const Json& j, const std::string& path, NodeDef* n) const;
  Status FuncList(const Json& j, const std::string& path, NodeDef* n) const;
  Status InitParams(const Json& j, const std::string& path, NodeDef* n) const;
  Status ModelPp(const Json& j, const std::string& path,
                 std::string* out) const;
  Status Balance(const Json& j, const std::string& path, NodeDef* n) const;
  Status NodeFlowAttrs(const Json& j, const std::string& path,
                       NodeDef* n) const;
  Status Map(const Json& j, const std::string& path,
             std::vector<uint32_t>* out) const;
  // Graph inputs and node output counts by name: references resolve in
  // constant time, so a graph of n nodes parses in O(n), not O(n^2).
  struct Lookup {
    std::unordered_set<std::string> inputs;
    std::unordered_map<std::string, uint32_t> outputs;
  };
  Status Ref(const GraphDef& g, const Lookup& names, const Json& j,
             const std::string& path, OutputRef* out) const;
  Status Refs(const Json& root, GraphDef* g) const;
  Status Deploy(const Json& j, GraphDef* g) const;

  std::string base_dir_;
};

// Names may not contain ':', which separates a node from its output index.
Status Parser::Name(const Json& j, const std::string& path,
                    std::string* out) const {
  HFLOW_RETURN_IF_ERROR(String(j, path, out, "write a name such as \"add\""));
  if (out->find(':') != std::string::npos) {
    return Error(path,
                 "'" + *out +
                     "': names may not contain ':' (it separates "
                     "a node from its output index)",
                 "rename it");
  }
  return Status::OK();
}

// Graph name, graph inputs, and node names (needed before any reference
// resolves; duplicates are reported here, with their JSON path).
Status Parser::Names(const Json& root, GraphDef* g) const {
  const Json* name = nullptr;
  HFLOW_RETURN_IF_ERROR(Required(root, "", "name", "name the graph", &name));
  HFLOW_RETURN_IF_ERROR(String(*name, "name", &g->name, "name the graph"));
  std::set<std::string> seen;
  if (root.contains("inputs")) {
    const Json& in = root["inputs"];
    HFLOW_RETURN_IF_ERROR(
        Array(in, "inputs", "list the graph's input names, e.g. [\"a\"]"));
    for (size_t i = 0; i < in.size(); ++i) {
      std::string name;
      HFLOW_RETURN_IF_ERROR(Name(in[i], At("inputs", i), &name));
      if (!seen.insert(name).second) {
        return Error(At("inputs", i),
                     "graph input '" + name + "' is declared twice",
                     "rename one");
      }
      g->inputs.push_back(name);
    }
  }
  if (!root.contains("nodes") || !root["nodes"].is_array() ||
      root["nodes"].empty()) {
    return Error("nodes", "must be a non-empty array of nodes",
                 "describe each flow node as {\"name\": ..., ...}");
  }
  for (size_t i = 0; i < root["nodes"].size(); ++i) {
    const Json& n = root["nodes"][i];
    const std::string path = At("nodes", i);
    HFLOW_RETURN_IF_ERROR(Object(n, path, "write {\"name\": ..., ...}"));
    const Json* name_j = nullptr;
    HFLOW_RETURN_IF_ERROR(Required(n, path, "name", "name the node", &name_j));
    NodeDef node;
    HFLOW_RETURN_IF_ERROR(Name(*name_j, path + ".name", &node.name));
    if (!seen.insert(node.name).second) {
      return Error(
          path + ".name",
          "'" + node.name + "' is already the name of a graph input or node",
          "give each its own name");
    }
    g->nodes.push_back(std::move(node));
  }
  return Status::OK();
}

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

Status Parser::Ref(const GraphDef& g, const Lookup& names, const Json& j,
                   const std::string& path, OutputRef* out) const {
  if (!j.is_string() || j.get<std::string>().empty()) {
    return Error(path, "must be a graph input name or 'node:output_index'",
                 "write e.g. \"a\" or \"add:0\"");
  }
  const std::string text = j.get<std::string>();
  std::string op = text;
  uint32_t index = 0;
  const size_t colon = text.rfind(':');
  if (!names.inputs.count(text) && !names.outputs.count(text) &&
      colon != std::string::npos) {
    const std::string digits = text.substr(colon + 1);
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      return Error(path,
                   "'" + text +
                       "': the output index after ':' must be a "
                       "non-negative integer",
                   "write 'node:0' for a node's first output");
    }
    op = text.substr(0, colon);
    index = static_cast<uint32_t>(std::stoul(digits));
  }
  const auto node = names.outputs.find(op);
  if (names.inputs.count(op)) {
    if (index != 0) {
      return Error(
          path, "'" + text + "': graph input '" + op + "' has a single output",
          "write '" + op + "'");
    }
  } else if (node != names.outputs.end()) {
    if (index >= node->second) {
      return Error(path,
                   "'" + text + "' is out of range: node '" + op + "' has " +
                       std::to_string(node->second) + " output(s)",
                   "outputs are numbered from 0");
    }
  } else {
    std::string known;
    for (const auto& in : g.inputs) known += (known.empty() ? "" : ", ") + in;
    for (const auto& n : g.nodes) known += (known.empty() ? "" : ", ") + n.name;
    return Error(path, "'" + text + "' is neither a graph input nor a node",
                 "name one of: " + known);
  }
  *out = OutputRef{op, index};
  return Status::OK();
}

Status Parser::Refs(const Json& root, GraphDef* g) const {
  Lookup names;
  names.inputs.insert(g->inputs.begin(), g->inputs.end());
  for (const NodeDef& n : g->nodes) names.outputs.emplace(n.name, n.output_num);
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    const Json& ins = root["nodes"][i]["inputs"];
    for (size_t k = 0; k < ins.size(); ++k) {
      HFLOW_RETURN_IF_ERROR(Ref(*g, names, ins[k],
                                At(At("nodes", i) + ".inputs", k),
                                &g->nodes[i].inputs[k]));
    }
  }
  if (!root.contains("outputs") || !root["outputs"].is_array() ||
      root["outputs"].empty()) {
    return Error("outputs", "must be a non-empty array of node outputs",
                 "list them as 'node:output_index'");
  }
  for (size_t i = 0; i < root["outputs"].size(); ++i) {
    OutputRef r;
    HFLOW_RETURN_IF_ERROR(
        Ref(*g, names, root["outputs"][i], At("outputs", i), &r));
    if (names.inputs.count(r.op)) {
      return Error(
          At("outputs", i),
          "'" + r.op + "' is a graph input; graph outputs must be node outputs",
          "name a node's output");
    }
    g->outputs.push_back(r);
  }
  return Status::OK();
}

Status Parser::Deploy(const Json& j, GraphDef* g) const {
  if (j.is_object()) {
    g->deploy_info_json = j.dump();
  } else if (j.is_string() && !j.get<std::string>().empty()) {
    g->deploy_info_path = Resolve(base_dir_, j.get<std::string>());
  } else {
    return Error("deploy",
                 "must be a deploy info object or the path of a deploy info "
                 "file",
                 "write {\"batch_deploy_info\": [...]} or a path such as "
                 "\"deploy.json\"");
  }
  return Status::OK();
}

Status Parser::ReadGraph(const Json& root, GraphDef* out) const {
  HFLOW_RETURN_IF_ERROR(Object(root, util::kDocumentPath,
                               "write {\"name\": ..., \"nodes\": [...], "
                               "\"outputs\": [...]}"));
  HFLOW_RETURN_IF_ERROR(
      Keys(root, "",
           {"name", "inputs", "nodes", "outputs", "exception_catch", "deploy",
            "flow_attr", "input_flow_attrs", "inputs_align"}));
  GraphDef g;
  g.source = source();
  g.base_dir = base_dir_;
  HFLOW_RETURN_IF_ERROR(Names(root, &g));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    HFLOW_RETURN_IF_ERROR(Node(root["nodes"][i], At("nodes", i), &g.nodes[i]));
  }
  HFLOW_RETURN_IF_ERROR(Refs(root, &g));
  if (root.contains("exception_catch")) {
    HFLOW_RETURN_IF_ERROR(
        Bool(root["exception_catch"], "exception_catch", &g.exception_catch));
  }
  if (root.contains("inputs_align")) {
    HFLOW_RETURN_IF_ERROR(ParseInputsAlign(*this, root["inputs_align"],
                                           "inputs_align", &g.align));
  }
  if (root.contains("deploy"))
    HFLOW_RETURN_IF_ERROR(Deploy(root["deploy"], &g));
  if (root.contains("flow_attr")) {
    HFLOW_RETURN_IF_ERROR(
        ParseFlowAttr(*this, root["flow_attr"], "flow_attr", &g.flow_attr));
  }
  if (root.contains("input_flow_attrs")) {
    HFLOW_RETURN_IF_ERROR(ParseFlowAttrMap(*this, root["input_flow_attrs"],
                                           "input_flow_attrs", g.inputs, true,
                                           &g.input_flow_attrs));
  }
  HFLOW_RETURN_IF_ERROR(ValidateGraphStructure(g));
  *out = std::move(g);
  return Status::OK();
}

}  // namespace

Status ParseGraphJson(std::string_view text, std::string_view source,
                      const std::string& base_dir, GraphDef* out) {
  Parser parser(source, base_dir);
  Json root;
  HFLOW_RETURN_IF_ERROR(parser.Parse(text, &root));
  return parser.ReadGraph(root, out);
}

Status LoadGraphFile(const std::string& path, GraphDef* out) {
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound(path +
                            ": cannot read the graph file; check the "
                            "path");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseGraphJson(ss.str(), path, fs::path(path).parent_path().string(),
                        out);
}

}  // namespace deploy
}  // namespace hflow
