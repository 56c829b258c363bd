// Segment: the shared memory between the host and one hflow-worker: an
// anonymous memfd (no name in /dev/shm, so nothing outlives the last
// process that maps it, even after SIGKILL) mapped by both. Pages are
// touched only when written, so a large segment costs nothing unused.
//
// SegmentArena: one side's allocator over a part of the segment: the host
// allocates inputs in [0, host_bytes), the worker outputs in the rest.
// Blocks are sized exactly (RangeAllocator, highest fit); Take waits up to
// a timeout for a Give when the part is full.
//
// Thread-safety: a Segment is immutable after Create/Map; SegmentArena's
// methods may be called from any thread.
#ifndef HFLOW_WORKER_SEGMENT_H_
#define HFLOW_WORKER_SEGMENT_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "hflow/status.h"
#include "services/range_allocator.h"

namespace hflow {
namespace worker {

class Segment {
 public:
  // A new segment of `bytes`; `name` labels it in /proc/<pid>/maps.
  static Status Create(const std::string& name, uint64_t bytes,
                       std::shared_ptr<Segment>* out);
  // Maps a segment another process created (takes `fd`).
  static Status Map(int fd, uint64_t bytes, std::shared_ptr<Segment>* out);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  char* base() const { return base_; }
  uint64_t bytes() const { return bytes_; }
  int fd() const { return fd_; }
  // Whether [p, p + n) lies inside the segment.
  bool Contains(const void* p, uint64_t n) const {
    const char* c = static_cast<const char*>(p);
    return c >= base_ && n <= bytes_ && c - base_ <= int64_t(bytes_ - n);
  }
  uint64_t OffsetOf(const void* p) const {
    return uint64_t(static_cast<const char*>(p) - base_);
  }
  // Runs once, just before the segment is unmapped (its last holder
  // gone): to undo a registration. Not thread-safe: set it before sharing.
  void SetOnUnmap(std::function<void()> fn) { on_unmap_ = std::move(fn); }

 private:
  Segment() = default;
  int fd_ = -1;
  char* base_ = nullptr;
  uint64_t bytes_ = 0;
  std::function<void()> on_unmap_;
};

// Note [The call page]
// The first kCallPageBytes of a segment are neither side's to allocate:
// the worker writes there, per slot, which instance a chained call (Note
// [Chains in a worker] in worker_chain.cc) is running and on which
// transaction, so that the host, reading the page after the worker died,
// names the instance that was in Proc rather than the island's first.
// Plain words, written by the worker with atomic stores and read by the
// host once the worker is gone (or racily, for a report only).
inline constexpr uint64_t kCallPageBytes = 4096;
struct CallWord {
  uint32_t slot;  // the slot in a chained call (0: none)
  uint32_t reserved;
  uint64_t trans;
};
// Slot `slot`'s word in the page at `base`; null for a slot past the page.
inline CallWord* CallWordOf(char* base, uint32_t slot) {
  if (uint64_t(slot) >= kCallPageBytes / sizeof(CallWord)) return nullptr;
  return reinterpret_cast<CallWord*>(base) + slot;
}

// After the call page, when the host asks for one (Load.reply_ring_bytes),
// the ring the worker puts its Proc replies in (ShmRing: Note [Replies in
// the segment] in worker_server.cc); the host's part begins after it.
inline constexpr uint64_t kReplyRingBytes = 64 << 10;
// Each member's request ring, in the host's part (Note [Requests in the
// segment] in worker_server.cc): a Proc request is a few hundred bytes, so
// this holds a batch of 64.
inline constexpr uint64_t kRequestRingBytes = 16 << 10;
inline constexpr uint64_t kRingHeaderBytes = 256;  // ShmRing::kHeaderBytes
inline constexpr uint64_t ControlBytes(uint64_t ring_bytes) {
  return kCallPageBytes + (ring_bytes == 0 ? 0 : kRingHeaderBytes + ring_bytes);
}

class SegmentArena {
 public:
  // Allocates within [begin, end) of `segment`.
  SegmentArena(std::shared_ptr<Segment> segment, uint64_t begin, uint64_t end);

  // The segment offset of a free block of `bytes`, waiting up to `wait_ms`
  // (0: not at all) for one; kResourceExhausted naming the sizes
  // otherwise, at once when `bytes` exceeds the arena.
  Status Take(uint64_t bytes, int32_t wait_ms, uint64_t* offset);
  void Give(uint64_t offset, uint64_t bytes);
  // Ends every Take's wait with kCancelled (the peer is gone).
  void Cancel();

  const std::shared_ptr<Segment>& segment() const { return segment_; }
  uint64_t free_bytes() const;

 private:
  static uint64_t Rounded(uint64_t bytes) { return (bytes + 63) & ~63ull; }

  const std::shared_ptr<Segment> segment_;
  const uint64_t begin_;
  const uint64_t size_;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  services::RangeAllocator ranges_;
  bool cancelled_ = false;
};

// A block Taken from an arena, given back when its last holder goes: the
// hold of a host block (inputs) and of a worker block (outputs) alike.
// Made in place by make_shared, never copied (Note [One end per hold] in
// worker_data.cc).
struct ArenaBlock {
  ArenaBlock(std::shared_ptr<SegmentArena> a, uint64_t off, uint64_t n)
      : arena(std::move(a)), offset(off), bytes(n) {}
  ArenaBlock(const ArenaBlock&) = delete;
  ArenaBlock& operator=(const ArenaBlock&) = delete;
  ~ArenaBlock() { arena->Give(offset, bytes); }
  std::shared_ptr<SegmentArena> arena;
  uint64_t offset;
  uint64_t bytes;
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_SEGMENT_H_
