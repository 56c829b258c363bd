// Unit tests of RangeAllocator (services/range_allocator.h): exact-size
// takes, highest fit first (a block given back is the next one taken, so a
// pool in steady use stays in a warm cluster), and gives that merge with
// both neighbours so a pool given back piecewise is whole again.
#include "services/range_allocator.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace hflow {
namespace services {
namespace {

TEST(RangeAllocatorTest, TakesExactSizesUntilFull) {
  RangeAllocator r;
  r.Reset(10 << 20);
  const uint64_t mib = 1 << 20, one = mib + 4096;  // 1 MiB plus slack
  int taken = 0;
  while (r.Take(one) != RangeAllocator::kNone) ++taken;
  EXPECT_EQ(taken, 9) << "a power-of-two rounding would fit 5";
  EXPECT_EQ(r.free_bytes(), (10 << 20) - 9 * one);
  EXPECT_EQ(r.Take(0), RangeAllocator::kNone);
}

TEST(RangeAllocatorTest, GivesMergeWithBothNeighbours) {
  RangeAllocator r;
  r.Reset(3000);
  const uint64_t a = r.Take(1000), b = r.Take(1000), c = r.Take(1000);
  ASSERT_NE(c, RangeAllocator::kNone);
  EXPECT_EQ(r.Take(1), RangeAllocator::kNone);
  r.Give(a, 1000);
  r.Give(c, 1000);
  EXPECT_EQ(r.ranges(), 2u);
  EXPECT_EQ(r.Take(2000), RangeAllocator::kNone) << "not contiguous yet";
  r.Give(b, 1000);
  EXPECT_EQ(r.ranges(), 1u);
  EXPECT_EQ(r.Largest(), 3000u);
  EXPECT_EQ(r.Take(3000), 0u);
}

// Note [Highest fit]: a stream with messages always in flight takes and
// gives blocks in turn; it must keep reusing the same few blocks, never
// walk down the pool (with the old lowest-offset first fit, each take
// carved a new block below the last, and this test fails).
TEST(RangeAllocatorTest, SteadyStreamReusesTheSameBlocks) {
  RangeAllocator r;
  const uint64_t mib = 1 << 20;
  r.Reset(256 * mib);
  std::vector<uint64_t> in_flight;
  std::set<uint64_t> seen;
  for (int i = 0; i < 4; ++i) in_flight.push_back(r.Take(mib));
  for (int i = 0; i < 1000; ++i) {
    r.Give(in_flight.front(), mib);  // the oldest message is done
    in_flight.erase(in_flight.begin());
    const uint64_t b = r.Take(mib);
    ASSERT_NE(b, RangeAllocator::kNone);
    in_flight.push_back(b);
    seen.insert(b);
  }
  EXPECT_LE(seen.size(), 5u) << "the stream walked through the pool";
  for (uint64_t b : seen) EXPECT_GE(b, 251 * mib) << "not at the top";
}

TEST(RangeAllocatorTest, BlockGivenBackIsTakenNext) {
  RangeAllocator r;
  r.Reset(10000);
  const uint64_t a = r.Take(1000), b = r.Take(1000);
  ASSERT_NE(b, RangeAllocator::kNone);
  r.Give(a, 1000);
  EXPECT_EQ(r.Take(1000), a);
  // A hole too small for the take is skipped, and the range below serves.
  r.Give(a, 1000);
  const uint64_t c = r.Take(2000);
  EXPECT_EQ(c + 2000, b) << "carved from the top of the range below b";
  EXPECT_EQ(r.Take(1000), a);
}

}  // namespace
}  // namespace services
}  // namespace hflow
