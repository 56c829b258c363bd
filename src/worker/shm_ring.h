// ShmRing: a ring of byte records in memory two processes share (a
// worker's segment): one producer side, one consumer side, no lock across
// the processes. The worker puts its Proc replies in one (Note [Replies
// in the segment] in worker_server.cc); the host reads them, even after
// the worker died, since the memory is the host's too.
//
// A record is a 4-byte length and its bytes, 8-byte aligned, wrapping at
// the end. `head` (bytes produced) and `tail` (bytes consumed) only grow;
// the producer publishes a record by storing head after its bytes, so a
// producer that dies halfway leaves nothing half-read. The consumer parks
// before it waits elsewhere (a socket), and the producer that finds it
// parked rings it (TakeParked): one wake-up per wait, none while the
// consumer is busy draining.
//
// Thread-safety: one producer thread at a time (callers with several
// serialise TryPush themselves) and one consumer thread at a time; Park,
// Unpark and TakeParked from either side.
#ifndef HFLOW_WORKER_SHM_RING_H_
#define HFLOW_WORKER_SHM_RING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "hflow/status.h"
#include "worker/segment.h"

namespace hflow {
namespace worker {

class ShmRing {
 public:
  // The header's bytes, before the data.
  static constexpr uint64_t kHeaderBytes = kRingHeaderBytes;
  // Over [at, at + kHeaderBytes + data_bytes) of shared memory, zeroed
  // when created (a new segment is); `data_bytes` a power of two, at
  // least 64. `at` 64-byte aligned.
  ShmRing(char* at, uint64_t data_bytes);

  // Appends one record; false when it does not fit now (the caller sends
  // it another way). `*end` (may be null): the position just past it,
  // which tail() reaches once the consumer has taken it.
  bool TryPush(const void* data, size_t size, uint64_t* end = nullptr);
  // Takes the oldest record; false when there is none. A record that
  // cannot be (its length past the ring: the memory was overwritten)
  // sets `*bad` and ends the reading for good.
  bool Pop(std::string* out, Status* bad);
  bool Empty() const;

  // The consumer, before it waits: from now a producer rings it.
  void Park();
  void Unpark();
  // The producer, after a push: whether it must ring the consumer (it was
  // parked; it is not any more).
  bool TakeParked();
  // For a consumer that waits on the ring itself (not on a socket): sleeps
  // while parked (futex, shared across processes), up to `timeout_ms`
  // (-1: no limit); false when the time ran out. Wake: the producer's
  // ring after TakeParked.
  bool Wait(int timeout_ms);
  void Wake();
  // Bytes taken by the consumer so far.
  uint64_t tail() const;

  uint64_t data_bytes() const { return mask_ + 1; }

 private:
  struct Header;
  void CopyIn(uint64_t pos, const void* src, size_t n);
  void CopyOut(uint64_t pos, void* dst, size_t n) const;

  Header* h_;
  char* data_;
  uint64_t mask_;
  bool broken_ = false;  // the consumer's: a bad record was read
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_SHM_RING_H_
