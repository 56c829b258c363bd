// Macros over clang's thread-safety attributes (-Wthread-safety): they say
// which mutex guards which member and which lock a function needs, takes or
// gives back, so a clang build checks every access at compile time
// (scripts/check-thread-safety). GCC and other compilers see no-ops.
//
// The names follow clang's documentation ("Thread Safety Analysis") and
// Abseil's thread_annotations.h. libstdc++'s std::mutex carries none of
// these attributes, so annotated code locks a util::Mutex (util/mutex.h).
//
// Thread-safety: compile-time only; nothing here runs.
#ifndef HFLOW_UTIL_THREAD_ANNOTATIONS_H_
#define HFLOW_UTIL_THREAD_ANNOTATIONS_H_

#if defined(__clang__)
#define HFLOW_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define HFLOW_THREAD_ANNOTATION_(x)  // GCC: no thread-safety analysis
#endif

// A class that is a lock (util::Mutex); `x` names it in messages.
#define CAPABILITY(x) HFLOW_THREAD_ANNOTATION_(capability(x))
// An RAII class that holds a capability for its lifetime (util::MutexLock).
#define SCOPED_CAPABILITY HFLOW_THREAD_ANNOTATION_(scoped_lockable)
// A member read or written only with the mutex held.
#define GUARDED_BY(x) HFLOW_THREAD_ANNOTATION_(guarded_by(x))
// The pointee of a pointer member is guarded by the mutex.
#define PT_GUARDED_BY(x) HFLOW_THREAD_ANNOTATION_(pt_guarded_by(x))
// Lock ordering: this mutex is taken before / after the named ones.
#define ACQUIRED_BEFORE(...) \
  HFLOW_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) \
  HFLOW_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))
// The caller must hold the mutex (exclusively / shared).
#define REQUIRES(...) HFLOW_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) \
  HFLOW_THREAD_ANNOTATION_(requires_shared_capability(__VA_ARGS__))
// The function takes the mutex and returns holding it.
#define ACQUIRE(...) HFLOW_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) \
  HFLOW_THREAD_ANNOTATION_(acquire_shared_capability(__VA_ARGS__))
// The function gives back a mutex the caller held.
#define RELEASE(...) HFLOW_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) \
  HFLOW_THREAD_ANNOTATION_(release_shared_capability(__VA_ARGS__))
// The function takes the mutex when it returns the given value.
#define TRY_ACQUIRE(...) \
  HFLOW_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
// The caller must not hold the mutex (the function takes it itself).
#define EXCLUDES(...) HFLOW_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
// The function checks (at run time, or by construction) that the mutex is
// held; the analysis assumes it from there on.
#define ASSERT_CAPABILITY(x) HFLOW_THREAD_ANNOTATION_(assert_capability(x))
// The function returns a reference to the named mutex.
#define RETURN_CAPABILITY(x) HFLOW_THREAD_ANNOTATION_(lock_returned(x))
// Opts a function out of the analysis; say why next to every use.
#define NO_THREAD_SAFETY_ANALYSIS \
  HFLOW_THREAD_ANNOTATION_(no_thread_safety_analysis)

#endif  // HFLOW_UTIL_THREAD_ANNOTATIONS_H_
