// UDF library loading (see udf_library.h).
// Thread-safety: g_mu guards the loaded-library table and serialises
// dlopen so that registry diffs are attributed to the right library.
#include "flow_func/udf_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "flow_func/lib/flow_func_internal.h"

namespace hflow {
namespace flow_func {
namespace {
namespace fs = std::filesystem;

std::mutex g_mu;
std::map<std::string, void*>& Loaded() {
  static auto* m = new std::map<std::string, void*>();
  return *m;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}
}  // namespace

std::vector<std::string> RegisteredFunctions() {
  std::vector<std::string> names = FlowFunc::internal::RegisteredFunctionNames();
  std::sort(names.begin(), names.end());
  return names;
}

bool IsFunctionRegistered(const std::string& name) {
  auto names = RegisteredFunctions();
  return std::binary_search(names.begin(), names.end(), name);
}

Status LoadUdfLibrary(const std::string& so_path,
                      std::vector<std::string>* registered) {
  std::error_code ec;
  fs::path canonical = fs::canonical(so_path, ec);
  if (ec) {
    return Status::NotFound(so_path + ": UDF library not found");
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (registered) registered->clear();
  if (Loaded().count(canonical.string())) return Status::OK();
  auto before = RegisteredFunctions();
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    return Status::InvalidArgument(
        so_path + ": cannot load the UDF library: " +
        (err ? err : "unknown dlopen error") +
        " (was it linked against hflow's devlib/linux/x86_64/libflow_func.so?)");
  }
  Loaded()[canonical.string()] = handle;
  if (registered) {
    auto after = RegisteredFunctions();
    std::set_difference(after.begin(), after.end(), before.begin(),
                        before.end(), std::back_inserter(*registered));
  }
  return Status::OK();
}

Status LoadUdfFromConfig(const CompileConfig& cfg, const UdfBuildOptions& opts,
                         std::string* so_path) {
  std::string path;
  HFLOW_RETURN_IF_ERROR(ResolveUdfBinary(cfg, opts, &path));
  HFLOW_RETURN_IF_ERROR(LoadUdfLibrary(path));
  for (const FuncDesc& f : cfg.funcs) {
    if (!IsFunctionRegistered(f.name)) {
      return Status::NotFound(
          cfg.source + ": func_list: function '" + f.name +
          "' is not registered by " + path +
          " (registered: " + Join(RegisteredFunctions()) +
          "); check REGISTER_FLOW_FUNC / FLOW_FUNC_REGISTRAR names");
    }
  }
  if (so_path) *so_path = path;
  return Status::OK();
}

}  // namespace flow_func
}  // namespace hflow
