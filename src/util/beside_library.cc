// util/beside_library.h.
//
// Thread-safety: reentrant (dladdr and the filesystem calls are).
#include "util/beside_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace hflow::util {

bool FindBesideLibhflow(const char* file, const char* env_var,
                        std::string* path, std::string* tried) {
  if (const char* env = std::getenv(env_var); env && *env) {
    *path = env;
    return true;
  }
  *tried = "nothing: libhflow's folder is unknown";
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&FindBesideLibhflow), &info) == 0 ||
      info.dli_fname == nullptr) {
    return false;
  }
  std::error_code ec;
  const auto lib = std::filesystem::canonical(info.dli_fname, ec);
  if (ec) return false;
  const auto p = lib.parent_path() / file;
  *tried = p.string();
  if (access(p.c_str(), R_OK) != 0) return false;
  *path = p.string();
  return true;
}

}  // namespace hflow::util
