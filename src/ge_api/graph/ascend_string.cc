// ge::AscendString (graph/ascend_string.h). Part of libgraph_base.so, built
// with the old string ABI as GE's libraries are.
//
// Thread-safety: immutable values.
#include "graph/ascend_string.h"

#include <cstring>

namespace ge {
namespace {
const std::string& Text(const std::shared_ptr<std::string>& s) {
  static const std::string kEmpty;
  return s ? *s : kEmpty;
}
}  // namespace

AscendString::AscendString(const char_t* const name)
    : name_(name == nullptr ? nullptr : std::make_shared<std::string>(name)) {}

AscendString::AscendString(const char_t* const name, size_t length)
    : name_(name == nullptr ? nullptr
                            : std::make_shared<std::string>(name, length)) {}

const char_t* AscendString::GetString() const { return Text(name_).c_str(); }
size_t AscendString::GetLength() const { return Text(name_).size(); }
size_t AscendString::Find(const AscendString& s) const {
  return Text(name_).find(Text(s.name_));
}
size_t AscendString::Hash() const {
  return std::hash<std::string>()(Text(name_));
}
bool AscendString::operator<(const AscendString& d) const {
  return Text(name_) < Text(d.name_);
}
bool AscendString::operator>(const AscendString& d) const { return d < *this; }
bool AscendString::operator<=(const AscendString& d) const {
  return !(d < *this);
}
bool AscendString::operator>=(const AscendString& d) const {
  return !(*this < d);
}
bool AscendString::operator==(const AscendString& d) const {
  return Text(name_) == Text(d.name_);
}
bool AscendString::operator!=(const AscendString& d) const {
  return !(*this == d);
}
bool AscendString::operator==(const char_t* const d) const {
  return Text(name_) == (d == nullptr ? "" : d);
}
bool AscendString::operator!=(const char_t* const d) const {
  return !(*this == d);
}
}  // namespace ge
