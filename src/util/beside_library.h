// Where hflow's optional libraries are: $ENV when set, else beside the
// libhflow.so this code was loaded from (the build tree's and the install's
// layout alike). The model library and the hosts library are found so.
//
// Thread-safety: reentrant.
#ifndef HFLOW_UTIL_BESIDE_LIBRARY_H_
#define HFLOW_UTIL_BESIDE_LIBRARY_H_

#include <string>

namespace hflow::util {

// `*path`: $`env_var` if set and non-empty, else `file` in libhflow's
// folder when it is readable there. False when neither: `*tried` then
// says what was looked at (for the caller's NotFound).
bool FindBesideLibhflow(const char* file, const char* env_var,
                        std::string* path, std::string* tried);

}  // namespace hflow::util

#endif  // HFLOW_UTIL_BESIDE_LIBRARY_H_
