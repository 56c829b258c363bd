// Which sanitizer this translation unit is compiled under, the same with
// GCC and clang: GCC defines __SANITIZE_ADDRESS__ and __SANITIZE_THREAD__;
// clang 14 defines neither and answers __has_feature instead (CI builds
// ASan with clang, TSan with GCC). Header only, no state.
#ifndef HFLOW_UTIL_SANITIZERS_H_
#define HFLOW_UTIL_SANITIZERS_H_

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HFLOW_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define HFLOW_TSAN 1
#endif
#endif

#if defined(__SANITIZE_ADDRESS__) && !defined(HFLOW_ASAN)
#define HFLOW_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__) && !defined(HFLOW_TSAN)
#define HFLOW_TSAN 1
#endif

#endif  // HFLOW_UTIL_SANITIZERS_H_
