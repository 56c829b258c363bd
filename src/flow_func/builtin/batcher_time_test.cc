// Tests of TimeBatcher: windows closing when the span reaches the window,
// concatenation along the batch dim, messages crossing the window or out of
// order, SEG/EOS closing short windows, drop_remainder, segment mode,
// timeouts on wall time, Flush and the rejected options. Time is passed in
// explicitly, so nothing sleeps. Single-threaded, like the class.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "flow_func/builtin/batcher.h"
#include "flow_func/builtin/batcher_test_util.h"

namespace hflow {
namespace flow_func {
namespace {

using batcher_test::Chunk;
using batcher_test::Eos;
using batcher_test::ExpectInvalid;
using batcher_test::I32s;
using batcher_test::kI32;
using batcher_test::Msg;
using batcher_test::Shape;
using batcher_test::Time;
using batcher_test::TimeOpts;
using batcher_test::Vals;

// ---------------------------------------------------------------- TimeBatch

TEST(TimeBatcherTest, ClosesWhenSpanReachesWindow) {
  auto b = Time(TimeOpts(30));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Chunk(0), 0, &out).ok());
  ASSERT_TRUE(b->Push(Chunk(10), 0, &out).ok());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(b->Push(Chunk(20), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{3, 2}));
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{0, 1, 10, 11, 20, 21}));
  EXPECT_EQ(out[0].start_time, 0u);
  EXPECT_EQ(out[0].end_time, 30u);
  EXPECT_EQ(out[0].trans_id, 20u);
  ASSERT_TRUE(b->Push(Chunk(30), 0, &out).ok());  // a new window
  EXPECT_EQ(b->pending(), 1u);
}

TEST(TimeBatcherTest, ConcatenatesAlongBatchDim) {
  auto b = Time(TimeOpts(20).Dim(1));
  std::vector<BatchItem> out;
  ASSERT_TRUE(
      b->Push(Msg<int32_t>(kI32, {2, 1}, {1, 2}, 0, 0, 5), 0, &out).ok());
  ASSERT_TRUE(
      b->Push(Msg<int32_t>(kI32, {2, 2}, {3, 4, 5, 6}, 1, 5, 20), 0, &out)
          .ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{2, 3}));
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{1, 3, 4, 2, 5, 6}));
}

TEST(TimeBatcherTest, RejectsMessagesCrossingTheWindowOrOutOfOrder) {
  auto b = Time(TimeOpts(25).Input(1));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Chunk(0), 0, &out).ok());
  ASSERT_TRUE(b->Push(Chunk(10), 0, &out).ok());
  ExpectInvalid(b->Push(Chunk(20), 0, &out),
                "TimeBatch input 1: messages from 0 to 30 span 30 ms, more "
                "than time_window_ms=25");
  EXPECT_EQ(b->pending(), 0u);
  ASSERT_TRUE(b->Push(Chunk(10), 0, &out).ok());
  ExpectInvalid(b->Push(Chunk(15), 0, &out),
                "starts at 15 before the previous message ended at 20");
  ExpectInvalid(b->Push(Msg<int32_t>(kI32, {1}, {1}, 0, 9, 8), 0, &out),
                "start_time 9 is after its end_time 8");
  ASSERT_TRUE(b->Push(Chunk(0), 0, &out).ok());
  ExpectInvalid(b->Push(Msg<int32_t>(kI32, {3}, {1, 2, 3}, 0, 10, 20), 0, &out),
                "expected shape [2], found [3]");
  EXPECT_TRUE(out.empty());
}

TEST(TimeBatcherTest, SegAndEosCloseShortWindows) {
  auto b = Time(TimeOpts(30));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Chunk(0), 0, &out).ok());
  ASSERT_TRUE(b->Push(Chunk(10, kBatchFlagSeg), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{2, 2}));
  EXPECT_EQ(out[0].flags, kBatchFlagSeg);
  ASSERT_TRUE(b->Push(Chunk(40, kBatchFlagEos), 0, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].shape, (Shape{1, 2}));
  EXPECT_EQ(out[1].flags, kBatchFlagEos);
}

TEST(TimeBatcherTest, DropRemainderDropsShortWindowsButPassesEos) {
  auto b = Time(TimeOpts(30).Drop());
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Chunk(0, kBatchFlagSeg), 0, &out).ok());
  EXPECT_TRUE(out.empty());
  for (int t : {10, 20, 30}) ASSERT_TRUE(b->Push(Chunk(t), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);  // a full window is kept
  ASSERT_TRUE(b->Push(Chunk(40, kBatchFlagEos), 0, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(IsEmptyMessage(out[1]));
  EXPECT_EQ(out[1].flags, kBatchFlagEos);
  EXPECT_EQ(out[1].trans_id, 40u);
}

TEST(TimeBatcherTest, SegmentModeIgnoresWindowAndDrop) {
  auto b = Time(TimeOpts(-1).Drop());
  std::vector<BatchItem> out;
  for (int t : {0, 10, 20, 30, 40})
    ASSERT_TRUE(b->Push(Chunk(t), 0, &out).ok());
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(b->Push(Chunk(100, kBatchFlagSeg), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{6, 2}));
  EXPECT_EQ(out[0].end_time, 110u);
}

TEST(TimeBatcherTest, EmptyEosClosesOrPassesOn) {
  auto b = Time(TimeOpts(30));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Eos(), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(IsEmptyMessage(out[0]));
  ASSERT_TRUE(b->Push(Chunk(0), 0, &out).ok());
  ASSERT_TRUE(b->Push(Eos(), 0, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].shape, (Shape{1, 2}));
  EXPECT_EQ(out[1].flags, kBatchFlagEos);
  BatchItem empty;
  ExpectInvalid(b->Push(empty, 0, &out), "no tensor and no EOS");
}

TEST(TimeBatcherTest, TimeoutClosesOnWallTime) {
  auto b = Time(TimeOpts(30).Timeout(50));
  std::vector<BatchItem> out;
  EXPECT_EQ(b->NextDeadline(), std::nullopt);
  ASSERT_TRUE(b->Push(Chunk(0), 1000, &out).ok());
  ASSERT_TRUE(b->Push(Chunk(10), 1040, &out).ok());
  EXPECT_EQ(b->NextDeadline(), 1050u);
  b->OnTick(1049, &out);
  EXPECT_TRUE(out.empty());
  b->OnTick(1050, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{2, 2}));
  EXPECT_EQ(b->NextDeadline(), std::nullopt);

  auto d = Time(TimeOpts(30).Timeout(5).Drop());
  ASSERT_TRUE(d->Push(Chunk(0), 0, &out).ok());
  d->OnTick(5, &out);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(d->pending(), 0u);
}

TEST(TimeBatcherTest, FlushSendsOrDropsRemainder) {
  std::vector<BatchItem> out;
  auto b = Time(TimeOpts(30));
  ASSERT_TRUE(b->Push(Chunk(0), 0, &out).ok());
  b->Flush(&out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flags, 0u);
  auto d = Time(TimeOpts(30).Drop());
  ASSERT_TRUE(d->Push(Chunk(0), 0, &out).ok());
  d->Flush(&out);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(d->pending(), 0u);
}

TEST(TimeBatcherTest, RejectsBadOptions) {
  std::unique_ptr<TimeBatcher> b;
  ExpectInvalid(TimeBatcher::Create(TimeOpts(0), &b), "time_window_ms=0");
  ExpectInvalid(TimeBatcher::Create(TimeOpts(-2), &b), "time_window_ms=-2");
  ExpectInvalid(TimeBatcher::Create(TimeOpts(5).Timeout(-1), &b),
                "timeout_ms=-1");
  ExpectInvalid(TimeBatcher::Create(TimeOpts(5).Dim(-3), &b), "batch_dim=-3");
  ExpectInvalid(TimeBatcher::Create(TimeOpts(5).Padding(), &b),
                "padding=true is not supported");
  EXPECT_EQ(b, nullptr);
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
