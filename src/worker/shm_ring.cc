// ShmRing (see shm_ring.h).
//
// Thread-safety: see shm_ring.h. The atomics live in the shared memory;
// lock-free 64- and 32-bit atomics are address-free, so both processes'
// operations on them are atomic with each other.
#include "worker/shm_ring.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <ctime>

namespace hflow {
namespace worker {

namespace {

constexpr uint64_t kLenBytes = 4;

uint64_t Padded(uint64_t n) { return (n + 7) & ~7ull; }

}  // namespace

// Head and tail on cache lines of their own: the two sides write one each.
struct ShmRing::Header {
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint64_t> tail;
  alignas(64) std::atomic<uint32_t> parked;
};
static_assert(sizeof(std::atomic<uint64_t>) == 8 &&
                  std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the ring's atomics must be lock-free to be shared");

ShmRing::ShmRing(char* at, uint64_t data_bytes)
    : h_(reinterpret_cast<Header*>(at)),
      data_(at + kHeaderBytes),
      mask_(data_bytes - 1) {
  static_assert(sizeof(Header) <= kHeaderBytes, "the header outgrew its room");
}

void ShmRing::CopyIn(uint64_t pos, const void* src, size_t n) {
  const uint64_t at = pos & mask_;
  const uint64_t first = std::min<uint64_t>(n, mask_ + 1 - at);
  std::memcpy(data_ + at, src, first);
  std::memcpy(data_, static_cast<const char*>(src) + first, n - first);
}

void ShmRing::CopyOut(uint64_t pos, void* dst, size_t n) const {
  const uint64_t at = pos & mask_;
  const uint64_t first = std::min<uint64_t>(n, mask_ + 1 - at);
  std::memcpy(dst, data_ + at, first);
  std::memcpy(static_cast<char*>(dst) + first, data_, n - first);
}

bool ShmRing::TryPush(const void* data, size_t size, uint64_t* end) {
  const uint64_t need = Padded(kLenBytes + size);
  const uint64_t head = h_->head.load(std::memory_order_relaxed);
  const uint64_t tail = h_->tail.load(std::memory_order_acquire);
  // The other process writes tail: one out of range (memory overwritten)
  // reads as full rather than as room past the ring.
  if (size > UINT32_MAX || head - tail > data_bytes() ||
      need > data_bytes() - (head - tail)) {
    return false;
  }
  const uint32_t len = static_cast<uint32_t>(size);
  CopyIn(head, &len, kLenBytes);
  CopyIn(head + kLenBytes, data, size);
  // Sequentially consistent against Park's store and Empty's load: either
  // the consumer sees this record before it waits, or TakeParked sees it
  // parked.
  h_->head.store(head + need, std::memory_order_seq_cst);
  if (end != nullptr) *end = head + need;
  return true;
}

bool ShmRing::Pop(std::string* out, Status* bad) {
  if (broken_) return false;
  const uint64_t tail = h_->tail.load(std::memory_order_relaxed);
  const uint64_t head = h_->head.load(std::memory_order_acquire);
  if (head == tail) return false;
  uint32_t len = 0;
  CopyOut(tail, &len, kLenBytes);
  const uint64_t need = Padded(kLenBytes + uint64_t(len));
  if (head - tail > data_bytes() || need > head - tail) {
    broken_ = true;
    *bad = Status::Internal("worker reply ring: a record of " +
                            std::to_string(len) + " bytes with only " +
                            std::to_string(head - tail) +
                            " published (the shared segment was overwritten)");
    return false;
  }
  out->resize(len);
  CopyOut(tail + kLenBytes, out->data(), len);
  h_->tail.store(tail + need, std::memory_order_release);
  return true;
}

bool ShmRing::Empty() const {
  return h_->head.load(std::memory_order_seq_cst) ==
         h_->tail.load(std::memory_order_relaxed);
}

void ShmRing::Park() { h_->parked.store(1, std::memory_order_seq_cst); }

void ShmRing::Unpark() { h_->parked.store(0, std::memory_order_relaxed); }

// The parked word is the futex: a waiter sleeps while it is 1, and
// TakeParked's exchange to 0 ends the sleep (Wake then wakes it). Not
// FUTEX_PRIVATE: the two sides may be two processes.
bool ShmRing::Wait(int timeout_ms) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t),
                "a futex word is 32 bits");
  timespec ts{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  const long rc =
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&h_->parked), FUTEX_WAIT,
              1, timeout_ms < 0 ? nullptr : &ts, nullptr, 0);
  return rc == 0 || errno != ETIMEDOUT;
}

void ShmRing::Wake() {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&h_->parked), FUTEX_WAKE,
          INT32_MAX, nullptr, nullptr, 0);
}

uint64_t ShmRing::tail() const {
  return h_->tail.load(std::memory_order_acquire);
}

bool ShmRing::TakeParked() {
  if (h_->parked.load(std::memory_order_seq_cst) == 0) return false;
  return h_->parked.exchange(0, std::memory_order_seq_cst) == 1;
}

}  // namespace worker
}  // namespace hflow
