// Loading UDF libraries. A UDF .so registers its functions from static
// initialisers into the one registry in libflow_func.so (it links that
// library by SONAME, which resolves to the copy hflow already has loaded).
// Libraries stay loaded for the life of the process: the registry holds
// creators whose code lives in them.
//
// Thread-safety: all functions are thread-safe (one process-wide lock).
#ifndef HFLOW_FLOW_FUNC_UDF_LIBRARY_H_
#define HFLOW_FLOW_FUNC_UDF_LIBRARY_H_

#include <string>
#include <vector>

#include "flow_func/compile_config.h"
#include "flow_func/udf_builder.h"
#include "hflow/status.h"

namespace hflow {
namespace flow_func {

// dlopens `so_path` once (by canonical path, which is the library's name in
// the registry); `registered` gets the function names it registered (empty
// for a library loaded before).
Status LoadUdfLibrary(const std::string& so_path,
                      std::vector<std::string>* registered = nullptr);

// Resolves (prebuilt or built), loads, and checks that every function of
// `cfg.funcs` is registered by that library (or by the process: a
// built-in), naming the file and the missing function, and the other
// libraries that register it if any. `so_path` gets the library's canonical
// path: the FuncDesc::library of the node's functions.
Status LoadUdfFromConfig(const CompileConfig& cfg, const UdfBuildOptions& opts,
                         std::string* so_path = nullptr);

// For a node that names `name` without a compile config: `library` gets
// the UDF library providing it ("" when the process registers it, e.g. a
// built-in). NotFound when nobody registers it; InvalidArgument naming the
// libraries when several do (the node must say which, by compile config).
Status FindFunctionLibrary(const std::string& name, std::string* library);

// The recipe a host program left for running its own function `name` in
// a worker (Python UDFs); FindRemoteRecipe: whether there is one.
void SetRemoteRecipe(const std::string& name, RemoteRecipe recipe);
bool FindRemoteRecipe(const std::string& name, RemoteRecipe* out);

// Whether `name` is registered (single- or multi-function).
bool IsFunctionRegistered(const std::string& name);

// Every registered name, sorted (for messages).
std::vector<std::string> RegisteredFunctions();

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_UDF_LIBRARY_H_
