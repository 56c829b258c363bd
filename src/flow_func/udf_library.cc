// UDF library loading (see udf_library.h).
// Thread-safety: g_mu guards the loaded-library table and serialises
// dlopen; what a library registers is attributed to it by the registry
// (SetRegisteringLibrary on the dlopen thread), not by a before/after diff,
// so a name two libraries both register is attributed to each.
#include "flow_func/udf_library.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "flow_func/lib/flow_func_internal.h"
#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace flow_func {
namespace {
namespace fs = std::filesystem;

util::Mutex g_mu;
// Function-local (never destroyed), so the function carries the lock.
std::map<std::string, void*>& Loaded() REQUIRES(g_mu) {
  static auto* m = new std::map<std::string, void*>();
  return *m;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}

// Restores the thread's registering library on every exit path.
class RegisteringAs {
 public:
  explicit RegisteringAs(const std::string& library)
      : previous_(FlowFunc::internal::SetRegisteringLibrary(library)) {}
  ~RegisteringAs() { FlowFunc::internal::SetRegisteringLibrary(previous_); }
  RegisteringAs(const RegisteringAs&) = delete;
  RegisteringAs& operator=(const RegisteringAs&) = delete;

 private:
  std::string previous_;
};

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}
}  // namespace

std::vector<std::string> RegisteredFunctions() {
  std::vector<std::string> names =
      FlowFunc::internal::RegisteredFunctionNames();
  std::sort(names.begin(), names.end());
  return names;
}

bool IsFunctionRegistered(const std::string& name) {
  auto names = RegisteredFunctions();
  return std::binary_search(names.begin(), names.end(), name);
}

Status FindFunctionLibrary(const std::string& name, std::string* library) {
  const auto libs = FlowFunc::internal::LibrariesRegistering(name.c_str());
  library->clear();
  if (libs.empty()) {
    return Status::NotFound("function '" + name + "' is not registered");
  }
  if (Contains(libs, std::string())) return Status::OK();  // the process's
  if (libs.size() > 1) {
    return Status::InvalidArgument(
        "function '" + name + "' is registered by several UDF libraries (" +
        Join(libs) + "); give the node the compile_config of the library " +
        "whose function it should run");
  }
  *library = libs[0];
  return Status::OK();
}

namespace {
std::map<std::string, RemoteRecipe>& Recipes() REQUIRES(g_mu) {
  static auto* recipes = new std::map<std::string, RemoteRecipe>();
  return *recipes;
}
}  // namespace

void SetRemoteRecipe(const std::string& name, RemoteRecipe recipe) {
  util::MutexLock lock(g_mu);
  Recipes()[name] = std::move(recipe);
}

bool FindRemoteRecipe(const std::string& name, RemoteRecipe* out) {
  util::MutexLock lock(g_mu);
  auto it = Recipes().find(name);
  if (it == Recipes().end()) return false;
  *out = it->second;
  return true;
}

Status LoadUdfLibrary(const std::string& so_path,
                      std::vector<std::string>* registered) {
  std::error_code ec;
  fs::path canonical = fs::canonical(so_path, ec);
  if (ec) {
    return Status::NotFound(so_path + ": UDF library not found");
  }
  util::MutexLock lock(g_mu);
  if (registered) registered->clear();
  if (Loaded().count(canonical.string())) return Status::OK();
  void* handle = nullptr;
  {
    RegisteringAs scope(canonical.string());
    handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  }
  if (handle == nullptr) {
    const char* err = dlerror();
    return Status::InvalidArgument(so_path + ": cannot load the UDF library: " +
                                   (err ? err : "unknown dlopen error") +
                                   " (was it linked against hflow's "
                                   "devlib/linux/x86_64/libflow_func.so?)");
  }
  Loaded()[canonical.string()] = handle;
  if (registered) {
    *registered = FlowFunc::internal::NamesRegisteredBy(canonical.string());
  }
  return Status::OK();
}

Status LoadUdfFromConfig(const CompileConfig& cfg, const UdfBuildOptions& opts,
                         std::string* so_path) {
  std::string path;
  HFLOW_RETURN_IF_ERROR(ResolveUdfBinary(cfg, opts, &path));
  HFLOW_RETURN_IF_ERROR(LoadUdfLibrary(path));
  // The library's identity in the registry (LoadUdfLibrary succeeded, so
  // the path exists).
  std::error_code ec;
  const std::string library = fs::canonical(path, ec).string();
  for (const FuncDesc& f : cfg.funcs) {
    // A node runs its own library's function, or the process's (a
    // built-in); never one only another library registers.
    const auto libs = FlowFunc::internal::LibrariesRegistering(f.name.c_str());
    if (Contains(libs, library) || Contains(libs, std::string())) continue;
    std::string elsewhere;
    if (!libs.empty()) {
      elsewhere = "; only " + Join(libs) + " registers it (a node runs the " +
                  "functions of its own compile config's library)";
    }
    return Status::NotFound(
        cfg.source + ": func_list: function '" + f.name +
        "' is not registered by " + path + " (it registers: " +
        Join(FlowFunc::internal::NamesRegisteredBy(library)) + ")" + elsewhere +
        "; check REGISTER_FLOW_FUNC / FLOW_FUNC_REGISTRAR names");
  }
  if (so_path) *so_path = library;
  return Status::OK();
}

}  // namespace flow_func
}  // namespace hflow
