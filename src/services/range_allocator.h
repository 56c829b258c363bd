// RangeAllocator: the free byte ranges of one cache pool (memory_group.h),
// for blocks sized exactly rather than rounded to a power of two. First fit
// from the highest offset down (Note [Highest fit]); a block is carved from
// the top of its range, so taking from a range that stays non-empty changes
// no map key and allocates nothing; giving a block back merges it with its
// free neighbours.
//
// Thread-safety: none; the owning MemoryGroup holds its mutex around every
// call.
#ifndef HFLOW_SERVICES_RANGE_ALLOCATOR_H_
#define HFLOW_SERVICES_RANGE_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>

namespace hflow {
namespace services {

class RangeAllocator {
 public:
  static constexpr uint64_t kNone = ~uint64_t{0};

  // Everything in [0, size) is free.
  void Reset(uint64_t size);
  // The offset of `bytes` (> 0) taken from the top of the highest free range
  // that holds them, or kNone.
  uint64_t Take(uint64_t bytes);
  // Gives [offset, offset + bytes) back; it must have come from Take.
  void Give(uint64_t offset, uint64_t bytes);

  uint64_t free_bytes() const { return free_bytes_; }
  // The largest free range (for messages; walks every range).
  uint64_t Largest() const;
  size_t ranges() const { return free_.size(); }

 private:
  std::map<uint64_t, uint64_t> free_;  // offset -> bytes, never adjacent
  uint64_t free_bytes_ = 0;
};

}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_RANGE_ALLOCATOR_H_
