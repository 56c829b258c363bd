// The field checker of hflow's configuration inputs (see json_fields.h).
//
// Thread-safety: no shared state; every function is reentrant.
#include "util/json_fields.h"

#include <algorithm>
#include <vector>

#include "util/json_depth.h"

namespace hflow {
namespace util {
namespace {

using Json = nlohmann::json;

std::string Join(std::initializer_list<const char*> keys) {
  std::string list;
  for (const char* k : keys)
    list += (list.empty() ? "" : ", ") + std::string(k);
  return list;
}

bool Listed(std::initializer_list<const char*> keys, const std::string& key) {
  return std::any_of(keys.begin(), keys.end(),
                     [&key](const char* k) { return key == k; });
}

// Levenshtein distance, bounded by the short keys of hflow's formats.
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// The known key nearest to a typo (NearestName's rule).
std::string Nearest(const std::string& key,
                    std::initializer_list<const char*> known) {
  return NearestName(key, std::vector<std::string>(known.begin(), known.end()));
}

}  // namespace

std::string NearestName(const std::string& name,
                        const std::vector<std::string>& known) {
  if (name.size() > 64) return "";  // a name this long is no typo
  std::string best;
  size_t best_d = 3;
  for (const std::string& k : known) {
    size_t d = Distance(name, k);
    if (d < best_d && 2 * d < k.size()) {
      best = k;
      best_d = d;
    }
  }
  return best;
}

Status FieldError(const std::string& source, const std::string& path,
                  const std::string& problem, const std::string& hint) {
  std::string m = source + ": ";
  if (!path.empty()) m += path + ": ";
  m += problem;
  if (!hint.empty()) m += "; " + hint;
  return Status::InvalidArgument(m);
}

std::string JsonPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string JsonPath(const std::string& parent, size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

std::string DescribeJson(const Json& v) {
  // dump() recurses per level; ParseJsonBoundedDepth bounds the depth.
  std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return std::string(v.type_name()) + " " + text;
}

JsonFields::JsonFields(std::string_view source, std::string_view fallback)
    : source_(source.empty() ? fallback : source) {}

Status JsonFields::Error(const std::string& path, const std::string& problem,
                         const std::string& hint) const {
  return FieldError(source_, path, problem, hint);
}

Status JsonFields::Parse(std::string_view text, Json* root) const {
  std::string what;
  if (!ParseJsonBoundedDepth(text, root, &what)) {
    return Error(kDocumentPath, "malformed JSON: " + what,
                 "check brackets, commas and quotes at that position");
  }
  return Status::OK();
}

Status JsonFields::Keys(const Json& obj, const std::string& path,
                        std::initializer_list<const char*> known,
                        std::initializer_list<const char*> ignored) const {
  if (!obj.is_object()) return Status::OK();
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();
    if (key == "description" || key == "comment" || key.rfind('_', 0) == 0 ||
        Listed(known, key) || Listed(ignored, key)) {
      continue;
    }
    std::string hint = "known fields: " + Join(known);
    if (ignored.size() != 0) {
      hint += " (accepted and ignored: " + Join(ignored) + ")";
    }
    const std::string nearest = Nearest(key, known);
    if (!nearest.empty()) hint += "; did you mean \"" + nearest + "\"?";
    return Error(JsonPath(path, key), "unknown field", hint);
  }
  return Status::OK();
}

Status JsonFields::Mismatch(const Json& v, const std::string& path,
                            const std::string& kind,
                            const std::string& hint) const {
  return Error(path, "must be " + kind + ", got " + DescribeJson(v),
               hint.empty() ? "write " + kind + " there" : hint);
}

Status JsonFields::Object(const Json& v, const std::string& path,
                          const std::string& hint) const {
  return v.is_object() ? Status::OK() : Mismatch(v, path, "an object", hint);
}

Status JsonFields::Array(const Json& v, const std::string& path,
                         const std::string& hint) const {
  return v.is_array() ? Status::OK() : Mismatch(v, path, "an array", hint);
}

Status JsonFields::String(const Json& v, const std::string& path,
                          std::string* out, const std::string& hint) const {
  if (!v.is_string() || v.get_ref<const std::string&>().empty()) {
    return Mismatch(v, path, "a non-empty string", hint);
  }
  *out = v.get<std::string>();
  return Status::OK();
}

Status JsonFields::Int(const Json& v, const std::string& path, int64_t lo,
                       int64_t* out, int64_t hi,
                       const std::string& hint) const {
  const std::string range =
      "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.is_number_integer()) {
    return Mismatch(v, path, "an integer",
                    hint.empty() ? "write a whole number in " + range : hint);
  }
  // nlohmann reads non-negative literals as unsigned, and an unsigned above
  // INT64_MAX would wrap negative in get<int64_t>(): compare each as itself.
  bool out_of_range = false;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    out_of_range = hi < 0 || u > static_cast<uint64_t>(hi) ||
                   (lo > 0 && u < static_cast<uint64_t>(lo));
  } else {
    out_of_range = v.get<int64_t>() < lo || v.get<int64_t>() > hi;
  }
  if (out_of_range) {
    return Error(path, "must be in " + range + ", got " + v.dump(),
                 hint.empty() ? "write a number in that range" : hint);
  }
  *out = v.get<int64_t>();
  return Status::OK();
}

Status JsonFields::Bool(const Json& v, const std::string& path, bool* out,
                        const std::string& hint) const {
  if (!v.is_boolean()) return Mismatch(v, path, "true or false", hint);
  *out = v.get<bool>();
  return Status::OK();
}

const Json* JsonFields::Find(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

Status JsonFields::Required(const Json& obj, const std::string& path,
                            const char* key, const std::string& hint,
                            const Json** out) const {
  *out = Find(obj, key);
  if (*out == nullptr) return Error(JsonPath(path, key), "is missing", hint);
  return Status::OK();
}

Status JsonFields::OptObject(const Json& obj, const std::string& path,
                             const char* key, const Json** out,
                             const std::string& hint) const {
  *out = Find(obj, key);
  return *out ? Object(**out, JsonPath(path, key), hint) : Status::OK();
}

Status JsonFields::OptArray(const Json& obj, const std::string& path,
                            const char* key, const Json** out,
                            const std::string& hint) const {
  *out = Find(obj, key);
  return *out ? Array(**out, JsonPath(path, key), hint) : Status::OK();
}

Status JsonFields::OptString(const Json& obj, const std::string& path,
                             const char* key, std::string* out) const {
  const Json* v = Find(obj, key);
  return v ? String(*v, JsonPath(path, key), out) : Status::OK();
}

Status JsonFields::OptInt(const Json& obj, const std::string& path,
                          const char* key, int64_t lo, int64_t* out,
                          int64_t hi) const {
  const Json* v = Find(obj, key);
  return v ? Int(*v, JsonPath(path, key), lo, out, hi) : Status::OK();
}

Status JsonFields::OptBool(const Json& obj, const std::string& path,
                           const char* key, bool* out) const {
  const Json* v = Find(obj, key);
  return v ? Bool(*v, JsonPath(path, key), out) : Status::OK();
}

}  // namespace util
}  // namespace hflow
