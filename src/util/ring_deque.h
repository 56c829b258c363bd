// RingDeque<T>: a double-ended FIFO in one growable ring of slots, for
// queues that move a steady stream of items. std::deque allocates a node
// for every few hundred pushes and frees one as often on the other end, so
// a queue at a constant depth still allocates (issue 20: no allocation per
// message); the ring allocates only when it grows past the most it ever
// held, and never shrinks (clear() keeps the slots).
//
// Thread-safety: none; the owner locks (DeviceQueue holds it under mu_).
#ifndef HFLOW_UTIL_RING_DEQUE_H_
#define HFLOW_UTIL_RING_DEQUE_H_

#include <cstddef>
#include <utility>
#include <vector>

namespace hflow {
namespace util {

template <typename T>
class RingDeque {
 public:
  RingDeque() = default;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

  T& front() { return slots_[head_]; }
  const T& front() const { return slots_[head_]; }

  void push_back(T v) {
    if (size_ == slots_.size()) Grow();
    slots_[Index(size_)] = std::move(v);
    ++size_;
  }
  void push_front(T v) {
    if (size_ == slots_.size()) Grow();
    head_ = head_ == 0 ? slots_.size() - 1 : head_ - 1;
    slots_[head_] = std::move(v);
    ++size_;
  }
  // The slot is reset to T(), so what it held (an mbuf) goes now.
  void pop_front() {
    slots_[head_] = T();
    head_ = Index(1);
    --size_;
  }
  // Moves every item out, oldest first, into `out` (appended); the slots
  // stay for reuse.
  void DrainTo(std::vector<T>* out) {
    while (size_ > 0) {
      out->push_back(std::move(front()));
      pop_front();
    }
  }
  void clear() {
    while (size_ > 0) pop_front();
    head_ = 0;
  }

 private:
  size_t Index(size_t i) const {
    const size_t at = head_ + i;
    return at < slots_.size() ? at : at - slots_.size();
  }
  // Doubles the slots, moving the items to the front of the new ring.
  void Grow() {
    std::vector<T> bigger(slots_.empty() ? 8 : slots_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[Index(i)]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;
  size_t head_ = 0;  // slot of the front item
  size_t size_ = 0;
};

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_RING_DEQUE_H_
