// Out-of-line members of FlowFunc::AscendString. The buffer is immutable
// once built and shared by copies, so concurrent reads need no locking.
#include <algorithm>
#include <cstring>
#include <memory>

#include "flow_func/flow_func_ascend_string.h"

namespace FlowFunc {
namespace {

// Three-way byte comparison; a proper prefix sorts first.
int Compare(const char* a, size_t a_len, const char* b, size_t b_len) {
  size_t common = std::min(a_len, b_len);
  int c = common == 0 ? 0 : std::memcmp(a, b, common);
  if (c != 0) return c;
  if (a_len == b_len) return 0;
  return a_len < b_len ? -1 : 1;
}

}  // namespace

AscendString::AscendString(const char* const name)
    : AscendString(name, name == nullptr ? 0 : std::strlen(name)) {}

AscendString::AscendString(const char* const name, size_t length) {
  if (name == nullptr || length == 0) return;  // Empty: data_ stays null.
  char* copy = new char[length + 1];
  std::memcpy(copy, name, length);
  copy[length] = '\0';
  data_ =
      std::shared_ptr<const char>(copy, std::default_delete<const char[]>());
  length_ = length;
}

const char* AscendString::GetString() const {
  return data_ == nullptr ? "" : data_.get();
}

size_t AscendString::GetLength() const { return length_; }

bool AscendString::operator<(const AscendString& d) const {
  return Compare(GetString(), length_, d.GetString(), d.length_) < 0;
}

bool AscendString::operator>(const AscendString& d) const { return d < *this; }

bool AscendString::operator<=(const AscendString& d) const {
  return !(d < *this);
}

bool AscendString::operator>=(const AscendString& d) const {
  return !(*this < d);
}

bool AscendString::operator==(const AscendString& d) const {
  return Compare(GetString(), length_, d.GetString(), d.length_) == 0;
}

bool AscendString::operator!=(const AscendString& d) const {
  return !(*this == d);
}

}  // namespace FlowFunc
