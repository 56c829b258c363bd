// Compile config parsing (see compile_config.h) and where its library is
// looked for. Fields are read with util::JsonFields: every rejection reads
// "<file>: <json path>: <problem>; <hint>" and unknown keys are errors.
// Thread-safety: reentrant; nlohmann-json exceptions never escape.
#include "flow_func/compile_config.h"

#include <algorithm>
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

Status ParseFunc(const JsonFields& f, const Json& func, const std::string& path,
                 FuncDesc* out) {
  HFLOW_RETURN_IF_ERROR(
      f.Object(func, path, "write {\"func_name\": \"Add\", ...}"));
  HFLOW_RETURN_IF_ERROR(
      f.Keys(func, path,
             {"func_name", "inputs_index", "outputs_index", "stream_input"}));
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
  if (const Json* stream = JsonFields::Find(func, "stream_input")) {
    HFLOW_RETURN_IF_ERROR(f.Bool(*stream, path + ".stream_input",
                                 &out->stream_input,
                                 "value type should be boolean: write true "
                                 "for a function taking FlowMsgQueue inputs"));
  }
  return Status::OK();
}

Status CheckRange(const JsonFields& f, const FuncDesc& func,
                  const std::string& path, bool inputs, int32_t num) {
  const auto& idx = inputs ? func.inputs_index : func.outputs_index;
  const std::string count = inputs ? "input_num" : "output_num";
  for (int32_t v : idx) {
    if (num >= 0 && v >= num) {
      return f.Error(path + "." + (inputs ? "inputs_index" : "outputs_index"),
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

// The absolute form of `dir` (empty: the current directory), or an error
// naming the config.
Status AbsoluteDir(const JsonFields& f, const std::string& dir,
                   const char* what, std::string* out) {
  // The non-throwing overload: fs::absolute("") throws, and a config named
  // without a directory ("add_func.json") has an empty parent path.
  std::error_code ec;
  fs::path abs = fs::absolute(dir.empty() ? "." : dir, ec).lexically_normal();
  // "/a/." normalises to "/a/": drop the separator (but keep "/").
  if (abs.has_relative_path() && !abs.has_filename()) abs = abs.parent_path();
  *out = abs.string();
  if (ec) {
    return f.Error(util::kDocumentPath,
                   std::string("cannot resolve the ") + what + " '" + dir +
                       "': " + ec.message(),
                   std::string("check the ") + what);
  }
  return Status::OK();
}

}  // namespace

// Note [Compile config paths]
// GE reads `workspace` as given, so a relative one is relative to the
// working directory of the process, and finds everything else inside it:
// the library at <workspace>/<target_bin> (the bin_path attribute its
// loader sets) and the sources at <workspace>/<cmakelist_path>, by default
// <workspace>/CMakeLists.txt. hflow does the same, in this order:
//   1. <cwd>/<workspace>/<target_bin>            load it (GE)
//   2. <cwd>/<workspace>/<cmakelist_path>        build it (GE)
//   3. <config dir>/<target_bin>                 load it (fallback)
//   4. <config dir>/<workspace>/<cmakelist_path> build it (fallback)
// The fallback is hflow's older rule, relative to the config file, which
// keeps graph files runnable from any directory. A GE-rule CMakeLists.txt
// that does not mention UDF_TARGET_LIB (which GE and hflow pass to every
// UDF build) is skipped: with the common "workspace": "." the working
// directory's own project (hflow's source tree, say) would otherwise be
// built as the UDF. Without a workspace (GE
// requires one; hflow does not) the workspace is the base folder itself,
// and there is no default CMakeLists.txt: the base folder is often a
// project of its own (hflow's source tree) that must not be built as a UDF.
std::vector<UdfLocation> CompileConfig::Locations() const {
  std::vector<UdfLocation> out;
  auto add = [&](const std::string& path, bool prebuilt, bool ge,
                 const char* field) {
    for (const UdfLocation& l : out) {
      if (l.path == path && l.prebuilt == prebuilt) return;
    }
    out.push_back(UdfLocation{path, prebuilt, ge, field});
  };
  const std::string cmake = !cmakelist_path.empty() ? cmakelist_path
                            : !workspace.empty()    ? "CMakeLists.txt"
                                                    : "";
  for (bool ge : {true, false}) {
    const std::string& base = ge ? work_dir : config_dir;
    const std::string ws = Resolve(base, workspace);
    add(ge ? Resolve(ws, target_bin) : Resolve(base, target_bin), true, ge,
        "target_bin");
    if (!cmake.empty()) {
      add(Resolve(ws, cmake), false, ge,
          cmakelist_path.empty() ? "workspace" : "cmakelist_path");
    }
  }
  return out;
}

Status CompileConfig::NothingFound(
    bool cmakelists_only, const std::vector<std::string>& skipped) const {
  std::string tried;
  for (const UdfLocation& l : Locations()) {
    if (cmakelists_only && l.prebuilt) continue;
    tried += "\n  " + l.path + " (" + l.field + ", " +
             (l.ge_rule ? "GE: from the working directory"
                        : "fallback: from the config file's folder") +
             ")";
    if (!l.prebuilt &&
        std::find(skipped.begin(), skipped.end(), l.path) != skipped.end()) {
      tried +=
          ": exists, but does not use UDF_TARGET_LIB, so it is no UDF "
          "project";
    }
  }
  const std::string what =
      cmakelists_only ? "no CMakeLists.txt to build '" + target_bin + "' from"
                      : "neither the library '" + target_bin +
                            "' nor a CMakeLists.txt to build it";
  return Status::NotFound(
      source + ": target_bin, workspace, cmakelist_path: " + what +
      " exists; tried:" + (tried.empty() ? std::string(" nothing") : tried) +
      "\nprebuild the library into the workspace, or set workspace (and "
      "cmakelist_path) to the UDF project; a relative workspace is taken "
      "from the working directory (" +
      work_dir + ")");
}

std::string CompileConfig::TargetLibName() const {
  std::string n = fs::path(target_bin).filename().string();
  if (n.rfind("lib", 0) == 0) n = n.substr(3);
  if (n.size() > 3 && n.compare(n.size() - 3, 3, ".so") == 0) {
    n.resize(n.size() - 3);
  }
  return n;
}

Status ParseFuncList(const util::JsonFields& f, const nlohmann::json& list,
                     const std::string& path, int32_t input_num,
                     int32_t output_num, std::vector<FuncDesc>* out) {
  if (!list.is_array() || list.empty()) {
    return f.Error(path, "must be a non-empty array",
                   "list the UDF's functions as [{\"func_name\": ...}]");
  }
  std::set<std::string> names;
  std::vector<FuncDesc> funcs;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = JsonPath(path, i);
    FuncDesc func;
    HFLOW_RETURN_IF_ERROR(ParseFunc(f, list[i], at, &func));
    if (!names.insert(func.name).second) {
      return f.Error(at + ".func_name",
                     "function '" + func.name + "' is listed twice",
                     "list each function once");
    }
    HFLOW_RETURN_IF_ERROR(CheckRange(f, func, at, true, input_num));
    HFLOW_RETURN_IF_ERROR(CheckRange(f, func, at, false, output_num));
    funcs.push_back(std::move(func));
  }
  *out = std::move(funcs);
  return Status::OK();
}

Status ParseCompileConfig(std::string_view json_text, std::string_view source,
                          const std::string& base_dir, CompileConfig* out,
                          const std::string& work_dir) {
  JsonFields f(source, "<compile config>");
  Json root;
  HFLOW_RETURN_IF_ERROR(f.Parse(json_text, &root));
  HFLOW_RETURN_IF_ERROR(f.Object(root, util::kDocumentPath,
                                 "write {\"func_list\": [...], "
                                 "\"target_bin\": \"libxxx.so\"}"));
  // Note [Ignored compile config fields]
  // GE's FunctionPp fields that steer what hflow does not model are
  // accepted and ignored: the cross compiler (compiler), resource hints
  // (running_resources_info, visible_device_enable), GE's built-in
  // function switch and the memory pool tiers (buf_cfg; hflow's pools are
  // sized per deployment). Anything else unknown is a typo. heavy_load is
  // read: it puts the node's instances in worker processes (Note [heavy_load]
  // in deploy/deployer.cc).
  HFLOW_RETURN_IF_ERROR(
      f.Keys(root, "",
             {"func_list", "input_num", "output_num", "target_bin", "workspace",
              "cmakelist_path", "heavy_load"},
             {"compiler", "running_resources_info", "visible_device_enable",
              "built_in_flow_func", "buf_cfg"}));
  CompileConfig cfg;
  cfg.source = std::string(source);
  HFLOW_RETURN_IF_ERROR(
      AbsoluteDir(f, base_dir, "directory of the config", &cfg.config_dir));
  HFLOW_RETURN_IF_ERROR(
      AbsoluteDir(f, work_dir, "working directory", &cfg.work_dir));
  int64_t n = -1;
  HFLOW_RETURN_IF_ERROR(f.OptInt(root, "", "input_num", 0, &n));
  cfg.input_num = static_cast<int32_t>(n);
  n = -1;
  HFLOW_RETURN_IF_ERROR(f.OptInt(root, "", "output_num", 0, &n));
  cfg.output_num = static_cast<int32_t>(n);
  const Json* funcs = JsonFields::Find(root, "func_list");
  HFLOW_RETURN_IF_ERROR(ParseFuncList(f, funcs ? *funcs : Json(), "func_list",
                                      cfg.input_num, cfg.output_num,
                                      &cfg.funcs));
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
  HFLOW_RETURN_IF_ERROR(f.OptString(root, "", "workspace", &cfg.workspace));
  HFLOW_RETURN_IF_ERROR(f.OptBool(root, "", "heavy_load", &cfg.heavy_load));
  HFLOW_RETURN_IF_ERROR(
      f.OptString(root, "", "cmakelist_path", &cfg.cmakelist_path));
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
