// Tests of CountBatcher: batch contents for several dtypes and batch dims,
// sliding windows, timeouts with and without padding, drop_remainder, EOS
// handling, deadlines and every rejection; and the element sizes of each
// dtype. Time is passed in explicitly, so nothing sleeps. Single-threaded,
// like the class. TimeBatcher: batcher_time_test.cc.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "flow_func/builtin/batcher.h"
#include "flow_func/builtin/batcher_test_util.h"

namespace hflow {
namespace flow_func {
namespace {

using batcher_test::Count;
using batcher_test::CountOpts;
using batcher_test::Eos;
using batcher_test::ExpectInvalid;
using batcher_test::I32s;
using batcher_test::kF32;
using batcher_test::kI32;
using batcher_test::kI64;
using batcher_test::kU8;
using batcher_test::Msg;
using batcher_test::Num;
using batcher_test::PushRange;
using batcher_test::Shape;
using batcher_test::Vals;

// --------------------------------------------------------------- CountBatch

TEST(CountBatcherTest, StacksInt32AndSetsFlowInfo) {
  auto b = Count(CountOpts(3));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Num(1), 0, &out).ok());
  ASSERT_TRUE(b->Push(Num(2), 0, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(b->pending(), 2u);
  EXPECT_EQ(b->NextDeadline(), std::nullopt);  // timeout 0: wait forever
  ASSERT_TRUE(b->Push(Num(3), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{3, 1}));
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{1, 2, 3}));
  EXPECT_EQ(out[0].trans_id, 3u);     // the last message's
  EXPECT_EQ(out[0].start_time, 10u);  // the first message's start
  EXPECT_EQ(out[0].end_time, 35u);    // the last message's end
  EXPECT_EQ(b->pending(), 0u);
}

TEST(CountBatcherTest, StacksFloatUint8Int64MultiDim) {
  std::vector<BatchItem> out;
  auto f = Count(CountOpts(2));
  ASSERT_TRUE(f->Push(Msg<float>(kF32, {2, 2}, {1, 2, 3, 4}), 0, &out).ok());
  ASSERT_TRUE(f->Push(Msg<float>(kF32, {2, 2}, {5, 6, 7, 8}), 0, &out).ok());
  auto u = Count(CountOpts(2));
  ASSERT_TRUE(u->Push(Msg<uint8_t>(kU8, {3}, {1, 2, 3}), 0, &out).ok());
  ASSERT_TRUE(u->Push(Msg<uint8_t>(kU8, {3}, {4, 5, 6}), 0, &out).ok());
  auto l = Count(CountOpts(2));
  ASSERT_TRUE(l->Push(Msg<int64_t>(kI64, {}, {1LL << 40}), 0, &out).ok());
  ASSERT_TRUE(l->Push(Msg<int64_t>(kI64, {}, {-7}), 0, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape, (Shape{2, 2, 2}));
  EXPECT_EQ(out[0].dtype, kF32);
  EXPECT_EQ(Vals<float>(out[0]), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(out[1].shape, (Shape{2, 3}));
  EXPECT_EQ(Vals<uint8_t>(out[1]), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(out[2].shape, (Shape{2}));  // scalars stack into a vector
  EXPECT_EQ(Vals<int64_t>(out[2]), (std::vector<int64_t>{1LL << 40, -7}));
}

TEST(CountBatcherTest, ConcatenatesAlongDim0) {
  auto b = Count(CountOpts(2).Dim(0));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Msg<int32_t>(kI32, {1, 3}, {1, 2, 3}), 0, &out).ok());
  ASSERT_TRUE(
      b->Push(Msg<int32_t>(kI32, {2, 3}, {4, 5, 6, 7, 8, 9}), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{3, 3}));
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(CountBatcherTest, ConcatenatesAlongDim1InterleavingRows) {
  auto b = Count(CountOpts(2).Dim(1));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Msg<int32_t>(kI32, {2, 1}, {1, 2}), 0, &out).ok());
  ASSERT_TRUE(b->Push(Msg<int32_t>(kI32, {2, 2}, {3, 4, 5, 6}), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{2, 3}));
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{1, 3, 4, 2, 5, 6}));
}

TEST(CountBatcherTest, SlidingStrideOne) {
  auto b = Count(CountOpts(3).Stride(1));
  EXPECT_EQ(PushRange(b.get(), 1, 6),
            (std::vector<I32s>{{1, 2, 3}, {2, 3, 4}, {3, 4, 5}, {4, 5, 6}}));
  EXPECT_EQ(b->pending(), 2u);  // the overlap [5, 6]
  std::vector<BatchItem> out;
  b->Flush(&out);  // nothing fresh: the overlap is not sent again
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(b->pending(), 0u);
}

TEST(CountBatcherTest, SlidingStrideTwoFlushesFreshRemainder) {
  auto b = Count(CountOpts(3).Stride(2));
  EXPECT_EQ(PushRange(b.get(), 1, 6),
            (std::vector<I32s>{{1, 2, 3}, {3, 4, 5}}));
  std::vector<BatchItem> out;
  b->Flush(&out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{5, 6}));
  EXPECT_EQ(out[0].shape, (Shape{2, 1}));
}

TEST(CountBatcherTest, StrideZeroOrBatchSizeIsDisjoint) {
  for (int64_t stride : {0, 2}) {
    auto b = Count(CountOpts(2).Stride(stride));
    EXPECT_EQ(PushRange(b.get(), 1, 5), (std::vector<I32s>{{1, 2}, {3, 4}}));
    EXPECT_EQ(b->pending(), 1u);
  }
}

TEST(CountBatcherTest, TimeoutSendsShortBatch) {
  auto b = Count(CountOpts(4).Timeout(10));
  std::vector<BatchItem> out;
  EXPECT_EQ(b->NextDeadline(), std::nullopt);
  ASSERT_TRUE(b->Push(Num(1), 100, &out).ok());
  ASSERT_TRUE(b->Push(Num(2), 105, &out).ok());
  EXPECT_EQ(b->NextDeadline(), 110u);  // from the oldest message
  b->OnTick(109, &out);
  EXPECT_TRUE(out.empty());
  b->OnTick(110, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{2, 1}));
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{1, 2}));
  EXPECT_EQ(b->pending(), 0u);
  EXPECT_EQ(b->NextDeadline(), std::nullopt);
  ASSERT_TRUE(b->Push(Num(3), 200, &out).ok());
  EXPECT_EQ(b->NextDeadline(), 210u);  // the clock restarts
}

TEST(CountBatcherTest, TimeoutWithPaddingFillsZeros) {
  auto b = Count(CountOpts(3).Timeout(5).Padding());
  std::vector<BatchItem> out;
  ASSERT_TRUE(
      b->Push(Msg<float>(kF32, {2}, {1.5f, 2.5f}, 7, 1, 2), 0, &out).ok());
  b->OnTick(5, &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (Shape{3, 2}));
  EXPECT_EQ(Vals<float>(out[0]), (std::vector<float>{1.5f, 2.5f, 0, 0, 0, 0}));
  EXPECT_EQ(out[0].trans_id, 7u);  // padding carries no flow info
  EXPECT_EQ(out[0].end_time, 2u);
}

TEST(CountBatcherTest, TimeoutWithDropRemainderDrops) {
  auto b = Count(CountOpts(3).Timeout(5).Drop());
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Num(1), 0, &out).ok());
  b->OnTick(100, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(b->pending(), 0u);
  EXPECT_EQ(b->NextDeadline(), std::nullopt);
}

TEST(CountBatcherTest, SlidingDeadlineIgnoresOverlap) {
  auto b = Count(CountOpts(3).Stride(2).Timeout(10));
  std::vector<BatchItem> out;
  for (int v = 1; v <= 3; ++v) ASSERT_TRUE(b->Push(Num(v), 0, &out).ok());
  EXPECT_EQ(b->pending(), 1u);  // [3] already sent
  EXPECT_EQ(b->NextDeadline(), std::nullopt);
  b->OnTick(1000, &out);
  EXPECT_EQ(out.size(), 1u);  // not resent
  ASSERT_TRUE(b->Push(Num(4), 50, &out).ok());
  EXPECT_EQ(b->NextDeadline(), 60u);
  b->OnTick(60, &out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Vals<int32_t>(out[1]), (I32s{3, 4}));
  EXPECT_EQ(out[1].start_time, 30u);  // the overlap's start
  EXPECT_EQ(b->pending(), 0u);        // stride 2 dropped both
}

TEST(CountBatcherTest, EosFlushesShortBatchWithFlag) {
  auto b = Count(CountOpts(3));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Num(1), 0, &out).ok());
  ASSERT_TRUE(b->Push(Num(2, kBatchFlagEos), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{1, 2}));
  EXPECT_EQ(out[0].flags, kBatchFlagEos);
  EXPECT_EQ(b->pending(), 0u);
}

TEST(CountBatcherTest, EosThatFillsBatchSendsOneMessage) {
  auto b = Count(CountOpts(2));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Num(1), 0, &out).ok());
  ASSERT_TRUE(b->Push(Num(2, kBatchFlagEos), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flags, kBatchFlagEos);
}

TEST(CountBatcherTest, EmptyEosPadsOrDropsOrPassesOn) {
  std::vector<BatchItem> out;
  auto idle = Count(CountOpts(2));
  ASSERT_TRUE(idle->Push(Eos(), 0, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(IsEmptyMessage(out[0]));
  EXPECT_EQ(out[0].flags, kBatchFlagEos);
  EXPECT_EQ(out[0].trans_id, 99u);

  auto padded = Count(CountOpts(3).Padding());
  ASSERT_TRUE(padded->Push(Num(4), 0, &out).ok());
  ASSERT_TRUE(padded->Push(Eos(), 0, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(Vals<int32_t>(out[1]), (I32s{4, 0, 0}));
  EXPECT_EQ(out[1].flags, kBatchFlagEos);

  auto dropping = Count(CountOpts(3).Drop());
  ASSERT_TRUE(dropping->Push(Num(5), 0, &out).ok());
  ASSERT_TRUE(dropping->Push(Eos(), 0, &out).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(IsEmptyMessage(out[2]));  // data dropped, EOS passed on
  EXPECT_EQ(dropping->pending(), 0u);
}

TEST(CountBatcherTest, EosAfterSlidingOverlapOnlyIsMarker) {
  auto b = Count(CountOpts(2).Stride(1));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Num(1), 0, &out).ok());
  ASSERT_TRUE(b->Push(Num(2), 0, &out).ok());
  ASSERT_TRUE(b->Push(Eos(), 0, &out).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(IsEmptyMessage(out[1]));
  EXPECT_EQ(b->pending(), 0u);
}

TEST(CountBatcherTest, FlushHonoursPaddingAndDrop) {
  std::vector<BatchItem> out;
  auto padded = Count(CountOpts(2).Padding());
  ASSERT_TRUE(padded->Push(Num(1), 0, &out).ok());
  padded->Flush(&out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Vals<int32_t>(out[0]), (I32s{1, 0}));
  EXPECT_EQ(out[0].flags, 0u);  // Flush adds no EOS
  auto dropping = Count(CountOpts(2).Drop());
  ASSERT_TRUE(dropping->Push(Num(1), 0, &out).ok());
  dropping->Flush(&out);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(dropping->pending(), 0u);
}

TEST(CountBatcherTest, RejectsBadOptions) {
  std::unique_ptr<CountBatcher> b;
  ExpectInvalid(CountBatcher::Create(CountOpts(0), &b), "batch_size=0");
  ExpectInvalid(CountBatcher::Create(CountOpts(-1), &b), "batch_size=-1");
  ExpectInvalid(CountBatcher::Create(CountOpts(3).Stride(4), &b),
                "slide_stride=4");
  ExpectInvalid(CountBatcher::Create(CountOpts(3).Stride(-1), &b),
                "slide_stride=-1");
  ExpectInvalid(CountBatcher::Create(CountOpts(1).Timeout(-1), &b),
                "timeout_ms=-1");
  ExpectInvalid(CountBatcher::Create(CountOpts(1).Timeout(4294967295), &b),
                "timeout_ms=4294967295");
  ExpectInvalid(CountBatcher::Create(CountOpts(1).Dim(-2), &b), "batch_dim=-2");
  ExpectInvalid(CountBatcher::Create(CountOpts(1).Padding().Drop(), &b),
                "padding and drop_remainder");
  EXPECT_EQ(b, nullptr);
  EXPECT_TRUE(CountBatcher::Create(CountOpts(1).Timeout(4294967294), &b).ok());
}

TEST(CountBatcherTest, RejectsShapeAndDtypeMismatchNamingInput) {
  auto b = Count(CountOpts(3).Input(2));
  std::vector<BatchItem> out;
  ASSERT_TRUE(b->Push(Msg<int32_t>(kI32, {2}, {1, 2}), 0, &out).ok());
  Status s = b->Push(Msg<int32_t>(kI32, {3}, {1, 2, 3}), 0, &out);
  ExpectInvalid(s, "CountBatch input 2: expected shape [2], found [3]");
  EXPECT_EQ(b->pending(), 0u);  // the batch in progress is discarded
  ASSERT_TRUE(b->Push(Msg<int32_t>(kI32, {2}, {1, 2}), 0, &out).ok());
  s = b->Push(Msg<float>(kF32, {2}, {1, 2}), 0, &out);
  ExpectInvalid(s, "input 2: expected dtype DT_INT32, found DT_FLOAT");
  auto dim1 = Count(CountOpts(2).Dim(1));
  ASSERT_TRUE(dim1->Push(Msg<int32_t>(kI32, {1, 2}, {1, 2}), 0, &out).ok());
  ExpectInvalid(dim1->Push(Msg<int32_t>(kI32, {2, 1}, {1, 2}), 0, &out),
                "only dimension 1 may differ");
  EXPECT_TRUE(out.empty());
}

TEST(CountBatcherTest, RejectsMalformedMessages) {
  auto b = Count(CountOpts(2).Dim(1));
  std::vector<BatchItem> out;
  ExpectInvalid(b->Push(Msg<int32_t>(kI32, {2}, {1, 2}), 0, &out),
                "batch_dim=1 needs messages of rank > 1");
  ExpectInvalid(b->Push(Msg<int32_t>(kI32, {1, 2}, {1}), 0, &out),
                "holds 4 bytes but shape [1,2] of DT_INT32 needs 8");
  ExpectInvalid(b->Push(Msg<int32_t>(5, {1, 1}, {1}), 0, &out),
                "unsupported dtype 5");
  ExpectInvalid(b->Push(Msg<int32_t>(kI32, {-1, 1}, {}), 0, &out),
                "shape [-1,1] is invalid");
  BatchItem empty;
  ExpectInvalid(b->Push(empty, 0, &out), "no tensor and no EOS");
  EXPECT_TRUE(out.empty());
}

TEST(BatcherTest, ElementSizes) {
  const std::vector<std::pair<int32_t, size_t>> sizes = {
      {0, 4},
      {1, 2},
      {2, 1},
      {3, 4},
      {4, 1},
      {5, 0},
      {6, 2},
      {7, 2},
      {8, 4},
      {9, 8},
      {10, 8},
      {11, 8},
      {12, 1},
      {13, 0},
      {-1, 0},
      // From the one dtype table: bf16 and the quantised types batch too;
      // sub-byte types (int4: 29, uint1: 30) pack elements, so they do not.
      {27, 2},
      {18, 1},
      {20, 4},
      {25, 5},
      {29, 0},
      {30, 0},
      {33, 0}};
  for (const auto& [dtype, size] : sizes) {
    EXPECT_EQ(ElementSize(dtype), size) << "dtype " << dtype;
  }
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
