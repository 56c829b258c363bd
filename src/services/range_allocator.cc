// RangeAllocator (see range_allocator.h).
// Thread-safety: none (the caller's lock).
#include "services/range_allocator.h"

#include <algorithm>
#include <iterator>

namespace hflow {
namespace services {

void RangeAllocator::Reset(uint64_t size) {
  free_bytes_ = size;
  if (size == 0 || free_.empty()) {
    free_.clear();
    if (size > 0) free_.emplace(0, size);
    return;
  }
  // A cache that empties starts afresh often (every few messages when a
  // device holds few at a time): its first range's node is reused, so that
  // allocates nothing.
  auto node = free_.extract(free_.begin());
  free_.clear();
  node.key() = 0;
  node.mapped() = size;
  free_.insert(std::move(node));
}

// Note [Highest fit]
// The search starts at the highest range. Blocks are carved from the top of
// a range, so a pool in steady use keeps its blocks in a cluster at the top:
// a block given back there is the first one found again, warm in cache and
// with its pages committed. The first fit by lowest offset this replaced
// took each new block from the top of the big range below the cluster, and
// left the freed blocks above it unused until the pool emptied. A pool that
// always held a message in flight so walked down all of its memory: every
// copy wrote to cold, never-touched pages. On the 1 MiB hop row that was
// about 25 page faults a message, and the copies ran at half their speed.
uint64_t RangeAllocator::Take(uint64_t bytes) {
  if (bytes == 0 || bytes > free_bytes_) return kNone;
  for (auto rit = free_.rbegin(); rit != free_.rend(); ++rit) {
    if (rit->second < bytes) continue;
    rit->second -= bytes;
    const uint64_t offset = rit->first + rit->second;
    if (rit->second == 0) free_.erase(std::next(rit).base());
    free_bytes_ -= bytes;
    return offset;
  }
  return kNone;
}

void RangeAllocator::Give(uint64_t offset, uint64_t bytes) {
  if (bytes == 0) return;
  free_bytes_ += bytes;
  auto next = free_.lower_bound(offset);
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += bytes;
      if (next != free_.end() && prev->first + prev->second == next->first) {
        prev->second += next->second;
        free_.erase(next);
      }
      return;
    }
  }
  if (next != free_.end() && offset + bytes == next->first) {
    const uint64_t merged = bytes + next->second;
    free_.erase(next);
    free_.emplace(offset, merged);
    return;
  }
  free_.emplace(offset, bytes);
}

uint64_t RangeAllocator::Largest() const {
  uint64_t best = 0;
  for (const auto& r : free_) best = std::max(best, r.second);
  return best;
}

}  // namespace services
}  // namespace hflow
