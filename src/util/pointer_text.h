// Text of addresses and address ranges for error messages ("0x7f.. (+64
// bytes)"). Thread-safety: pure functions.
#ifndef HFLOW_UTIL_POINTER_TEXT_H_
#define HFLOW_UTIL_POINTER_TEXT_H_

#include <cstddef>
#include <cstdio>
#include <string>

namespace hflow {
namespace util {

inline std::string PointerText(const void* p) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

inline std::string RangeText(const void* p, size_t bytes) {
  char buf[64];
  snprintf(buf, sizeof(buf), "%p (+%zu bytes)", p, bytes);
  return buf;
}

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_POINTER_TEXT_H_
