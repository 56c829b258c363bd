// Model nodes at resolve time (deployer.h ResolveModelNode): the model
// library (libhflow_model.so, built where libtorch is found) is found
// beside libhflow and loaded, and its check runs on the node's model on
// the host, before anything is deployed: a missing or corrupt file, an
// unsupported operator, a compile config that does not fit, or a model
// whose input and output counts are not the node's, fail the build naming
// the node. The instances then run the library's model UDF.
//
// Thread-safety: reentrant (the UDF library registry has its own lock).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "deploy/deployer.h"
#include "flow_func/udf_library.h"
#include "model/model_config.h"

namespace hflow {
namespace deploy {
namespace {

using CheckFn = int (*)(const char*, const char*, const char*, const char*,
                        int*, int*, void**, char*, size_t);
using ReleaseFn = void (*)(void*);

}  // namespace

Status FindModelLibrary(std::string* path) {
  if (const char* env = std::getenv("HFLOW_MODEL_LIBRARY"); env && *env) {
    *path = env;
    return Status::OK();
  }
  Dl_info info{};
  std::string tried = "nothing: libhflow's folder is unknown";
  if (dladdr(reinterpret_cast<void*>(&FindModelLibrary), &info) != 0 &&
      info.dli_fname != nullptr) {
    std::error_code ec;
    const auto lib = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) {
      const auto p = lib.parent_path() / model::kModelLibrary;
      if (access(p.c_str(), R_OK) == 0) {
        *path = p.string();
        return Status::OK();
      }
      tried = p.string();
    }
  }
  return Status::NotFound(
      std::string("model nodes need ") + model::kModelLibrary +
      ", which was not found (tried " + tried +
      "): hflow builds it where libtorch-dev and libonnx-dev are installed "
      "(scripts/install-deps, then rebuild), or point $HFLOW_MODEL_LIBRARY "
      "at it");
}

Status ResolveModelNode(const GraphDef& graph, const NodeDef& n,
                        flow_func::FuncDesc* out, std::shared_ptr<void>* hold) {
  const std::string where = graph.source + ": node '" + n.name + "': ";
  std::string path;
  HFLOW_RETURN_IF_ERROR(FindModelLibrary(&path).WithContext(where));
  HFLOW_RETURN_IF_ERROR(flow_func::LoadUdfLibrary(path).WithContext(where));
  std::error_code ec;
  const std::string canonical = std::filesystem::canonical(path, ec).string();
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_NOLOAD);
  auto check =
      handle ? reinterpret_cast<CheckFn>(dlsym(handle, "hflow_model_check"))
             : nullptr;
  auto release = handle ? reinterpret_cast<ReleaseFn>(
                              dlsym(handle, "hflow_model_release_hold"))
                        : nullptr;
  if (handle) dlclose(handle);  // the registry keeps its own reference
  if (check == nullptr || release == nullptr) {
    return Status::Internal(where + canonical +
                            " has no hflow_model_check: not hflow's model "
                            "library, or of another version");
  }
  const ModelDef& m = n.model;
  const std::string params = nlohmann::json(m.load_params).dump();
  char error[4096] = {0};
  int inputs = 0, outputs = 0;
  void* parsed = nullptr;
  const int code =
      check(m.framework.c_str(), m.graph_file.c_str(), params.c_str(),
            m.compile_config.c_str(), &inputs, &outputs,
            hold ? &parsed : nullptr, error, sizeof error);
  if (code != 0) {
    return Status(static_cast<StatusCode>(code),
                  where + "model " + n.model_pp + ": " + error);
  }
  if (hold != nullptr) *hold = std::shared_ptr<void>(parsed, release);
  if (uint32_t(inputs) != PpInputs(n) || uint32_t(outputs) != PpOutputs(n)) {
    return Status::InvalidArgument(
        where + "the model " + m.graph_file + " takes " +
        std::to_string(inputs) + " input(s) and gives " +
        std::to_string(outputs) + " output(s), but the node has " +
        std::to_string(PpInputs(n)) + " and " + std::to_string(PpOutputs(n)) +
        "; wire the node as its model");
  }
  out->name = model::kModelFunction;
  out->library = canonical;
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow
