// RingDeque: FIFO order across wrap-around and growth, push_front for a
// returned item, popped slots let go of what they held at once, and a ring
// at a steady depth never grows again.
#include "util/ring_deque.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace hflow {
namespace util {
namespace {

TEST(RingDequeTest, KeepsFifoOrderAcrossWrapAndGrowth) {
  RingDeque<int> q;
  int next_in = 0, next_out = 0;
  // Interleaved pushes and pops wrap the ring; bursts make it grow.
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < round % 13 + 1; ++i) q.push_back(next_in++);
    for (int i = 0; i < round % 7 + 1 && !q.empty(); ++i) {
      ASSERT_EQ(q.front(), next_out++);
      q.pop_front();
    }
  }
  while (!q.empty()) {
    ASSERT_EQ(q.front(), next_out++);
    q.pop_front();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(RingDequeTest, PushFrontComesOutFirst) {
  RingDeque<int> q;
  for (int i = 1; i <= 8; ++i) q.push_back(i);  // full: push_front grows
  q.push_front(0);
  std::vector<int> out;
  q.DrainTo(&out);
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_TRUE(q.empty());
}

TEST(RingDequeTest, APoppedSlotReleasesItsItem) {
  RingDeque<std::shared_ptr<int>> q;
  auto p = std::make_shared<int>(5);
  q.push_back(p);
  EXPECT_EQ(p.use_count(), 2);
  q.pop_front();
  EXPECT_EQ(p.use_count(), 1);
  q.push_back(p);
  q.clear();
  EXPECT_EQ(p.use_count(), 1);
}

TEST(RingDequeTest, ASteadyDepthNeverGrows) {
  RingDeque<int> q;
  for (int i = 0; i < 20; ++i) q.push_back(i);
  const size_t cap = q.capacity();
  for (int i = 0; i < 100000; ++i) {
    q.pop_front();
    q.push_back(i);
  }
  EXPECT_EQ(q.size(), 20u);
  EXPECT_EQ(q.capacity(), cap);
}

}  // namespace
}  // namespace util
}  // namespace hflow
