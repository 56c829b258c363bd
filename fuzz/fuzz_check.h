// Shared helpers of the fuzz targets (fuzz/*_fuzz.cc).
//
// FUZZ_CHECK turns a broken invariant of a successful parse into a crash
// (__builtin_trap), so libFuzzer records the input like any sanitizer
// finding and the replay runner (mode B) fails its ctest. Parse errors are
// not failures: every target only checks what a parser promised once it
// returned OK.
//
// Thread-safety: header-only, no state.
#ifndef HFLOW_FUZZ_FUZZ_CHECK_H_
#define HFLOW_FUZZ_FUZZ_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

// The message goes to stderr first so a crash report says which invariant
// broke, not only where.
#define FUZZ_CHECK(cond)                                                   \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, \
                   __LINE__, #cond);                                       \
      __builtin_trap();                                                    \
    }                                                                      \
  } while (0)

namespace hflow_fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

}  // namespace hflow_fuzz

#endif  // HFLOW_FUZZ_FUZZ_CHECK_H_
