// The one unknown-key check of hflow's JSON formats (graph file, cluster
// config, deploy info, compile config): every object a parser reads lists
// the keys it understands, and any other key is an error naming the file
// and the JSON path of the key, with the accepted keys, so that a typo
// ("logic_device_lst") fails loudly instead of silently changing nothing.
// Keys a format documents but hflow does not use (GE's "ipaddr",
// "heavy_load", ...) are listed separately as accepted and ignored.
// "description", "comment" and keys starting with "_" are always accepted:
// they are how users annotate JSON files.
//
// Thread-safety: a pure function; reentrant.
#ifndef HFLOW_UTIL_JSON_KEYS_H_
#define HFLOW_UTIL_JSON_KEYS_H_

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

#include "util/config_error.h"

namespace hflow {
namespace util {

// Checks the keys of `obj` (a no-op when it is not an object). `path` is
// the object's JSON path ("" for the document); a rejection reads
// "<source>: <path>.<key>: unknown field; known fields: a, b (accepted and
// ignored: c, d)".
inline Status CheckJsonKeys(const nlohmann::json& obj,
                            const std::string& source, const std::string& path,
                            std::initializer_list<const char*> known,
                            std::initializer_list<const char*> ignored = {}) {
  if (!obj.is_object()) return Status::OK();
  auto join = [](std::initializer_list<const char*> keys) {
    std::string list;
    for (const char* k : keys)
      list += (list.empty() ? "" : ", ") + std::string(k);
    return list;
  };
  auto listed = [](std::initializer_list<const char*> keys,
                   const std::string& key) {
    for (const char* k : keys) {
      if (key == k) return true;
    }
    return false;
  };
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();
    if (key == "description" || key == "comment" || key.rfind('_', 0) == 0 ||
        listed(known, key) || listed(ignored, key)) {
      continue;
    }
    std::string hint = "known fields: " + join(known);
    if (ignored.size() != 0) {
      hint += " (accepted and ignored: " + join(ignored) + ")";
    }
    return ConfigError(source, path.empty() ? key : path + "." + key,
                       "unknown field", hint);
  }
  return Status::OK();
}

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_JSON_KEYS_H_
