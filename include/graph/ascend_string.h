// ge::AscendString: GE's immutable string handle for names and option maps
// (keys of std::map<AscendString, AscendString>), ordered byte-wise.
//
// Thread-safety: an AscendString is immutable; copies share their bytes and
// may be used from any thread.
#ifndef HFLOW_GE_GRAPH_ASCEND_STRING_H_
#define HFLOW_GE_GRAPH_ASCEND_STRING_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "graph/types.h"

namespace ge {
class AscendString {
 public:
  AscendString() = default;
  ~AscendString() = default;
  // Implicit on purpose, as GE's: option maps are written with literals. A
  // null name is the empty string.
  AscendString(const char_t* const name);
  // Exactly `length` bytes (embedded NULs kept).
  AscendString(const char_t* const name, size_t length);

  // Never null; NUL-terminated.
  const char_t* GetString() const;
  size_t GetLength() const;
  // Offset of the first occurrence, or std::string::npos.
  size_t Find(const AscendString& ascend_string) const;
  size_t Hash() const;

  bool operator<(const AscendString& d) const;
  bool operator>(const AscendString& d) const;
  bool operator<=(const AscendString& d) const;
  bool operator>=(const AscendString& d) const;
  bool operator==(const AscendString& d) const;
  bool operator!=(const AscendString& d) const;
  bool operator==(const char_t* const d) const;
  bool operator!=(const char_t* const d) const;

 private:
  std::shared_ptr<std::string> name_;
};
}  // namespace ge

namespace std {
template <>
struct hash<ge::AscendString> {
  size_t operator()(const ge::AscendString& name) const { return name.Hash(); }
};
}  // namespace std

#endif  // HFLOW_GE_GRAPH_ASCEND_STRING_H_
