// Unit tests of RangeAllocator (services/range_allocator.h): exact-size
// first-fit takes, and gives that merge with both neighbours so a pool
// given back piecewise is whole again.
#include "services/range_allocator.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace services
}  // namespace hflow
