// RecyclingAllocator<T>: a standard allocator for std::allocate_shared whose
// one-object blocks go to a bounded per-thread free list when freed and are
// handed out again from it, so a steady stream of same-sized objects made
// and dropped on the same threads allocates nothing (issue 20: no
// allocation per message). Blocks are grouped by size and alignment, so
// every allocate_shared<X> of one X shares one list per thread.
//
// Note [Recycled blocks and their threads]
// A block freed on thread B joins B's list, whichever thread allocated it;
// the lists never share a block, so they need no lock. Each list keeps at
// most kRecycledPerThread blocks (beyond that, frees go to the heap) and
// gives them all back to the heap when its thread exits. Under
// AddressSanitizer and ThreadSanitizer the lists are bypassed: a recycled
// block would hide a use after free, and a block's heap history, from
// them.
//
// Thread-safety: allocate and deallocate from any thread; each thread
// touches only its own list.
#ifndef HFLOW_UTIL_RECYCLING_ALLOCATOR_H_
#define HFLOW_UTIL_RECYCLING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <new>

namespace hflow {
namespace util {

inline constexpr uint32_t kRecycledPerThread = 1024;

namespace recycling {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kEnabled = false;
#else
inline constexpr bool kEnabled = true;
#endif

struct Block {
  Block* next;
};

// One thread's list of free blocks of kSize bytes aligned to kAlign. The
// list itself is plain thread-local data (no destructor, usable at any
// point of a thread's life); the drainer, made on the first push, frees
// the blocks at thread exit and marks the list closed.
template <size_t kSize, size_t kAlign>
struct FreeList {
  static thread_local Block* head;
  static thread_local uint32_t count;
  static thread_local bool closed;

  // Frees the listed blocks and closes the list: later frees on this
  // thread go to the heap. Runs at thread exit (and in tests).
  static void Drain() {
    closed = true;
    while (head != nullptr) {
      Block* b = head;
      head = b->next;
      ::operator delete(b);
    }
    count = 0;
  }

  struct Drainer {
    ~Drainer() { Drain(); }
  };
  static thread_local Drainer drainer;

  static void* Pop() {
    Block* b = head;
    if (b == nullptr) return nullptr;
    head = b->next;
    --count;
    return b;
  }
  static bool Push(void* p) {
    if (closed || count >= kRecycledPerThread) return false;
    (void)&drainer;  // registers the drain at this thread's exit
    Block* b = static_cast<Block*>(p);
    b->next = head;
    head = b;
    ++count;
    return true;
  }
};

template <size_t kSize, size_t kAlign>
thread_local Block* FreeList<kSize, kAlign>::head = nullptr;
template <size_t kSize, size_t kAlign>
thread_local uint32_t FreeList<kSize, kAlign>::count = 0;
template <size_t kSize, size_t kAlign>
thread_local bool FreeList<kSize, kAlign>::closed = false;
template <size_t kSize, size_t kAlign>
thread_local
    typename FreeList<kSize, kAlign>::Drainer FreeList<kSize, kAlign>::drainer;

}  // namespace recycling

template <typename T>
class RecyclingAllocator {
 public:
  using value_type = T;

  RecyclingAllocator() noexcept = default;
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>&) noexcept {}  // NOLINT

  T* allocate(size_t n) {
    if (n > static_cast<size_t>(-1) / sizeof(T)) {
      throw std::bad_array_new_length();
    }
    if (recycling::kEnabled && n == 1) {
      if (void* p = List::Pop()) return static_cast<T*>(p);
    }
    // A single block is at least a link's size, so that it can be listed.
    return static_cast<T*>(::operator new(n == 1 ? kSize : n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (recycling::kEnabled && n == 1 && List::Push(p)) return;
    ::operator delete(p);
  }

  template <typename U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const RecyclingAllocator<U>&) const noexcept {
    return false;
  }

 private:
  // Blocks hold a free-list link while free.
  static constexpr size_t kAlign = alignof(T) > alignof(recycling::Block)
                                       ? alignof(T)
                                       : alignof(recycling::Block);
  static constexpr size_t kSize = sizeof(T) > sizeof(recycling::Block)
                                      ? sizeof(T)
                                      : sizeof(recycling::Block);
  static_assert(kAlign <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                "RecyclingAllocator serves default-aligned types");

 public:
  // The calling thread's list for T's blocks (tests look at its count).
  using List = recycling::FreeList<kSize, kAlign>;
};

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_RECYCLING_ALLOCATOR_H_
