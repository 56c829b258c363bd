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
#include "util/beside_library.h"

namespace hflow {
namespace deploy {
namespace {

using CheckFn = int (*)(const char*, const char*, const char*, const char*,
                        int*, int*, void**, char*, size_t);
using ReleaseFn = void (*)(void*);

}  // namespace

Status FindModelLibrary(std::string* path) {
  std::string tried;
  if (util::FindBesideLibhflow(model::kModelLibrary, "HFLOW_MODEL_LIBRARY",
                               path, &tried)) {
    return Status::OK();
  }
  return Status::NotFound(
      std::string("model nodes need ") + model::kModelLibrary +
      ", which was not found (tried " + tried +
      "): hflow builds it where libtorch-dev and libonnx-dev are installed "
      "(scripts/install-deps, then rebuild), or point $HFLOW_MODEL_LIBRARY "
      "at it");
}

namespace {

// The model library loaded (as a UDF library: its model UDF registers) and
// its check entries.
struct ModelLibrary {
  std::string canonical;
  CheckFn check = nullptr;
  ReleaseFn release = nullptr;
};

Status LoadModelLibrary(const std::string& where, ModelLibrary* lib) {
  std::string path;
  HFLOW_RETURN_IF_ERROR(FindModelLibrary(&path).WithContext(where));
  HFLOW_RETURN_IF_ERROR(flow_func::LoadUdfLibrary(path).WithContext(where));
  std::error_code ec;
  lib->canonical = std::filesystem::canonical(path, ec).string();
  void* handle = dlopen(lib->canonical.c_str(), RTLD_NOW | RTLD_NOLOAD);
  lib->check =
      handle ? reinterpret_cast<CheckFn>(dlsym(handle, "hflow_model_check"))
             : nullptr;
  lib->release = handle ? reinterpret_cast<ReleaseFn>(
                              dlsym(handle, "hflow_model_release_hold"))
                        : nullptr;
  if (handle) dlclose(handle);  // the registry keeps its own reference
  if (lib->check == nullptr || lib->release == nullptr) {
    return Status::Internal(where + lib->canonical +
                            " has no hflow_model_check: not hflow's model "
                            "library, or of another version");
  }
  return Status::OK();
}

// `m` checked by the library; its input and output counts in *inputs and
// *outputs, and (hold non-null) the parsed model held.
Status CheckModel(const ModelLibrary& lib, const ModelDef& m,
                  const std::string& where, int* inputs, int* outputs,
                  std::shared_ptr<void>* hold) {
  const std::string params = nlohmann::json(m.load_params).dump();
  char error[4096] = {0};
  void* parsed = nullptr;
  const int code =
      lib.check(m.framework.c_str(), m.graph_file.c_str(), params.c_str(),
                m.compile_config.c_str(), inputs, outputs,
                hold ? &parsed : nullptr, error, sizeof error);
  if (code != 0) {
    return Status(static_cast<StatusCode>(code), where + error);
  }
  if (hold != nullptr) *hold = std::shared_ptr<void>(parsed, lib.release);
  return Status::OK();
}

}  // namespace

Status ResolveModelNode(const GraphDef& graph, const NodeDef& n,
                        flow_func::FuncDesc* out, std::shared_ptr<void>* hold) {
  const std::string where = graph.source + ": node '" + n.name + "': ";
  ModelLibrary lib;
  HFLOW_RETURN_IF_ERROR(LoadModelLibrary(where, &lib));
  const ModelDef& m = n.model;
  int inputs = 0, outputs = 0;
  HFLOW_RETURN_IF_ERROR(CheckModel(lib, m, where + "model " + n.model_pp + ": ",
                                   &inputs, &outputs, hold));
  if (uint32_t(inputs) != PpInputs(n) || uint32_t(outputs) != PpOutputs(n)) {
    return Status::InvalidArgument(
        where + "the model " + m.graph_file + " takes " +
        std::to_string(inputs) + " input(s) and gives " +
        std::to_string(outputs) + " output(s), but the node has " +
        std::to_string(PpInputs(n)) + " and " + std::to_string(PpOutputs(n)) +
        "; wire the node as its model");
  }
  out->name = model::kModelFunction;
  out->library = lib.canonical;
  return Status::OK();
}

Status ResolveInvokedModels(const GraphDef& graph, const NodeDef& n,
                            std::vector<std::shared_ptr<void>>* holds) {
  if (n.invoked.empty()) return Status::OK();
  const std::string where = graph.source + ": node '" + n.name + "': ";
  ModelLibrary lib;
  HFLOW_RETURN_IF_ERROR(LoadModelLibrary(where, &lib));
  for (const InvokedModelDef& d : n.invoked) {
    int inputs = 0, outputs = 0;
    std::shared_ptr<void> hold;
    HFLOW_RETURN_IF_ERROR(CheckModel(lib, d.model, where + d.what + ": ",
                                     &inputs, &outputs,
                                     holds ? &hold : nullptr));
    if (holds) holds->push_back(std::move(hold));
  }
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow
