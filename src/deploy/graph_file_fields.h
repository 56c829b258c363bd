// Typed field checks for the JSON graph file (graph_file.cc): each check
// type-tests a value before reading it (nlohmann exceptions never escape)
// and reports "<file>: <JSON path>: <what is wrong / what to do>". Also the
// parser of a node's "input_attrs" (batch attrs), kept here so the graph
// file parser stays short. Header-only: it serves graph_file.cc alone.
//
// Thread-safety: immutable after construction; reentrant.
#ifndef HFLOW_DEPLOY_GRAPH_FILE_FIELDS_H_
#define HFLOW_DEPLOY_GRAPH_FILE_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "deploy/graph_def.h"
#include "hflow/status.h"
#include "util/json_keys.h"

namespace hflow {
namespace deploy {

class JsonFields {
 public:
  explicit JsonFields(std::string_view source) : source_(source) {}

  const std::string& source() const { return source_; }
  Status Bad(const std::string& path, const std::string& what) const;
  // Unknown keys are errors (util::CheckJsonKeys, util/json_keys.h).
  Status CheckKeys(const nlohmann::json& obj, const std::string& path,
                   std::initializer_list<const char*> known) const;
  Status Str(const nlohmann::json& j, const std::string& path,
             std::string* out) const;
  // An integer in [lo, INT32_MAX].
  Status Int(const nlohmann::json& j, const std::string& path, int64_t lo,
             int64_t* out) const;
  Status Bool(const nlohmann::json& j, const std::string& path,
              bool* out) const;
  // Leave *out unchanged when `key` is absent.
  Status OptInt(const nlohmann::json& obj, const char* key,
                const std::string& path, int64_t lo, int64_t* out) const;
  Status OptBool(const nlohmann::json& obj, const char* key,
                 const std::string& path, bool* out) const;

 private:
  std::string source_;
};

// {"<node input index>": {"count_batch": {...}} | {"time_batch": {...}}}
// into n->input_attrs (sized to n->inputs; call after inputs are sized).
inline Status ParseInputAttrs(const JsonFields& f, const nlohmann::json& j,
                              const std::string& path, NodeDef* n);

// ---- Definitions (inline: this header serves graph_file.cc alone). ----

namespace graph_file_internal {

inline Status CountBatchAttr(const JsonFields& f, const nlohmann::json& j,
                             const std::string& path, CountBatch* c) {
  if (!j.is_object()) return f.Bad(path, "must be an object");
  HFLOW_RETURN_IF_ERROR(
      f.CheckKeys(j, path,
                  {"batch_size", "slide_stride", "timeout", "padding",
                   "batch_dim", "drop_remainder"}));
  if (!j.contains("batch_size")) {
    return f.Bad(path + ".batch_size",
                 "is missing; give the messages per batch");
  }
  HFLOW_RETURN_IF_ERROR(
      f.Int(j["batch_size"], path + ".batch_size", 1, &c->batch_size));
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, "slide_stride", path, 0, &c->slide_stride));
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, "timeout", path, 0, &c->timeout));
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, "batch_dim", path, -1, &c->batch_dim));
  HFLOW_RETURN_IF_ERROR(f.OptBool(j, "padding", path, &c->padding));
  return f.OptBool(j, "drop_remainder", path, &c->drop_remainder);
}

inline Status TimeBatchAttr(const JsonFields& f, const nlohmann::json& j,
                            const std::string& path, TimeBatch* t) {
  if (!j.is_object()) return f.Bad(path, "must be an object");
  HFLOW_RETURN_IF_ERROR(f.CheckKeys(
      j, path,
      {"time_window", "timeout", "batch_dim", "padding", "drop_remainder"}));
  if (!j.contains("time_window")) {
    return f.Bad(path + ".time_window",
                 "is missing; give the window in ms (-1 for whole segments)");
  }
  HFLOW_RETURN_IF_ERROR(
      f.Int(j["time_window"], path + ".time_window", -1, &t->time_window));
  if (t->time_window == 0) {
    return f.Bad(path + ".time_window",
                 "must be > 0 ms, or -1 for whole segments");
  }
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, "timeout", path, 0, &t->timeout));
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, "batch_dim", path, -1, &t->batch_dim));
  HFLOW_RETURN_IF_ERROR(f.OptBool(j, "padding", path, &t->padding));
  return f.OptBool(j, "drop_remainder", path, &t->drop_remainder);
}

// One input's attr: exactly one of count_batch / time_batch (the batcher
// runs one policy per input).
inline Status Attr(const JsonFields& f, const nlohmann::json& j,
                   const std::string& path, InputAttr* out) {
  if (!j.is_object() || j.size() != 1 ||
      !(j.contains("count_batch") || j.contains("time_batch"))) {
    return f.Bad(path,
                 "must be {\"count_batch\": {...}} or {\"time_batch\": "
                 "{...}} (one batch attr per input)");
  }
  if (j.contains("count_batch")) {
    CountBatch c;
    HFLOW_RETURN_IF_ERROR(
        CountBatchAttr(f, j["count_batch"], path + ".count_batch", &c));
    *out = c;
  } else {
    TimeBatch t;
    HFLOW_RETURN_IF_ERROR(
        TimeBatchAttr(f, j["time_batch"], path + ".time_batch", &t));
    *out = t;
  }
  return Status::OK();
}

}  // namespace graph_file_internal

inline Status JsonFields::Bad(const std::string& path,
                              const std::string& what) const {
  return Status::InvalidArgument(source_ + ": " + path + ": " + what);
}

inline Status JsonFields::CheckKeys(
    const nlohmann::json& obj, const std::string& path,
    std::initializer_list<const char*> known) const {
  return util::CheckJsonKeys(obj, source_, path, known);
}

inline Status JsonFields::Str(const nlohmann::json& j, const std::string& path,
                              std::string* out) const {
  if (!j.is_string() || j.get<std::string>().empty()) {
    return Bad(path, "must be a non-empty string");
  }
  *out = j.get<std::string>();
  return Status::OK();
}

inline Status JsonFields::Int(const nlohmann::json& j, const std::string& path,
                              int64_t lo, int64_t* out) const {
  if (!j.is_number_integer()) return Bad(path, "must be an integer");
  const int64_t v = j.get<int64_t>();
  if (v < lo || v > INT32_MAX) {
    return Bad(path, "must be in [" + std::to_string(lo) + ", " +
                         std::to_string(INT32_MAX) + "], got " +
                         std::to_string(v));
  }
  *out = v;
  return Status::OK();
}

inline Status JsonFields::Bool(const nlohmann::json& j, const std::string& path,
                               bool* out) const {
  if (!j.is_boolean()) return Bad(path, "must be true or false");
  *out = j.get<bool>();
  return Status::OK();
}

inline Status JsonFields::OptInt(const nlohmann::json& obj, const char* key,
                                 const std::string& path, int64_t lo,
                                 int64_t* out) const {
  if (!obj.contains(key)) return Status::OK();
  return Int(obj[key], path + "." + key, lo, out);
}

inline Status JsonFields::OptBool(const nlohmann::json& obj, const char* key,
                                  const std::string& path, bool* out) const {
  if (!obj.contains(key)) return Status::OK();
  return Bool(obj[key], path + "." + key, out);
}

inline Status ParseInputAttrs(const JsonFields& f, const nlohmann::json& j,
                              const std::string& path, NodeDef* n) {
  if (!j.is_object()) {
    return f.Bad(path,
                 "must be an object {\"<node input index>\": "
                 "{\"count_batch\": {...}} or {\"time_batch\": {...}}}");
  }
  n->input_attrs.assign(n->inputs.size(), {});
  for (const auto& [key, value] : j.items()) {
    const std::string at = path + "." + key;
    const bool digits =
        !key.empty() && key.size() < 10 &&
        key.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(key) >= n->inputs.size()) {
      return f.Bad(at, "the key must be a node input index below " +
                           std::to_string(n->inputs.size()));
    }
    InputAttr attr;
    HFLOW_RETURN_IF_ERROR(graph_file_internal::Attr(f, value, at, &attr));
    n->input_attrs[std::stoul(key)].push_back(attr);
  }
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow

#endif  // HFLOW_DEPLOY_GRAPH_FILE_FIELDS_H_
