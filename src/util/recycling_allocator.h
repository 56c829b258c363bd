// RecyclingAllocator<T>: a standard allocator for std::allocate_shared whose
// one-object blocks go to a bounded per-thread free list when freed and are
// handed out again from it, so a steady stream of same-sized objects made
// and dropped on the same threads allocates nothing (issue 20: no
// allocation per message). Blocks are grouped by size and alignment, so
// every allocate_shared<X> of one X shares one list per thread.
//
// Note [Recycled blocks and their threads]
// A block freed on thread B joins B's list, whichever thread allocated it;
// the lists never share a block, so they need no lock. Messages often die
// on another thread than the one that made them (a hop's copy is made by
// one stage's executor and dropped by the next, a feed's mbuf by the
// fetcher), so one thread's list would only grow and another's stay
// empty: a full list (kRecycledPerThread blocks) hands a batch of
// kRecycledBatch to a depot shared by every thread, and an empty one takes
// a batch from it, one lock per batch. Beyond the depot's kDepotBatches
// frees go to the heap. A list gives its blocks back to the heap when its
// thread exits. Under
// AddressSanitizer and ThreadSanitizer the lists are bypassed: a recycled
// block would hide a use after free, and a block's heap history, from
// them.
//
// RecyclingArrayAllocator (below) serves small arrays from the same lists.
//
// Thread-safety: allocate and deallocate from any thread; each thread
// touches only its own list, and the depot has a mutex.
#ifndef HFLOW_UTIL_RECYCLING_ALLOCATOR_H_
#define HFLOW_UTIL_RECYCLING_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

#include "util/fast_tls.h"
#include "util/sanitizers.h"

namespace hflow {
namespace util {

inline constexpr uint32_t kRecycledPerThread = 256;
// Blocks a full thread list trades to its depot at a time, and how many
// such batches a depot keeps (per block size).
inline constexpr uint32_t kRecycledBatch = 64;
inline constexpr size_t kDepotBatches = 128;
static_assert(kRecycledBatch <= kRecycledPerThread, "a batch fits a list");

namespace recycling {

#if defined(HFLOW_ASAN) || defined(HFLOW_TSAN)
inline constexpr bool kEnabled = false;
#else
inline constexpr bool kEnabled = true;
#endif

// Tests switch the lists off to show that a test of the allocation-free
// path would catch their loss (tests/alloc): every allocation and free
// then goes to the heap (blocks already listed stay listed, unused).
inline std::atomic<bool> g_bypass{false};
inline void SetBypassForTesting(bool bypass) { g_bypass.store(bypass); }
inline bool Recycling() {
  return kEnabled && !g_bypass.load(std::memory_order_relaxed);
}

struct Block {
  Block* next;
};

// One thread's list of free blocks of kSize bytes aligned to kAlign, and
// the depot its threads trade full batches through. The list itself is
// plain thread-local data (no destructor, usable at any point of a
// thread's life); the drainer, made on the first push, frees the blocks at
// thread exit and marks the list closed.
template <size_t kSize, size_t kAlign>
struct FreeList {
  static thread_local Block* head HFLOW_FAST_TLS;
  static thread_local uint32_t count HFLOW_FAST_TLS;
  static thread_local bool closed HFLOW_FAST_TLS;

  // Frees the listed blocks and closes the list: later frees on this
  // thread go to the heap. Runs at thread exit (and in tests).
  static void Drain() {
    closed = true;
    FreeChain(head);
    head = nullptr;
    count = 0;
  }

  struct Drainer {
    ~Drainer() { Drain(); }
  };
  static thread_local Drainer drainer;

  static void* Pop() {
    if (head == nullptr && !TakeBatch()) return nullptr;
    Block* b = head;
    head = b->next;
    --count;
    return b;
  }
  static bool Push(void* p) {
    if (closed) return false;
    if (count >= kRecycledPerThread && !GiveBatch()) return false;
    (void)&drainer;  // registers the drain at this thread's exit
    Block* b = static_cast<Block*>(p);
    b->next = head;
    head = b;
    ++count;
    return true;
  }

  // Batches in the depot now (tests).
  static size_t DepotBatches() {
    std::lock_guard<std::mutex> lock(depot_mu);
    return depot_size;
  }

 private:
  static void FreeChain(Block* b) {
    while (b != nullptr) {
      Block* next = b->next;
      ::operator delete(b);
      b = next;
    }
  }
  // A full list hands kRecycledBatch blocks to the depot: false when the
  // depot is full too (the block then goes to the heap).
  static bool GiveBatch() {
    Block* first = head;
    Block* last = head;
    for (uint32_t i = 1; i < kRecycledBatch; ++i) last = last->next;
    {
      std::lock_guard<std::mutex> lock(depot_mu);
      if (depot_size == kDepotBatches) return false;
      head = last->next;
      last->next = nullptr;
      depot[depot_size++] = first;
    }
    count -= kRecycledBatch;
    return true;
  }
  // An empty list takes a batch from the depot: false when it has none.
  static bool TakeBatch() {
    if (closed) return false;
    {
      std::lock_guard<std::mutex> lock(depot_mu);
      if (depot_size == 0) return false;
      head = depot[--depot_size];
    }
    count = kRecycledBatch;
    return true;
  }

  // The depot: a fixed array of batch chains (each kRecycledBatch blocks),
  // so trading allocates nothing. Its blocks live as long as the process.
  static inline std::mutex depot_mu;
  static inline Block* depot[kDepotBatches] = {};
  static inline size_t depot_size = 0;
};

template <size_t kSize, size_t kAlign>
thread_local Block* FreeList<kSize, kAlign>::head HFLOW_FAST_TLS = nullptr;
template <size_t kSize, size_t kAlign>
thread_local uint32_t FreeList<kSize, kAlign>::count HFLOW_FAST_TLS = 0;
template <size_t kSize, size_t kAlign>
thread_local bool FreeList<kSize, kAlign>::closed HFLOW_FAST_TLS = false;
template <size_t kSize, size_t kAlign>
thread_local
    typename FreeList<kSize, kAlign>::Drainer FreeList<kSize, kAlign>::drainer;

}  // namespace recycling

// RecyclingArrayAllocator<T, kMaxN>: every request of up to kMaxN
// elements gets a block of kMaxN from the calling thread's list (the heap
// when it is empty), and goes back to the list when freed; larger requests
// go to the heap. With kMaxN 1 it is RecyclingAllocator (below); with more,
// it serves containers whose sizes are mostly small (a tensor's dims), an
// array of any small size reusing a block another size freed.
template <typename T, size_t kMaxN>
class RecyclingArrayAllocator {
 public:
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = RecyclingArrayAllocator<U, kMaxN>;
  };

  RecyclingArrayAllocator() noexcept = default;
  template <typename U>
  RecyclingArrayAllocator(  // NOLINT
      const RecyclingArrayAllocator<U, kMaxN>&) noexcept {}

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) {
      throw std::bad_array_new_length();
    }
    if (n > kMaxN) return static_cast<T*>(::operator new(n * sizeof(T)));
    if (recycling::Recycling()) {
      if (void* p = List::Pop()) return static_cast<T*>(p);
    }
    return static_cast<T*>(::operator new(kSize));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n <= kMaxN && recycling::Recycling() && List::Push(p)) return;
    ::operator delete(p);
  }

  template <typename U>
  bool operator==(const RecyclingArrayAllocator<U, kMaxN>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const RecyclingArrayAllocator<U, kMaxN>&) const noexcept {
    return false;
  }

 private:
  static_assert(kMaxN > 0, "RecyclingArrayAllocator needs kMaxN > 0");
  static constexpr size_t kAlign = alignof(T) > alignof(recycling::Block)
                                       ? alignof(T)
                                       : alignof(recycling::Block);
  // A block is at least a link's size, so that it can be listed.
  static constexpr size_t kSize = kMaxN * sizeof(T) > sizeof(recycling::Block)
                                      ? kMaxN * sizeof(T)
                                      : sizeof(recycling::Block);
  static_assert(kAlign <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "RecyclingArrayAllocator serves default-aligned types");

 public:
  using List = recycling::FreeList<kSize, kAlign>;
};

// The allocator for std::allocate_shared: one object (and its count) per
// block, recycled.
template <typename T>
using RecyclingAllocator = RecyclingArrayAllocator<T, 1>;

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_RECYCLING_ALLOCATOR_H_
