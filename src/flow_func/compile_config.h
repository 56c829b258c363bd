// FunctionPp compile configs (GE format; see docs/formats.md): which
// functions a UDF binary provides, their input/output index mappings, the
// binary's name and how to build it (workspace + CMakeLists). Paths are
// resolved as GE resolves them (the working directory, then the workspace),
// with the config file's folder as a fallback (Note [Compile config paths]
// in compile_config.cc). Every rejection names the file and field
// (util/json_fields.h).
//
// Thread-safety: plain values; parsing is reentrant.
#ifndef HFLOW_FLOW_FUNC_COMPILE_CONFIG_H_
#define HFLOW_FLOW_FUNC_COMPILE_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hflow/status.h"
#include "util/json_fields.h"

namespace hflow {
namespace flow_func {

// How a worker process can run a function the host program registered
// itself (a Python UDF): the program to start instead of hflow-worker,
// and what that program's loader needs to register the function there.
struct RemoteRecipe {
  std::vector<std::string> launcher;  // argv before hflow-worker's flags
  std::string payload;                // opaque to hflow (the loader's)
  std::string error;                  // why there is none, when launcher is
};

struct FuncDesc {
  std::string name;
  std::vector<int32_t> inputs_index;   // node inputs this function reads
  std::vector<int32_t> outputs_index;  // node outputs it writes
  // The canonical path of the UDF library whose registration the node runs
  // (set when the library is loaded); "" resolves by name alone: the
  // process's registration (built-ins) or the only library's.
  std::string library;
  // func_list[].stream_input: the function is a queue proc
  // (RegProcFunc with FlowMsgQueue inputs) that the executor calls on a
  // thread of its own, with the live input queues (docs/udf_api.md).
  bool stream_input = false;
  // The compile config says "heavy_load": true (CompileConfig::heavy_load):
  // the instance runs in a worker process.
  bool heavy_load = false;
  // A host-registered function's recipe for a worker (library empty).
  RemoteRecipe remote;
};

// A place where a compile config's library, or the CMakeLists.txt to build
// it from, may be.
struct UdfLocation {
  std::string path;        // absolute, normalised
  bool prebuilt = false;   // a library to load; false: a CMakeLists.txt
  bool ge_rule = false;    // GE's resolution; false: the fallback
  const char* field = "";  // the config field it comes from
};

struct CompileConfig {
  std::string source;      // the config file (for messages)
  std::string config_dir;  // absolute directory of the config file
  std::string work_dir;    // absolute working directory at parse time
  std::vector<FuncDesc> funcs;
  int32_t input_num = -1;  // -1: not given
  int32_t output_num = -1;
  std::string target_bin;      // e.g. "libadd.so"
  std::string workspace;       // as written; empty when not given
  std::string cmakelist_path;  // as written; empty when not given
  // GE's "heavy_load": the node's instances run in worker processes.
  bool heavy_load = false;

  // "libadd.so" -> "add" (GE's UDF_TARGET_LIB).
  std::string TargetLibName() const;
  // Where the library is looked for, in order (Note [Compile config
  // paths]): GE's library and CMakeLists.txt, then the fallback's; no path
  // twice.
  std::vector<UdfLocation> Locations() const;
  // The error when no location is usable: names the file, the fields and
  // every path tried; `skipped` are CMakeLists.txt that exist but are not
  // UDF projects.
  Status NothingFound(bool cmakelists_only,
                      const std::vector<std::string>& skipped = {}) const;
};

// `base_dir` is the config file's folder (the fallback's base); `work_dir`
// GE's base, empty for the current directory; `source` names the text in
// messages.
Status ParseCompileConfig(std::string_view json_text, std::string_view source,
                          const std::string& base_dir, CompileConfig* out,
                          const std::string& work_dir = "");
Status LoadCompileConfigFile(const std::string& path, CompileConfig* out);

// A func_list array at `path` (a compile config's, or a graph file node's
// inline one): each entry's fields, names unique, indexes below
// input_num/output_num (unchecked when -1). Errors name `path`'s entry.
Status ParseFuncList(const util::JsonFields& f, const nlohmann::json& list,
                     const std::string& path, int32_t input_num,
                     int32_t output_num, std::vector<FuncDesc>* out);

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_COMPILE_CONFIG_H_
