// LockSpinning: takes a std::mutex like std::unique_lock does, but tries a
// few times, spinning on the CPU, before it sleeps in the kernel.
//
// Note [Spin before sleeping]
// The executor's queues are locked for tens of nanoseconds at a time, but
// by two threads at a high rate (a producer pushing, a consumer popping).
// A plain std::mutex sleeps at once when it finds the lock taken: a futex
// wait here and a futex wake in the holder, a few microseconds together,
// for a lock that would have been free a few dozen nanoseconds later.
// Spinning briefly first (glibc's adaptive mutexes do the same) turns
// nearly all of those collisions into a short wait. The spin is bounded,
// so a holder that was preempted costs at most a few microseconds of spin
// before the usual sleep.
//
// Thread-safety: as std::unique_lock.
#ifndef HFLOW_UTIL_SPIN_LOCK_H_
#define HFLOW_UTIL_SPIN_LOCK_H_

#include <algorithm>
#include <mutex>

namespace hflow {
namespace util {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

constexpr int kLockSpins = 64;

// Locks `lock` (which holds `mu` unlocked), spinning first.
// A failed try_lock is a locked instruction that pulls the lock's line
// away from its holder, slowing the very section being waited for, so the
// pauses between tries double (up to kLockSpins in all).
inline void RelockSpinning(std::unique_lock<std::mutex>& lock) {
  for (int pauses = 1, spent = 0; spent < kLockSpins; pauses *= 2) {
    if (lock.try_lock()) return;
    pauses = std::min(pauses, kLockSpins - spent);
    for (int i = 0; i < pauses; ++i) CpuRelax();
    spent += pauses;
  }
  lock.lock();
}

inline std::unique_lock<std::mutex> LockSpinning(std::mutex& mu) {
  std::unique_lock<std::mutex> lock(mu, std::defer_lock);
  RelockSpinning(lock);
  return lock;
}

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_SPIN_LOCK_H_
