// The one field checker of hflow's configuration inputs: the cluster config,
// the deploy info, the compile config, the graph file and the input values
// of `hflow run`. A JsonFields is bound to a source name (a file path or
// "--input a"); its readers type-test a value before reading it (nlohmann
// exceptions never escape) and every rejection reads the same way:
//
//   kInvalidArgument "<source>: <field path>: <what is wrong>; <what to do>"
//
// so a user can find and fix the field without reading code. Field paths
// are JSON paths ("cluster[0].cluster_nodes[1].item_list"); "(document)"
// names the whole document.
//
// Note [Unknown keys]
// Every object a parser reads lists the keys it understands, and any other
// key is an error naming its path and the accepted keys (with the nearest
// one as "did you mean"), so a typo ("logic_device_lst") fails loudly
// instead of silently changing nothing. Keys a format documents but hflow
// does not use (GE's "ipaddr", "heavy_load", ...) are listed separately as
// accepted and ignored. "description", "comment" and keys starting with "_"
// are always accepted: they are how users annotate JSON files.
//
// Thread-safety: immutable after construction; all members are const and
// reentrant.
#ifndef HFLOW_UTIL_JSON_FIELDS_H_
#define HFLOW_UTIL_JSON_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "hflow/status.h"

namespace hflow {
namespace util {

// The field path of problems with the document as a whole.
inline constexpr char kDocumentPath[] = "(document)";

// The uniform wording: "<source>: <path>: <problem>; <hint>". `path` and
// `hint` may be empty (then they and their separator are left out).
Status FieldError(const std::string& source, const std::string& path,
                  const std::string& problem, const std::string& hint);

// "a" + "b" -> "a.b"; "" + "b" -> "b"; "a" + 3 -> "a[3]".
std::string JsonPath(const std::string& parent, const std::string& key);
// The name of `known` nearest to a misspelt `name`, if it is near enough to
// be the one meant (at most 2 edits, fewer than half its length); else "".
std::string NearestName(const std::string& name,
                        const std::vector<std::string>& known);
std::string JsonPath(const std::string& parent, size_t index);

// A value for an error message: its JSON type and at most 40 characters of
// its text ("string \"32XB\"", "array [1,2]").
std::string DescribeJson(const nlohmann::json& v);

class JsonFields {
 public:
  using Json = nlohmann::json;

  // An empty `source` reads as `fallback` ("<cluster config>").
  explicit JsonFields(std::string_view source, std::string_view fallback = "");

  const std::string& source() const { return source_; }

  // FieldError bound to this source.
  Status Error(const std::string& path, const std::string& problem,
               const std::string& hint) const;

  // Parses `text` with the nesting bound of util/json_depth.h; a rejection
  // reads "<source>: (document): malformed JSON: parse error at line L,
  // column C: ...; check brackets, commas and quotes at that position".
  Status Parse(std::string_view text, Json* root) const;

  // Note [Unknown keys]. A no-op when `obj` is not an object; `path` is the
  // object's own path ("" for the document).
  Status Keys(const Json& obj, const std::string& path,
              std::initializer_list<const char*> known,
              std::initializer_list<const char*> ignored = {}) const;

  // ---- Values. A mismatch reads "<path>: must be <kind>, got <value>;
  // <hint>"; an empty hint takes a generic one naming the kind. ----
  Status Object(const Json& v, const std::string& path,
                const std::string& hint = "") const;
  Status Array(const Json& v, const std::string& path,
               const std::string& hint = "") const;
  // A non-empty string.
  Status String(const Json& v, const std::string& path, std::string* out,
                const std::string& hint = "") const;
  // An integer in [lo, hi]; the default `hi` is INT32_MAX because counts
  // and indexes are stored as int32 (4294967296 must not wrap to 0).
  Status Int(const Json& v, const std::string& path, int64_t lo, int64_t* out,
             int64_t hi = INT32_MAX, const std::string& hint = "") const;
  Status Bool(const Json& v, const std::string& path, bool* out,
              const std::string& hint = "") const;

  // ---- Members of an object at `path`. ----
  // The member, or nullptr when it (or the object) is absent.
  static const Json* Find(const Json& obj, const char* key);
  // A present member, else "<path>.<key>: is missing; <hint>".
  Status Required(const Json& obj, const std::string& path, const char* key,
                  const std::string& hint, const Json** out) const;
  // Optional members: *out is left unchanged (or null) when absent.
  Status OptObject(const Json& obj, const std::string& path, const char* key,
                   const Json** out, const std::string& hint = "") const;
  Status OptArray(const Json& obj, const std::string& path, const char* key,
                  const Json** out, const std::string& hint = "") const;
  Status OptString(const Json& obj, const std::string& path, const char* key,
                   std::string* out) const;
  Status OptInt(const Json& obj, const std::string& path, const char* key,
                int64_t lo, int64_t* out, int64_t hi = INT32_MAX) const;
  Status OptBool(const Json& obj, const std::string& path, const char* key,
                 bool* out) const;

 private:
  Status Mismatch(const Json& v, const std::string& path,
                  const std::string& kind, const std::string& hint) const;

  std::string source_;
};

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_JSON_FIELDS_H_
