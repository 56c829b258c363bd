// The parsers of a graph file node's "input_attrs" (batch attrs) and of
// the "flow_attr" objects (queue depth and enqueue policy), kept apart so the
// graph file parser (graph_file.cc) stays short. Fields are read with
// util::JsonFields: values are type-tested before they are read (nlohmann
// exceptions never escape) and every rejection reads "<file>: <JSON path>:
// <problem>; <hint>". Header-only: it serves graph_file.cc alone.
//
// Thread-safety: immutable after construction; reentrant.
#ifndef HFLOW_DEPLOY_GRAPH_FILE_FIELDS_H_
#define HFLOW_DEPLOY_GRAPH_FILE_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "deploy/graph_def.h"
#include "hflow/status.h"
#include "util/json_fields.h"

namespace hflow {
namespace deploy {

// {"<node input index>": {"count_batch": {...}} | {"time_batch": {...}}}
// into n->input_attrs (sized to n->inputs; call after inputs are sized).
inline Status ParseInputAttrs(const util::JsonFields& f,
                              const nlohmann::json& j, const std::string& path,
                              NodeDef* n);

// {"depth": 8, "enqueue_policy": "OVERWRITE"} (either may be omitted).
inline Status ParseFlowAttr(const util::JsonFields& f, const nlohmann::json& j,
                            const std::string& path, FlowAttr* out);

// {"<key>": <flow attr>, ...} into (*out)[index], keys being the indexes
// below `keys.size()` ("0", "1", ...) or, with `by_name`, the names in
// `keys`. *out is sized to keys.size().
inline Status ParseFlowAttrMap(const util::JsonFields& f,
                               const nlohmann::json& j, const std::string& path,
                               const std::vector<std::string>& keys,
                               bool by_name, std::vector<FlowAttr>* out);

// {"max_cache_num": n, "timeout_ms": t, "dropout": b}, as
// FlowGraph::SetInputsAlignAttrs (GE's limits).
inline Status ParseInputsAlign(const util::JsonFields& f,
                               const nlohmann::json& j, const std::string& path,
                               InputsAlign* out);

// ---- Definitions (inline: this header serves graph_file.cc alone). ----

namespace graph_file_internal {

inline Status CountBatchAttr(const util::JsonFields& f, const nlohmann::json& j,
                             const std::string& path, CountBatch* c) {
  HFLOW_RETURN_IF_ERROR(f.Object(j, path, "write {\"batch_size\": 4, ...}"));
  HFLOW_RETURN_IF_ERROR(f.Keys(j, path,
                               {"batch_size", "slide_stride", "timeout",
                                "padding", "batch_dim", "drop_remainder"}));
  const nlohmann::json* size = nullptr;
  HFLOW_RETURN_IF_ERROR(
      f.Required(j, path, "batch_size", "give the messages per batch", &size));
  HFLOW_RETURN_IF_ERROR(f.Int(*size, path + ".batch_size", 1, &c->batch_size));
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, path, "slide_stride", 0, &c->slide_stride));
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, path, "timeout", 0, &c->timeout));
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, path, "batch_dim", -1, &c->batch_dim));
  HFLOW_RETURN_IF_ERROR(f.OptBool(j, path, "padding", &c->padding));
  return f.OptBool(j, path, "drop_remainder", &c->drop_remainder);
}

inline Status TimeBatchAttr(const util::JsonFields& f, const nlohmann::json& j,
                            const std::string& path, TimeBatch* t) {
  HFLOW_RETURN_IF_ERROR(f.Object(j, path, "write {\"time_window\": 100, ...}"));
  HFLOW_RETURN_IF_ERROR(f.Keys(
      j, path,
      {"time_window", "timeout", "batch_dim", "padding", "drop_remainder"}));
  const nlohmann::json* window = nullptr;
  HFLOW_RETURN_IF_ERROR(
      f.Required(j, path, "time_window",
                 "give the window in ms (-1 for whole segments)", &window));
  HFLOW_RETURN_IF_ERROR(
      f.Int(*window, path + ".time_window", -1, &t->time_window));
  if (t->time_window == 0) {
    return f.Error(path + ".time_window", "must be > 0 ms",
                   "give the window in ms, or -1 for whole segments");
  }
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, path, "timeout", 0, &t->timeout));
  HFLOW_RETURN_IF_ERROR(f.OptInt(j, path, "batch_dim", -1, &t->batch_dim));
  HFLOW_RETURN_IF_ERROR(f.OptBool(j, path, "padding", &t->padding));
  return f.OptBool(j, path, "drop_remainder", &t->drop_remainder);
}

// One input's attr: exactly one of count_batch / time_batch (the batcher
// runs one policy per input).
inline Status Attr(const util::JsonFields& f, const nlohmann::json& j,
                   const std::string& path, InputAttr* out) {
  if (!j.is_object() || j.size() != 1 ||
      !(j.contains("count_batch") || j.contains("time_batch"))) {
    return f.Error(path,
                   "must be {\"count_batch\": {...}} or {\"time_batch\": "
                   "{...}}",
                   "give one batch attr per input");
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

inline Status ParseInputAttrs(const util::JsonFields& f,
                              const nlohmann::json& j, const std::string& path,
                              NodeDef* n) {
  HFLOW_RETURN_IF_ERROR(
      f.Object(j, path,
               "write {\"<node input index>\": {\"count_batch\": {...}} "
               "or {\"time_batch\": {...}}}"));
  n->input_attrs.assign(n->inputs.size(), {});
  for (const auto& [key, value] : j.items()) {
    const std::string at = path + "." + key;
    const bool digits =
        !key.empty() && key.size() < 10 &&
        key.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoul(key) >= n->inputs.size()) {
      return f.Error(at,
                     "the key must be a node input index below " +
                         std::to_string(n->inputs.size()),
                     "key each attr by the index of one of the node's inputs");
    }
    InputAttr attr;
    HFLOW_RETURN_IF_ERROR(graph_file_internal::Attr(f, value, at, &attr));
    n->input_attrs[std::stoul(key)].push_back(attr);
  }
  return Status::OK();
}

inline Status ParseFlowAttr(const util::JsonFields& f, const nlohmann::json& j,
                            const std::string& path, FlowAttr* out) {
  HFLOW_RETURN_IF_ERROR(
      f.Object(j, path, "write {\"depth\": 8, \"enqueue_policy\": \"FIFO\"}"));
  HFLOW_RETURN_IF_ERROR(f.Keys(j, path, {"depth", "enqueue_policy"}));
  FlowAttr a;
  if (const nlohmann::json* d = f.Find(j, "depth")) {
    HFLOW_RETURN_IF_ERROR(f.Int(*d, path + ".depth", INT32_MIN, &a.depth,
                                INT32_MAX, "give the queue depth, at least 2"));
    if (a.depth < 2) {
      return f.Error(
          path + ".depth",
          "depth " + std::to_string(a.depth) + ": must be at least 2",
          "give the messages a queue holds (GE's _flow_attr_depth "
          "is at least 2), or leave depth out to inherit it");
    }
  }
  if (const nlohmann::json* p = f.Find(j, "enqueue_policy")) {
    std::string text;
    HFLOW_RETURN_IF_ERROR(f.String(*p, path + ".enqueue_policy", &text,
                                   "write \"FIFO\" or \"OVERWRITE\""));
    if (!ParseEnqueuePolicy(text, &a.enqueue_policy)) {
      return f.Error(
          path + ".enqueue_policy",
          "unknown enqueue policy '" + text + "'; expected FIFO or OVERWRITE",
          "write \"FIFO\" (a full queue makes the producer wait) "
          "or \"OVERWRITE\" (it drops the oldest message)");
    }
  }
  *out = a;
  return Status::OK();
}

inline Status ParseFlowAttrMap(const util::JsonFields& f,
                               const nlohmann::json& j, const std::string& path,
                               const std::vector<std::string>& keys,
                               bool by_name, std::vector<FlowAttr>* out) {
  const std::string hint = by_name ? "key each attr by a graph input name"
                                   : "key each attr by an index below " +
                                         std::to_string(keys.size());
  HFLOW_RETURN_IF_ERROR(f.Object(j, path, hint));
  out->assign(keys.size(), FlowAttr{});
  for (const auto& [key, value] : j.items()) {
    const std::string at = path + "." + key;
    size_t index = keys.size();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) index = i;
    }
    if (index == keys.size()) {
      return f.Error(at,
                     by_name ? "'" + key + "' is not a graph input"
                             : "the key must be an index below " +
                                   std::to_string(keys.size()),
                     hint);
    }
    HFLOW_RETURN_IF_ERROR(ParseFlowAttr(f, value, at, &(*out)[index]));
  }
  return Status::OK();
}

inline Status ParseInputsAlign(const util::JsonFields& f,
                               const nlohmann::json& j, const std::string& path,
                               InputsAlign* out) {
  HFLOW_RETURN_IF_ERROR(f.Object(j, path, "write {\"max_cache_num\": 16}"));
  HFLOW_RETURN_IF_ERROR(
      f.Keys(j, path, {"max_cache_num", "timeout_ms", "dropout"}));
  int64_t cache = 0;
  if (!j.contains("max_cache_num")) {
    return f.Error(path, "has no max_cache_num",
                   "give 1..1024 incomplete transactions to hold");
  }
  HFLOW_RETURN_IF_ERROR(f.Int(j["max_cache_num"], path + ".max_cache_num", 0,
                              &cache, kMaxAlignCache));
  out->max_cache = static_cast<uint32_t>(cache);
  if (j.contains("timeout_ms")) {
    int64_t t = 0;
    HFLOW_RETURN_IF_ERROR(f.Int(j["timeout_ms"], path + ".timeout_ms", -1, &t,
                                kMaxAlignTimeoutMs));
    if (t == 0) {
      return f.Error(path + ".timeout_ms", "0 is not a timeout",
                     "give -1 (never) or 1..600000 ms");
    }
    out->timeout_ms = static_cast<int32_t>(t);
  }
  if (j.contains("dropout")) {
    HFLOW_RETURN_IF_ERROR(
        f.Bool(j["dropout"], path + ".dropout", &out->dropout));
  }
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow

#endif  // HFLOW_DEPLOY_GRAPH_FILE_FIELDS_H_
