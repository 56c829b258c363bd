// How the cluster config, device list and memory size parsers word a
// rejection: kInvalidArgument "<source>: <where>: <problem>; <hint>", so a
// user can find and fix the field without reading code.
//
// Thread-safety: a pure function.
#ifndef HFLOW_UTIL_CONFIG_ERROR_H_
#define HFLOW_UTIL_CONFIG_ERROR_H_

#include <string>

#include "hflow/status.h"

namespace hflow {
namespace util {

// `where` (a JSON path or a list item) and `hint` may be empty.
inline Status ConfigError(const std::string& source, const std::string& where,
                          const std::string& problem, const std::string& hint) {
  std::string m = source + ": ";
  if (!where.empty()) m += where + ": ";
  m += problem;
  if (!hint.empty()) m += "; " + hint;
  return Status::InvalidArgument(m);
}

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_CONFIG_ERROR_H_
