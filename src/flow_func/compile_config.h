// FunctionPp compile configs (GE format; see docs/formats.md): which
// functions a UDF binary provides, their input/output index mappings, the
// binary's name and how to build it (workspace + CMakeLists). Paths are
// resolved relative to the config file. Every rejection names the file and
// field (util/json_fields.h).
//
// Thread-safety: plain values; parsing is reentrant.
#ifndef HFLOW_FLOW_FUNC_COMPILE_CONFIG_H_
#define HFLOW_FLOW_FUNC_COMPILE_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "hflow/status.h"

namespace hflow {
namespace flow_func {

struct FuncDesc {
  std::string name;
  std::vector<int32_t> inputs_index;   // node inputs this function reads
  std::vector<int32_t> outputs_index;  // node outputs it writes
  // The canonical path of the UDF library whose registration the node runs
  // (set when the library is loaded); "" resolves by name alone: the
  // process's registration (built-ins) or the only library's.
  std::string library;
};

struct CompileConfig {
  std::string source;      // the config file (for messages)
  std::string config_dir;  // absolute directory of the config file
  std::vector<FuncDesc> funcs;
  int32_t input_num = -1;  // -1: not given
  int32_t output_num = -1;
  std::string target_bin;  // e.g. "libadd.so"
  std::string workspace;   // absolute, or empty
  std::string cmakelist;   // absolute path of the CMakeLists.txt, or empty

  // "libadd.so" -> "add" (GE's UDF_TARGET_LIB).
  std::string TargetLibName() const;
  // Absolute path where a prebuilt binary is looked for first.
  std::string PrebuiltPath() const;
};

// `base_dir` resolves relative paths; `source` names the text in messages.
Status ParseCompileConfig(std::string_view json_text, std::string_view source,
                          const std::string& base_dir, CompileConfig* out);
Status LoadCompileConfigFile(const std::string& path, CompileConfig* out);

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_COMPILE_CONFIG_H_
