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

uint64_t RangeAllocator::Take(uint64_t bytes) {
  if (bytes == 0 || bytes > free_bytes_) return kNone;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < bytes) continue;
    it->second -= bytes;
    const uint64_t offset = it->first + it->second;
    if (it->second == 0) free_.erase(it);
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
