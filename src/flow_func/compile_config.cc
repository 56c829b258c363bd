// Compile config parsing (see compile_config.h). Fields are read with
// util::JsonFields: every rejection reads "<file>: <json path>: <problem>;
// <hint>" and unknown keys are errors.
// Thread-safety: reentrant; nlohmann-json exceptions never escape.
#include "flow_func/compile_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "util/json_fields.h"

namespace hflow {
namespace flow_func {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

using util::JsonFields;
using util::JsonPath;

// An array of distinct indexes in [0, INT32_MAX].
Status Indexes(const JsonFields& f, const Json& j, const std::string& path,
               std::vector<int32_t>* out) {
  HFLOW_RETURN_IF_ERROR(
      f.Array(j, path, "write the function's indexes, e.g. [0, 1]"));
  std::set<int64_t> seen;
  for (size_t i = 0; i < j.size(); ++i) {
    int64_t v = 0;
    HFLOW_RETURN_IF_ERROR(f.Int(j[i], JsonPath(path, i), 0, &v));
    if (!seen.insert(v).second) {
      return f.Error(path, "index " + std::to_string(v) + " listed twice",
                     "list each index once");
    }
    out->push_back(static_cast<int32_t>(v));
  }
  return Status::OK();
}

Status ParseFunc(const JsonFields& f, const Json& func, size_t i,
                 FuncDesc* out) {
  const std::string path = JsonPath("func_list", i);
  HFLOW_RETURN_IF_ERROR(
      f.Object(func, path, "write {\"func_name\": \"Add\", ...}"));
  HFLOW_RETURN_IF_ERROR(f.Keys(func, path,
                               {"func_name", "inputs_index", "outputs_index"},
                               {"stream_input"}));
  const Json* name = nullptr;
  HFLOW_RETURN_IF_ERROR(f.Required(
      func, path, "func_name", "name the function the UDF registers", &name));
  HFLOW_RETURN_IF_ERROR(f.String(*name, path + ".func_name", &out->name,
                                 "name the function the UDF registers"));
  if (const Json* in = JsonFields::Find(func, "inputs_index")) {
    HFLOW_RETURN_IF_ERROR(
        Indexes(f, *in, path + ".inputs_index", &out->inputs_index));
  }
  if (const Json* outs = JsonFields::Find(func, "outputs_index")) {
    HFLOW_RETURN_IF_ERROR(
        Indexes(f, *outs, path + ".outputs_index", &out->outputs_index));
  }
  return Status::OK();
}

Status CheckRange(const JsonFields& f, const FuncDesc& func, size_t i,
                  bool inputs, int32_t num) {
  const auto& idx = inputs ? func.inputs_index : func.outputs_index;
  const std::string count = inputs ? "input_num" : "output_num";
  for (int32_t v : idx) {
    if (num >= 0 && v >= num) {
      return f.Error(JsonPath("func_list", i) + "." +
                         (inputs ? "inputs_index" : "outputs_index"),
                     "index " + std::to_string(v) + " is out of range (" +
                         count + " is " + std::to_string(num) + ")",
                     "use indexes below " + count + ", or raise " + count);
    }
  }
  return Status::OK();
}

std::string Resolve(const std::string& base, const std::string& p) {
  fs::path path(p);
  if (path.is_relative()) path = fs::path(base) / path;
  return path.lexically_normal().string();
}

}  // namespace

std::string CompileConfig::TargetLibName() const {
  std::string n = fs::path(target_bin).filename().string();
  if (n.rfind("lib", 0) == 0) n = n.substr(3);
  if (n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0) {
    n.resize(n.size() - 3);
  }
  return n;
}

std::string CompileConfig::PrebuiltPath() const {
  return Resolve(config_dir, target_bin);
}

Status ParseCompileConfig(std::string_view json_text, std::string_view source,
                          const std::string& base_dir, CompileConfig* out) {
  JsonFields f(source, "<compile config>");
  Json root;
  HFLOW_RETURN_IF_ERROR(f.Parse(json_text, &root));
  HFLOW_RETURN_IF_ERROR(f.Object(root, util::kDocumentPath,
                                 "write {\"func_list\": [...], "
                                 "\"target_bin\": \"libxxx.so\"}"));
  // Note [Ignored compile config fields]
  // GE's FunctionPp fields that steer what hflow does not model are
  // accepted and ignored: the cross compiler (compiler), resource hints
  // (running_resources_info, heavy_load, visible_device_enable), GE's
  // built-in function switch and the memory pool tiers (buf_cfg; hflow's
  // pools are sized per deployment). Anything else unknown is a typo.
  HFLOW_RETURN_IF_ERROR(
      f.Keys(root, "",
             {"func_list", "input_num", "output_num", "target_bin", "workspace",
              "cmakelist_path"},
             {"compiler", "running_resources_info", "heavy_load",
              "visible_device_enable", "built_in_flow_func", "buf_cfg"}));
  CompileConfig cfg;
  cfg.source = std::string(source);
  // The non-throwing overload: fs::absolute("") throws, and a config named
  // without a directory ("add_func.json") has an empty parent path.
  std::error_code ec;
  cfg.config_dir = fs::absolute(base_dir.empty() ? "." : base_dir, ec)
                       .lexically_normal()
                       .string();
  if (ec) {
    return f.Error(
        util::kDocumentPath,
        "cannot resolve the directory '" + base_dir + "': " + ec.message(),
        "check the directory of the compile config");
  }
  const Json* funcs = JsonFields::Find(root, "func_list");
  if (funcs == nullptr || !funcs->is_array() || funcs->empty()) {
    return f.Error("func_list", "must be a non-empty array",
                   "list the UDF's functions as [{\"func_name\": ...}]");
  }
  int64_t n = -1;
  HFLOW_RETURN_IF_ERROR(f.OptInt(root, "", "input_num", 0, &n));
  cfg.input_num = static_cast<int32_t>(n);
  n = -1;
  HFLOW_RETURN_IF_ERROR(f.OptInt(root, "", "output_num", 0, &n));
  cfg.output_num = static_cast<int32_t>(n);
  std::set<std::string> names;
  for (size_t i = 0; i < funcs->size(); ++i) {
    FuncDesc func;
    HFLOW_RETURN_IF_ERROR(ParseFunc(f, (*funcs)[i], i, &func));
    if (!names.insert(func.name).second) {
      return f.Error(JsonPath("func_list", i) + ".func_name",
                     "function '" + func.name + "' is listed twice",
                     "list each function once");
    }
    HFLOW_RETURN_IF_ERROR(CheckRange(f, func, i, true, cfg.input_num));
    HFLOW_RETURN_IF_ERROR(CheckRange(f, func, i, false, cfg.output_num));
    cfg.funcs.push_back(std::move(func));
  }
  const Json* bin = nullptr;
  HFLOW_RETURN_IF_ERROR(f.Required(root, "", "target_bin",
                                   "name the UDF library (libxxx.so)", &bin));
  HFLOW_RETURN_IF_ERROR(f.String(*bin, "target_bin", &cfg.target_bin,
                                 "name the UDF library (libxxx.so)"));
  if (cfg.TargetLibName().empty() ||
      fs::path(cfg.target_bin).extension() != ".so") {
    return f.Error("target_bin",
                   "'" + cfg.target_bin + "' is not a shared library",
                   "name the UDF library (libxxx.so)");
  }
  std::string rel;
  HFLOW_RETURN_IF_ERROR(f.OptString(root, "", "workspace", &rel));
  if (!rel.empty()) cfg.workspace = Resolve(cfg.config_dir, rel);
  rel.clear();
  HFLOW_RETURN_IF_ERROR(f.OptString(root, "", "cmakelist_path", &rel));
  if (!rel.empty()) {
    cfg.cmakelist =
        Resolve(cfg.workspace.empty() ? cfg.config_dir : cfg.workspace, rel);
  }
  *out = std::move(cfg);
  return Status::OK();
}

Status LoadCompileConfigFile(const std::string& path, CompileConfig* out) {
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound(path +
                            ": cannot read the compile config; check "
                            "the compile_config path of the node");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseCompileConfig(ss.str(), path,
                            fs::path(path).parent_path().string(), out);
}

}  // namespace flow_func
}  // namespace hflow
