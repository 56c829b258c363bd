// AscendString: the immutable string type of the FlowFunc API. Strings cross
// the UDF/runtime boundary as AscendString or const char*, never std::string,
// because UDFs are built with the old libstdc++ ABI and the runtime with the
// new one. Copies share one immutable buffer, so copying is cheap and a const
// AscendString may be read from any thread.
#ifndef HFLOW_FLOW_FUNC_FLOW_FUNC_ASCEND_STRING_H_
#define HFLOW_FLOW_FUNC_FLOW_FUNC_ASCEND_STRING_H_

#include <cstddef>
#include <memory>

#include "flow_func_defines.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY AscendString {
 public:
  AscendString() = default;
  ~AscendString() = default;

  // Implicit on purpose: maps keyed by AscendString are indexed with literals.
  // A null name yields the empty string.
  AscendString(const char* const name);
  // Takes exactly `length` bytes (embedded NULs allowed).
  AscendString(const char* const name, size_t length);

  // Never null; NUL-terminated.
  const char* GetString() const;
  size_t GetLength() const;

  // Byte-wise lexicographic order (a proper prefix sorts first).
  bool operator<(const AscendString& d) const;
  bool operator>(const AscendString& d) const;
  bool operator<=(const AscendString& d) const;
  bool operator>=(const AscendString& d) const;
  bool operator==(const AscendString& d) const;
  bool operator!=(const AscendString& d) const;

 private:
  // shared_ptr has the same layout in both libstdc++ ABIs.
  std::shared_ptr<const char> data_;
  size_t length_ = 0;
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_FLOW_FUNC_ASCEND_STRING_H_
