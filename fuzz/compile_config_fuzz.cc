// Fuzz target: the FunctionPp compile config parser
// (src/flow_func/compile_config.cc), fed the bytes as a user's compile
// config file (ParseCompileConfig, the text LoadCompileConfigFile reads,
// with the directory a graph file's absolute compile_config path gives).
//
// Invariants of a successful parse (docs/user_guide.md, "Compile
// config"): functions are named and unique, their indexes are unique and
// within input_num/output_num, the numbers are the ones written (nothing
// truncated), target_bin names a .so, paths are absolute; and printing the
// config back to JSON and parsing it again gives the same config.
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "flow_func/compile_config.h"
#include "fuzz_check.h"

namespace {

using hflow::flow_func::CompileConfig;
using hflow::flow_func::FuncDesc;
using Json = nlohmann::json;

constexpr char kBaseDir[] = "/fuzz/graph_dir";

void CheckIndexes(const std::vector<int32_t>& idx, int32_t num,
                  const Json& written) {
  std::set<int32_t> seen;
  for (int32_t v : idx) {
    FUZZ_CHECK(v >= 0);
    FUZZ_CHECK(num < 0 || v < num);
    FUZZ_CHECK(seen.insert(v).second);
  }
  // What the user wrote, value for value (no silent narrowing).
  FUZZ_CHECK(written.is_array() && written.size() == idx.size());
  for (size_t i = 0; i < idx.size(); ++i) {
    FUZZ_CHECK(written[i].is_number_integer());
    FUZZ_CHECK(written[i].get<int64_t>() == idx[i]);
  }
}

Json ToJson(const CompileConfig& cfg) {
  Json j;
  j["func_list"] = Json::array();
  for (const FuncDesc& f : cfg.funcs) {
    j["func_list"].push_back({{"func_name", f.name},
                              {"inputs_index", f.inputs_index},
                              {"outputs_index", f.outputs_index}});
  }
  if (cfg.input_num >= 0) j["input_num"] = cfg.input_num;
  if (cfg.output_num >= 0) j["output_num"] = cfg.output_num;
  j["target_bin"] = cfg.target_bin;
  if (!cfg.workspace.empty()) j["workspace"] = cfg.workspace;
  if (!cfg.cmakelist_path.empty()) j["cmakelist_path"] = cfg.cmakelist_path;
  return j;
}

bool SamePaths(const CompileConfig& a, const CompileConfig& b) {
  std::vector<hflow::flow_func::UdfLocation> la = a.Locations();
  std::vector<hflow::flow_func::UdfLocation> lb = b.Locations();
  if (la.size() != lb.size()) return false;
  for (size_t i = 0; i < la.size(); ++i) {
    if (la[i].path != lb[i].path || la[i].prebuilt != lb[i].prebuilt) {
      return false;
    }
  }
  return true;
}

bool Same(const CompileConfig& a, const CompileConfig& b) {
  if (a.funcs.size() != b.funcs.size()) return false;
  for (size_t i = 0; i < a.funcs.size(); ++i) {
    if (a.funcs[i].name != b.funcs[i].name ||
        a.funcs[i].inputs_index != b.funcs[i].inputs_index ||
        a.funcs[i].outputs_index != b.funcs[i].outputs_index) {
      return false;
    }
  }
  return a.input_num == b.input_num && a.output_num == b.output_num &&
         a.target_bin == b.target_bin && a.workspace == b.workspace &&
         a.cmakelist_path == b.cmakelist_path && a.config_dir == b.config_dir &&
         a.work_dir == b.work_dir && SamePaths(a, b) &&
         a.TargetLibName() == b.TargetLibName();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = hflow_fuzz::AsText(data, size);
  CompileConfig cfg;
  if (!hflow::flow_func::ParseCompileConfig(text, "fuzz.json", kBaseDir, &cfg)
           .ok()) {
    return 0;
  }
  // The document parsed, so it is a JSON object the checks can consult.
  const Json root = Json::parse(text);
  FUZZ_CHECK(!cfg.funcs.empty());
  std::set<std::string> names;
  for (size_t i = 0; i < cfg.funcs.size(); ++i) {
    const FuncDesc& f = cfg.funcs[i];
    const Json& written = root["func_list"][i];
    FUZZ_CHECK(!f.name.empty());
    FUZZ_CHECK(names.insert(f.name).second);
    CheckIndexes(f.inputs_index, cfg.input_num,
                 written.contains("inputs_index") ? written["inputs_index"]
                                                  : Json::array());
    CheckIndexes(f.outputs_index, cfg.output_num,
                 written.contains("outputs_index") ? written["outputs_index"]
                                                   : Json::array());
  }
  FUZZ_CHECK(
      cfg.input_num ==
      (root.contains("input_num") ? root["input_num"].get<int64_t>() : -1));
  FUZZ_CHECK(
      cfg.output_num ==
      (root.contains("output_num") ? root["output_num"].get<int64_t>() : -1));
  FUZZ_CHECK(!cfg.TargetLibName().empty());
  FUZZ_CHECK(cfg.config_dir == kBaseDir);
  FUZZ_CHECK(cfg.work_dir[0] == '/');
  // Every place the library is looked for is absolute, the GE rule's first.
  const auto where = cfg.Locations();
  FUZZ_CHECK(!where.empty() && where.front().ge_rule && where.front().prebuilt);
  for (const auto& l : where) FUZZ_CHECK(l.path[0] == '/');

  CompileConfig again;
  FUZZ_CHECK(hflow::flow_func::ParseCompileConfig(ToJson(cfg).dump(), "again",
                                                  kBaseDir, &again)
                 .ok());
  FUZZ_CHECK(Same(cfg, again));
  return 0;
}
