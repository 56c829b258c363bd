// SegmentArena: blocks of one part of a segment do not overlap and come
// back, a request larger than the part fails at once, a Give wakes a
// waiting Take, and Cancel (the other process is gone) ends the wait.
//
// Thread-safety: each test owns its arena; the wait test uses one helper
// thread.
#include "worker/segment.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace hflow {
namespace worker {
namespace {

TEST(SegmentArenaTest, BlocksDoNotOverlapAndComeBack) {
  std::shared_ptr<Segment> seg;
  ASSERT_TRUE(Segment::Create("arena-test", 1 << 16, &seg).ok());
  SegmentArena arena(seg, 4096, 8192);
  uint64_t a = 0, b = 0;
  ASSERT_TRUE(arena.Take(1000, 0, &a).ok());
  ASSERT_TRUE(arena.Take(1000, 0, &b).ok());
  EXPECT_GE(a, 4096u);
  EXPECT_GE(b, 4096u);
  EXPECT_LE(a + 1000, 8192u);
  EXPECT_TRUE(a + 1000 <= b || b + 1000 <= a);
  EXPECT_FALSE(arena.Take(8192, 0, &a).ok());  // larger than the arena
  arena.Give(a, 1000);
  arena.Give(b, 1000);
  EXPECT_EQ(arena.free_bytes(), 4096u);
}

TEST(SegmentArenaTest, AGiveWakesAWaitingTakeAndCancelEndsIt) {
  std::shared_ptr<Segment> seg;
  ASSERT_TRUE(Segment::Create("arena-wait", 8192, &seg).ok());
  SegmentArena arena(seg, 0, 4096);
  uint64_t all = 0;
  ASSERT_TRUE(arena.Take(4096, 0, &all).ok());
  uint64_t got = 0;
  EXPECT_EQ(arena.Take(64, 0, &got).code(), StatusCode::kResourceExhausted);
  std::thread giver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    arena.Give(all, 4096);
  });
  EXPECT_TRUE(arena.Take(64, 5000, &got).ok());
  giver.join();
  ASSERT_TRUE(arena.Take(4096 - 64, 0, &all).ok());
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    arena.Cancel();
  });
  EXPECT_EQ(arena.Take(64, 5000, &got).code(), StatusCode::kCancelled);
  canceller.join();
}

}  // namespace
}  // namespace worker
}  // namespace hflow
