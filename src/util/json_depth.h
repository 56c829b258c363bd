// Bounded-depth JSON parsing for hflow's config parsers (cluster config,
// deploy info, compile config, graph file). nlohmann parses iteratively,
// but dumping, copying and comparing a value recurse once per nesting
// level, so a deeply nested file ("[[[[...", found by fuzzing) overflowed
// the stack in the error messages that quote a value. No hflow format nests
// beyond a handful of levels; deeper documents are rejected here, before
// any value exists.
//
// Thread-safety: a pure function; reentrant.
#ifndef HFLOW_UTIL_JSON_DEPTH_H_
#define HFLOW_UTIL_JSON_DEPTH_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace hflow {
namespace util {

inline constexpr int kMaxJsonDepth = 64;

// Parses `text` into *out. On failure returns false with *error set to
// "parse error at line L, column C: ..." (nlohmann's message without its
// bracketed id) or "nested deeper than 64 levels at ...".
inline bool ParseJsonBoundedDepth(std::string_view text, nlohmann::json* out,
                                  std::string* error) {
  using Json = nlohmann::json;
  bool too_deep = false;
  // Returning false discards the value, so nothing deeper than the limit is
  // ever stored; the parse itself goes on (iteratively) to find the end.
  auto callback = [&too_deep](int depth, Json::parse_event_t, Json&) {
    if (depth > kMaxJsonDepth) too_deep = true;
    return !too_deep;
  };
  Json parsed;
  try {
    parsed = Json::parse(text.begin(), text.end(), callback);
  } catch (const Json::exception& e) {
    std::string what = e.what();
    size_t close = what.find("] ");
    *error = close == std::string::npos ? what : what.substr(close + 2);
    return false;
  }
  if (too_deep) {
    *error = "nested deeper than " + std::to_string(kMaxJsonDepth) +
             " levels; hflow's formats need only a few";
    return false;
  }
  *out = std::move(parsed);
  return true;
}

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_JSON_DEPTH_H_
