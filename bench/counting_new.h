// Replaces the global operator new and delete with ones that count every
// heap allocation of the process, on every thread: the allocation rows
// (chain_memory.cc) and the allocation-free test (tests/alloc) read
// hflow::counting_new::Allocations() before and after a stream. The sized
// and aligned forms forward to these in libstdc++ unless replaced too.
// Include it in exactly one file of a program (replacement functions are
// defined here, not declared), and never in a sanitized build, whose
// runtime replaces them itself.
//
// Thread-safety: the count is atomic (relaxed: readers compare totals
// taken around work they waited for).
#ifndef HFLOW_BENCH_COUNTING_NEW_H_
#define HFLOW_BENCH_COUNTING_NEW_H_

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace hflow {
namespace counting_new {

inline std::atomic<uint64_t> g_allocations{0};

// operator new calls so far, every thread.
inline uint64_t Allocations() { return g_allocations.load(); }

}  // namespace counting_new
}  // namespace hflow

void* operator new(std::size_t n) {
  hflow::counting_new::g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

#endif  // HFLOW_BENCH_COUNTING_NEW_H_
