// The graph file parser's class, shared by graph_file.cc (the graph, its
// names, references and deploy) and graph_file_node.cc (one node: its
// processing point, maps, batch and flow attributes). Internal to deploy.
//
// Thread-safety: a Parser only reads its inputs; one per parse.
#ifndef HFLOW_DEPLOY_GRAPH_FILE_PARSER_H_
#define HFLOW_DEPLOY_GRAPH_FILE_PARSER_H_

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "deploy/graph_def.h"
#include "util/json_fields.h"

namespace hflow {
namespace deploy {
namespace graph_file {

using Json = nlohmann::json;

inline std::string At(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// p relative to base (unless absolute), normalized.
inline std::string Resolve(const std::string& base, const std::string& p) {
  std::filesystem::path path(p);
  if (path.is_relative()) path = std::filesystem::path(base) / path;
  return path.lexically_normal().string();
}

// Field checks come from util::JsonFields.
class Parser : public util::JsonFields {
 public:
  Parser(std::string_view source, const std::string& base_dir)
      : JsonFields(source, "<graph file>") {
    std::error_code ec;
    base_dir_ = std::filesystem::absolute(base_dir.empty() ? "." : base_dir, ec)
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
  Status ModelPp(const Json& j, const std::string& path, std::string* out,
                 ModelDef* model) const;
  Status ModelFile(const Json& j, const std::string& path, ModelDef* m) const;
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

}  // namespace graph_file
}  // namespace deploy
}  // namespace hflow

#endif  // HFLOW_DEPLOY_GRAPH_FILE_PARSER_H_
