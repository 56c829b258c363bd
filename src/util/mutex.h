// util::Mutex and util::SharedMutex: std::mutex and std::shared_mutex with
// clang's capability attributes (util/thread_annotations.h), and the scoped
// locks that take them (MutexLock, ReaderMutexLock, WriterMutexLock).
// libstdc++'s mutexes carry no such attributes, so a member marked
// GUARDED_BY(mu_) can only be checked when mu_ is one of these.
//
// Condition variables: MutexLock holds a std::unique_lock<std::mutex> over
// the wrapped mutex and waits on a plain std::condition_variable through
// it (Wait, WaitFor, WaitUntil). We chose that over
// std::condition_variable_any, which would take the Mutex itself: _any
// keeps a mutex of its own and locks it around every wait and notify, a
// cost on the queues' hot paths (device_queue.cc) for no gain. To the
// analysis a wait keeps the lock held (the condition variable gives it up
// and takes it back inside), which is what the code after it may assume.
// Waits take no predicate: a predicate lambda is analyzed as a function of
// its own, which does not hold the lock, so callers loop instead
// (`while (!ready_) lock.Wait(cv_);`, what wait(lock, pred) does).
//
// Thread-safety: as the std types they wrap; a MutexLock belongs to the
// thread that made it.
#ifndef HFLOW_UTIL_MUTEX_H_
#define HFLOW_UTIL_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "util/spin_lock.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace util {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  // BasicLockable names, so std::lock_guard<util::Mutex> also works (but
  // unchecked: prefer MutexLock).
  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds the lock, where it cannot see it
  // (no run-time check: std::mutex cannot tell).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}
  // The std::mutex, for code that needs one (MutexLock's waits).
  std::mutex& native() RETURN_CAPABILITY(this) { return mu_; }

 private:
  std::mutex mu_;
};

// Asks MutexLock to spin briefly before sleeping (util/spin_lock.h).
struct SpinFirst {};
inline constexpr SpinFirst kSpinFirst{};

// Holds a Mutex from construction to destruction, or between Unlock and
// Lock in between (the destructor unlocks only when held).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : lock_(mu.native()) {}
  MutexLock(Mutex& mu, SpinFirst) ACQUIRE(mu)
      : lock_(mu.native(), std::defer_lock) {
    RelockSpinning(lock_);
  }
  ~MutexLock() RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() { lock_.unlock(); }
  void Lock() ACQUIRE() { lock_.lock(); }
  void LockSpinning() ACQUIRE() { RelockSpinning(lock_); }

  // Runs `f` with the lock given up, then takes it back spinning first
  // (device_queue.cc, Note [Yield before parking]). To the analysis the
  // lock stays held, as across a wait, so a function handed a MutexLock&
  // (which the analysis cannot follow through a parameter) may use it; `f`
  // itself is analyzed without the lock, so it may not touch guarded state.
  template <typename F>
  void RunUnlockedThenLockSpinning(F&& f) {
    lock_.unlock();
    f();
    RelockSpinning(lock_);
  }

  // cv.wait(lock): returns holding the lock again (maybe spuriously woken).
  void Wait(std::condition_variable& cv) { cv.wait(lock_); }
  template <typename Rep, typename Period>
  std::cv_status WaitFor(std::condition_variable& cv,
                         const std::chrono::duration<Rep, Period>& d) {
    return cv.wait_for(lock_, d);
  }
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(
      std::condition_variable& cv,
      const std::chrono::time_point<Clock, Duration>& deadline) {
    return cv.wait_until(lock_, deadline);
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

class CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void lock() ACQUIRE() { mu_.lock(); }
  void unlock() RELEASE() { mu_.unlock(); }
  void lock_shared() ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds a SharedMutex exclusively for its scope.
class SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex& mu) ACQUIRE(mu) : mu_(mu) {
    mu_.lock();
  }
  ~WriterMutexLock() RELEASE() { mu_.unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds a SharedMutex shared (with other readers) for its scope.
class SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex& mu) ACQUIRE_SHARED(mu) : mu_(mu) {
    mu_.lock_shared();
  }
  ~ReaderMutexLock() RELEASE() { mu_.unlock_shared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_MUTEX_H_
