// ConvertModelToGeGraph (model_convert.h): the model library's C entry
// hflow_model_to_ge_graph, found with dlsym (libhflow does not link the
// library, which brings libtorch).
//
// Thread-safety: reentrant (dlopen is).
#include "session/model_convert.h"

#include <dlfcn.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "deploy/deployer.h"

namespace hflow {
namespace {
using ToGraphFn = int (*)(const char*, const char*, const char*, const char*,
                          char**, size_t*, char*, size_t);
using FreeFn = void (*)(void*);
}  // namespace

Status ConvertModelToGeGraph(const std::string& framework,
                             const std::string& model_file,
                             const std::map<std::string, std::string>& params,
                             const std::string& graph_name,
                             std::string* bytes) {
  std::string path;
  HFLOW_RETURN_IF_ERROR(deploy::FindModelLibrary(&path));
  // Kept loaded: libtorch does not unload cleanly, and model nodes load
  // the same library.
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return Status::NotFound(path + ": cannot load the model library: " +
                            (why != nullptr ? why : "?"));
  }
  auto to_graph =
      reinterpret_cast<ToGraphFn>(dlsym(lib, "hflow_model_to_ge_graph"));
  auto free_fn = reinterpret_cast<FreeFn>(dlsym(lib, "hflow_model_free"));
  if (to_graph == nullptr || free_fn == nullptr) {
    return Status::Internal(path +
                            " has no hflow_model_to_ge_graph: not hflow's "
                            "model library, or of another version");
  }
  const std::string params_json = nlohmann::json(params).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  char* out = nullptr;
  size_t len = 0;
  char error[2048] = {0};
  const int code =
      to_graph(framework.c_str(), model_file.c_str(), params_json.c_str(),
               graph_name.c_str(), &out, &len, error, sizeof(error));
  if (code != 0) {
    return Status(static_cast<StatusCode>(code), error);
  }
  bytes->assign(out, len);
  free_fn(out);
  return Status::OK();
}

}  // namespace hflow
