// Compile config parsing (see compile_config.h).
// Thread-safety: reentrant; nlohmann-json exceptions never escape.
#include "flow_func/compile_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "util/json_depth.h"
#include "util/json_keys.h"

namespace hflow {
namespace flow_func {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class Checker {
 public:
  explicit Checker(std::string_view source) : source_(source) {}
  Status Bad(const std::string& field, const std::string& what) const {
    return Status::InvalidArgument(source_ + ": " + field + ": " + what);
  }
  Status Keys(const Json& obj, const std::string& path,
              std::initializer_list<const char*> known,
              std::initializer_list<const char*> ignored = {}) const {
    return util::CheckJsonKeys(obj, source_, path, known, ignored);
  }
  // An integer in [lo, INT32_MAX]: counts and indexes are stored as int32,
  // so anything larger would wrap silently (4294967296 would become 0).
  Status Int(const Json& j, const std::string& field, int64_t lo,
             int64_t* out) const {
    if (!j.is_number_integer()) return Bad(field, "must be an integer");
    if (j.is_number_unsigned() && j.get<uint64_t>() > INT32_MAX) {
      return Bad(field, "must be <= " + std::to_string(INT32_MAX) + ", got " +
                            j.dump());
    }
    int64_t v = j.get<int64_t>();
    if (v < lo || v > INT32_MAX) {
      return Bad(field, "must be in [" + std::to_string(lo) + ", " +
                            std::to_string(INT32_MAX) + "], got " +
                            std::to_string(v));
    }
    *out = v;
    return Status::OK();
  }
  Status Str(const Json& j, const std::string& field, std::string* out) const {
    if (!j.is_string() || j.get<std::string>().empty()) {
      return Bad(field, "must be a non-empty string");
    }
    *out = j.get<std::string>();
    return Status::OK();
  }
  Status Indexes(const Json& j, const std::string& field,
                 std::vector<int32_t>* out) const {
    if (!j.is_array()) return Bad(field, "must be an array of indexes");
    std::set<int64_t> seen;
    for (size_t i = 0; i < j.size(); ++i) {
      int64_t v = 0;
      HFLOW_RETURN_IF_ERROR(
          Int(j[i], field + "[" + std::to_string(i) + "]", 0, &v));
      if (!seen.insert(v).second) {
        return Bad(field, "index " + std::to_string(v) + " listed twice");
      }
      out->push_back(static_cast<int32_t>(v));
    }
    return Status::OK();
  }

 private:
  std::string source_;
};

Status ParseFunc(const Checker& c, const Json& f, size_t i, FuncDesc* out) {
  const std::string path = "func_list[" + std::to_string(i) + "]";
  if (!f.is_object()) return c.Bad(path, "must be an object");
  HFLOW_RETURN_IF_ERROR(c.Keys(f, path,
                               {"func_name", "inputs_index", "outputs_index"},
                               {"stream_input"}));
  if (!f.contains("func_name")) {
    return c.Bad(path + ".func_name", "is missing; name the function "
                 "the UDF registers");
  }
  HFLOW_RETURN_IF_ERROR(c.Str(f["func_name"], path + ".func_name", &out->name));
  if (f.contains("inputs_index")) {
    HFLOW_RETURN_IF_ERROR(
        c.Indexes(f["inputs_index"], path + ".inputs_index", &out->inputs_index));
  }
  if (f.contains("outputs_index")) {
    HFLOW_RETURN_IF_ERROR(c.Indexes(f["outputs_index"], path + ".outputs_index",
                                    &out->outputs_index));
  }
  return Status::OK();
}

Status CheckRange(const Checker& c, const FuncDesc& f, size_t i, bool inputs,
                  int32_t num) {
  const auto& idx = inputs ? f.inputs_index : f.outputs_index;
  for (int32_t v : idx) {
    if (num >= 0 && v >= num) {
      return c.Bad("func_list[" + std::to_string(i) + "]." +
                       (inputs ? "inputs_index" : "outputs_index"),
                   "index " + std::to_string(v) + " is out of range (" +
                       (inputs ? "input_num" : "output_num") + " is " +
                       std::to_string(num) + ")");
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
  Checker c(source);
  Json root;
  std::string error;
  if (!util::ParseJsonBoundedDepth(json_text, &root, &error)) {
    return c.Bad("(document)", "is not valid JSON; check brackets and commas (" +
                                   error + ")");
  }
  if (!root.is_object()) return c.Bad("(document)", "must be a JSON object");
  // Note [Ignored compile config fields]
  // GE's FunctionPp fields that steer what hflow does not model are
  // accepted and ignored: the cross compiler (compiler), resource hints
  // (running_resources_info, heavy_load, visible_device_enable), GE's
  // built-in function switch and the memory pool tiers (buf_cfg; hflow's
  // pools are sized per deployment). Anything else unknown is a typo.
  HFLOW_RETURN_IF_ERROR(
      c.Keys(root, "",
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
    return c.Bad("(document)", "cannot resolve the directory '" + base_dir +
                                   "': " + ec.message());
  }
  if (!root.contains("func_list") || !root["func_list"].is_array() ||
      root["func_list"].empty()) {
    return c.Bad("func_list", "must be a non-empty array of {\"func_name\": ...}");
  }
  int64_t n = -1;
  if (root.contains("input_num")) {
    HFLOW_RETURN_IF_ERROR(c.Int(root["input_num"], "input_num", 0, &n));
    cfg.input_num = static_cast<int32_t>(n);
  }
  if (root.contains("output_num")) {
    HFLOW_RETURN_IF_ERROR(c.Int(root["output_num"], "output_num", 0, &n));
    cfg.output_num = static_cast<int32_t>(n);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < root["func_list"].size(); ++i) {
    FuncDesc f;
    HFLOW_RETURN_IF_ERROR(ParseFunc(c, root["func_list"][i], i, &f));
    if (!names.insert(f.name).second) {
      return c.Bad("func_list[" + std::to_string(i) + "].func_name",
                   "function '" + f.name + "' is listed twice");
    }
    HFLOW_RETURN_IF_ERROR(CheckRange(c, f, i, true, cfg.input_num));
    HFLOW_RETURN_IF_ERROR(CheckRange(c, f, i, false, cfg.output_num));
    cfg.funcs.push_back(std::move(f));
  }
  if (!root.contains("target_bin")) {
    return c.Bad("target_bin", "is missing; name the UDF library (libxxx.so)");
  }
  HFLOW_RETURN_IF_ERROR(c.Str(root["target_bin"], "target_bin", &cfg.target_bin));
  if (cfg.TargetLibName().empty() ||
      fs::path(cfg.target_bin).extension() != ".so") {
    return c.Bad("target_bin", "'" + cfg.target_bin +
                                   "' must name a shared library (libxxx.so)");
  }
  std::string rel;
  if (root.contains("workspace")) {
    HFLOW_RETURN_IF_ERROR(c.Str(root["workspace"], "workspace", &rel));
    cfg.workspace = Resolve(cfg.config_dir, rel);
  }
  if (root.contains("cmakelist_path")) {
    HFLOW_RETURN_IF_ERROR(c.Str(root["cmakelist_path"], "cmakelist_path", &rel));
    cfg.cmakelist = Resolve(
        cfg.workspace.empty() ? cfg.config_dir : cfg.workspace, rel);
  }
  *out = std::move(cfg);
  return Status::OK();
}

Status LoadCompileConfigFile(const std::string& path, CompileConfig* out) {
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound(path + ": cannot read the compile config; check "
                            "the compile_config path of the node");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseCompileConfig(ss.str(), path,
                            fs::path(path).parent_path().string(), out);
}

}  // namespace flow_func
}  // namespace hflow
