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
#include <set>
#include <sstream>

#include "deploy/graph_def.h"
#include "deploy/graph_file_fields.h"
#include "deploy/graph_file_parser.h"

namespace hflow {
namespace deploy {
namespace graph_file {

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

}  // namespace graph_file

Status ParseGraphJson(std::string_view text, std::string_view source,
                      const std::string& base_dir, GraphDef* out) {
  graph_file::Parser parser(source, base_dir);
  graph_file::Json root;
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
  return ParseGraphJson(
      ss.str(), path, std::filesystem::path(path).parent_path().string(), out);
}

}  // namespace deploy
}  // namespace hflow
