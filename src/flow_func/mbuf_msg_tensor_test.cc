// MbufTensor / MbufFlowMsg / MsgAllocator tests, the messages themselves:
// tensor messages (shape, dtype, sizes, Reshape and its transport in the
// head), payload alignment, tensor lists, raw and empty messages, and flow
// info. Crossing queues and devices, invalid requests and memory accounting:
// mbuf_msg_transfer_test.cc.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "flow_func/mbuf_msg_test_util.h"
#include "udf_test_util.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::MsgType;
using FlowFunc::TensorDataType;
using mbuf_msg_test::Addr;
using mbuf_msg_test::AllBytes;
using mbuf_msg_test::AllocatorOf;
using mbuf_msg_test::Fill;
using mbuf_msg_test::InsideMbuf;
using mbuf_msg_test::kOk;
using mbuf_msg_test::kParamInvalid;
using mbuf_msg_test::TensorMsg;
using testing::UdfHarness;

// ---- Tensor messages ----

TEST(MbufMsgTest, TensorShapeDtypeAndSizes) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  struct Case {
    std::vector<int64_t> shape;
    TensorDataType dt;
    int64_t count;
    uint64_t bytes;
  };
  const Case cases[] = {
      {{2, 3}, TensorDataType::DT_INT32, 6, 24},
      {{4}, TensorDataType::DT_FLOAT, 4, 16},
      {{2, 2, 2}, TensorDataType::DT_DOUBLE, 8, 64},
      {{5}, TensorDataType::DT_INT8, 5, 5},
      {{3}, TensorDataType::DT_FLOAT16, 3, 6},
      {{3}, TensorDataType::DT_BF16, 3, 6},
      {{7}, TensorDataType::DT_BOOL, 7, 7},
      {{2}, TensorDataType::DT_UINT64, 2, 16},
      {{3}, TensorDataType::DT_INT4, 3, 2},  // packed, rounded up
      {{9}, TensorDataType::DT_UINT1, 9, 2},
      {{5}, TensorDataType::DT_INT2, 5, 2},
      {{4}, TensorDataType::DT_UINT2, 4, 1},
      {{2}, TensorDataType::DT_DUAL, 2, 10},     // float + int8 each
      {{}, TensorDataType::DT_INT64, 1, 8},      // scalar
      {{0, 5}, TensorDataType::DT_FLOAT, 0, 0},  // empty
      {{1000, 1000}, TensorDataType::DT_UINT8, 1000000, 1000000},
  };
  for (const Case& c : cases) {
    auto msg = TensorMsg(*a, c.shape, c.dt);
    ASSERT_NE(msg, nullptr);
    EXPECT_EQ(msg->GetMsgType(), MsgType::MSG_TYPE_TENSOR_DATA);
    FlowFunc::Tensor* t = msg->GetTensor();
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->GetShape(), c.shape);
    EXPECT_EQ(t->GetDataType(), c.dt);
    EXPECT_EQ(t->GetElementCnt(), c.count) << static_cast<int>(c.dt);
    EXPECT_EQ(t->GetDataSize(), c.bytes) << static_cast<int>(c.dt);
    EXPECT_GE(t->GetDataBufferSize(), t->GetDataSize());
    EXPECT_NE(t->GetData(), nullptr);
    EXPECT_TRUE(InsideMbuf(*msg->mbuf(), t->GetData(), t->GetDataSize()));
    EXPECT_TRUE(InsideMbuf(*msg->mbuf(), t->GetData(), t->GetDataBufferSize()));
    // A tensor message's list is its one tensor.
    auto list = msg->GetTensorList();
    ASSERT_EQ(list.size(), 1u);
    EXPECT_EQ(list[0], t);
    EXPECT_EQ(msg->mbuf()->device(), h.device());
  }
}

TEST(MbufMsgTest, TensorDataIsWritableOverItsWholeSize) {
  UdfHarness h;
  auto msg =
      h.Tensor<int32_t>(TensorDataType::DT_INT32, {3, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(UdfHarness::Values<int32_t>(*msg),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(MbufMsgTest, ReshapeKeepsElementCountAndRejectsOthers) {
  UdfHarness h;
  auto msg =
      h.Tensor<int32_t>(TensorDataType::DT_INT32, {2, 3}, {1, 2, 3, 4, 5, 6});
  FlowFunc::Tensor* t = msg->GetTensor();
  void* data = t->GetData();
  uint64_t capacity = t->GetDataBufferSize();

  EXPECT_EQ(t->Reshape({3, 2}), kOk);
  EXPECT_EQ(t->GetShape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t->Reshape({6}), kOk);
  EXPECT_EQ(t->Reshape({1, 6, 1}), kOk);
  EXPECT_EQ(t->GetShape(), (std::vector<int64_t>{1, 6, 1}));
  EXPECT_EQ(t->GetElementCnt(), 6);
  EXPECT_EQ(t->GetDataSize(), 24u);

  for (const std::vector<int64_t>& bad : std::vector<std::vector<int64_t>>{
           {5}, {7}, {}, {2, 2}, {0}, {-6}, {-2, -3}, {6, -1}, {6, 0}}) {
    EXPECT_EQ(t->Reshape(bad), kParamInvalid) << ::testing::PrintToString(bad);
    EXPECT_EQ(t->GetShape(), (std::vector<int64_t>{1, 6, 1}))
        << "a rejected Reshape changed the shape";
  }
  // Data is neither moved nor changed.
  EXPECT_EQ(t->GetData(), data);
  EXPECT_EQ(t->GetDataBufferSize(), capacity);
  EXPECT_EQ(UdfHarness::Values<int32_t>(*msg),
            (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(MbufMsgTest, ReshapeOfScalarAndEmptyTensors) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  auto scalar = TensorMsg(*a, {}, TensorDataType::DT_FLOAT);
  EXPECT_EQ(scalar->GetTensor()->Reshape({1, 1}), kOk);
  EXPECT_EQ(scalar->GetTensor()->Reshape({}), kOk);
  EXPECT_EQ(scalar->GetTensor()->Reshape({0}), kParamInvalid);
  auto empty = TensorMsg(*a, {0, 4}, TensorDataType::DT_FLOAT);
  EXPECT_EQ(empty->GetTensor()->Reshape({4, 0}), kOk);
  EXPECT_EQ(empty->GetTensor()->Reshape({0}), kOk);
  EXPECT_EQ(empty->GetTensor()->Reshape({1}), kParamInvalid);
  EXPECT_EQ(empty->GetTensor()->Reshape({-1}), kParamInvalid);
}

TEST(MbufMsgTest, ReshapeTravelsInTheHead) {
  UdfHarness h;
  auto msg = h.Tensor<int16_t>(TensorDataType::DT_INT16, {2, 4},
                               {1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(msg->GetTensor()->Reshape({4, 1, 2}), kOk);
  auto mm = std::static_pointer_cast<MbufFlowMsg>(msg);
  EXPECT_EQ(services::ToVector(mm->head().shape),
            (std::vector<int64_t>{4, 1, 2}));
  auto again = MbufFlowMsg::FromMbuf(mm->mbuf());
  ASSERT_NE(again->GetTensor(), nullptr);
  EXPECT_EQ(again->GetTensor()->GetShape(), (std::vector<int64_t>{4, 1, 2}));
  EXPECT_EQ(again->GetTensor()->GetDataType(), TensorDataType::DT_INT16);
  EXPECT_EQ(again->GetTensor()->GetData(), msg->GetTensor()->GetData());
  EXPECT_EQ(UdfHarness::Values<int16_t>(*again),
            (std::vector<int16_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

// ---- Alignment ----

TEST(MbufMsgTest, TensorDataHonoursRequestedAlignment) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  for (uint32_t align : {32u, 64u, 128u, 512u, 1024u, 4096u}) {
    // Several sizes, so several size classes and block positions.
    std::vector<std::shared_ptr<MbufFlowMsg>> keep;
    for (int64_t n : {1, 3, 100, 1000, 5000, 70000}) {
      auto msg = TensorMsg(*a, {n}, TensorDataType::DT_FLOAT, align);
      ASSERT_NE(msg, nullptr);
      FlowFunc::Tensor* t = msg->GetTensor();
      EXPECT_EQ(Addr(t->GetData()) % align, 0u)
          << "align " << align << " n " << n;
      EXPECT_GE(t->GetDataBufferSize(), t->GetDataSize());
      EXPECT_TRUE(InsideMbuf(*msg->mbuf(), t->GetData(), t->GetDataSize()))
          << "align " << align << " n " << n;
      Fill(t, 0x5A);  // the whole payload is writable
      // The receiver finds the payload at the same place.
      auto again = MbufFlowMsg::FromMbuf(msg->mbuf());
      EXPECT_EQ(again->GetTensor()->GetData(), t->GetData());
      keep.push_back(msg);
    }
  }
}

// ---- Tensor lists ----

TEST(MbufMsgTest, TensorListDescribesEachTensor) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  const std::vector<std::vector<int64_t>> shapes = {
      {2, 3}, {5}, {}, {0, 2}, {3}};
  const std::vector<TensorDataType> dts = {
      TensorDataType::DT_FLOAT, TensorDataType::DT_INT8,
      TensorDataType::DT_INT64, TensorDataType::DT_INT32,
      TensorDataType::DT_FLOAT16};
  const std::vector<uint64_t> bytes = {24, 5, 8, 0, 6};
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = a->AllocTensorListMsg(shapes, dts, 512, &msg);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(msg->GetMsgType(), MsgType::MSG_TYPE_TENSOR_LIST);
  auto list = msg->GetTensorList();
  ASSERT_EQ(list.size(), shapes.size());
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i]->GetShape(), shapes[i]) << i;
    EXPECT_EQ(list[i]->GetDataType(), dts[i]) << i;
    EXPECT_EQ(list[i]->GetDataSize(), bytes[i]) << i;
    EXPECT_GE(list[i]->GetDataBufferSize(), list[i]->GetDataSize()) << i;
    EXPECT_TRUE(
        InsideMbuf(*msg->mbuf(), list[i]->GetData(), list[i]->GetDataSize()))
        << i;
    if (list[i]->GetDataSize() > 0) {
      EXPECT_EQ(Addr(list[i]->GetData()) % 512, 0u) << i;
    }
  }
  // No overlap between non-empty tensors.
  for (size_t i = 0; i < list.size(); ++i) {
    for (size_t j = i + 1; j < list.size(); ++j) {
      uintptr_t a0 = Addr(list[i]->GetData()), a1 = a0 + list[i]->GetDataSize();
      uintptr_t b0 = Addr(list[j]->GetData()), b1 = b0 + list[j]->GetDataSize();
      if (a0 == a1 || b0 == b1) continue;
      EXPECT_TRUE(a1 <= b0 || b1 <= a0) << i << " overlaps " << j;
    }
  }
  // Writes to one tensor leave the others alone.
  for (size_t i = 0; i < list.size(); ++i)
    Fill(list[i], static_cast<uint8_t>(i + 1));
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_TRUE(AllBytes(list[i], static_cast<uint8_t>(i + 1))) << i;
  }
  Fill(list[0], 0xEE);
  for (size_t i = 1; i < list.size(); ++i) {
    EXPECT_TRUE(AllBytes(list[i], static_cast<uint8_t>(i + 1))) << i;
  }
  // The head carries the list: a receiver sees the same tensors.
  auto again = MbufFlowMsg::FromMbuf(msg->mbuf());
  auto list2 = again->GetTensorList();
  ASSERT_EQ(list2.size(), list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list2[i]->GetShape(), shapes[i]);
    EXPECT_EQ(list2[i]->GetDataType(), dts[i]);
    EXPECT_EQ(list2[i]->GetData(), list[i]->GetData());
  }
  // A list message has no single tensor and no raw data.
  EXPECT_EQ(msg->GetTensor(), nullptr);
  void* raw = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(msg->GetRawData(raw, size), kParamInvalid);
}

TEST(MbufMsgTest, TensorListWithUnalignedElementSizes) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  // Odd byte counts: the next tensor must still start past the previous one.
  std::shared_ptr<MbufFlowMsg> msg;
  ASSERT_TRUE(
      a->AllocTensorListMsg({{3}, {3}, {3}},
                            {TensorDataType::DT_INT8, TensorDataType::DT_INT4,
                             TensorDataType::DT_DUAL},
                            1, &msg)
          .ok());
  auto list = msg->GetTensorList();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]->GetDataSize(), 3u);
  EXPECT_EQ(list[1]->GetDataSize(), 2u);
  EXPECT_EQ(list[2]->GetDataSize(), 15u);
  for (size_t i = 0; i < 3; ++i) Fill(list[i], static_cast<uint8_t>(0x10 + i));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(AllBytes(list[i], static_cast<uint8_t>(0x10 + i))) << i;
    EXPECT_TRUE(
        InsideMbuf(*msg->mbuf(), list[i]->GetData(), list[i]->GetDataSize()));
  }
}

TEST(MbufMsgTest, TensorListRejectsBadRequests) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = a->AllocTensorListMsg({}, {}, 512, &msg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  s = a->AllocTensorListMsg({{1}, {2}}, {TensorDataType::DT_FLOAT}, 512, &msg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  s = a->AllocTensorListMsg(
      {{1}, {2, -1}}, {TensorDataType::DT_FLOAT, TensorDataType::DT_FLOAT}, 512,
      &msg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.ToString().find("tensor 1"), std::string::npos) << s.ToString();
  s = a->AllocTensorListMsg(
      {{1}, {2}}, {TensorDataType::DT_UNDEFINED, TensorDataType::DT_FLOAT}, 512,
      &msg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.ToString().find("tensor 0"), std::string::npos) << s.ToString();
  EXPECT_EQ(msg, nullptr);
}

// ---- Raw and empty messages ----

TEST(MbufMsgTest, RawMessageSizeAndPointer) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  for (int64_t n : {int64_t{1}, int64_t{100}, int64_t{4096}, int64_t{100000}}) {
    std::shared_ptr<MbufFlowMsg> msg;
    Status s = a->AllocRawMsg(n, 512, &msg);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(msg->GetMsgType(), MsgType::MSG_TYPE_RAW_MSG);
    EXPECT_EQ(msg->GetTensor(), nullptr);
    EXPECT_TRUE(msg->GetTensorList().empty());
    void* data = nullptr;
    uint64_t size = 0;
    ASSERT_EQ(msg->GetRawData(data, size), kOk);
    EXPECT_EQ(size, static_cast<uint64_t>(n));
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(Addr(data) % 512, 0u);
    EXPECT_TRUE(InsideMbuf(*msg->mbuf(), data, size));
    std::memset(data, 0x42, size);
    // A receiver finds the same bytes.
    auto again = MbufFlowMsg::FromMbuf(msg->mbuf());
    void* data2 = nullptr;
    uint64_t size2 = 0;
    ASSERT_EQ(again->GetRawData(data2, size2), kOk);
    EXPECT_EQ(data2, data);
    EXPECT_EQ(size2, size);
  }
}

TEST(MbufMsgTest, RawMessageOfZeroBytes) {
  UdfHarness h;
  std::shared_ptr<MbufFlowMsg> msg;
  ASSERT_TRUE(AllocatorOf(h)->AllocRawMsg(0, 512, &msg).ok());
  void* data = nullptr;
  uint64_t size = 99;
  EXPECT_EQ(msg->GetRawData(data, size), kOk);
  EXPECT_EQ(size, 0u);
}

TEST(MbufMsgTest, RawMessageRejectsNegativeSize) {
  UdfHarness h;
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = AllocatorOf(h)->AllocRawMsg(-1, 512, &msg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_EQ(msg, nullptr);
}

TEST(MbufMsgTest, GetRawDataOnATensorMessageIsInvalid) {
  UdfHarness h;
  auto msg = h.Tensor<int32_t>(TensorDataType::DT_INT32, {2}, {1, 2});
  void* data = reinterpret_cast<void*>(0x1);
  uint64_t size = 7;
  EXPECT_EQ(msg->GetRawData(data, size), kParamInvalid);
  EXPECT_EQ(data, reinterpret_cast<void*>(0x1)) << "outputs changed on failure";
  EXPECT_EQ(size, 7u);
}

TEST(MbufMsgTest, UserDefinedMessageTypesCarryRawData) {
  UdfHarness h;
  std::shared_ptr<MbufFlowMsg> msg;
  ASSERT_TRUE(AllocatorOf(h)->AllocRawMsg(16, 64, &msg).ok());
  auto user = static_cast<MsgType>(1025);
  msg->SetMsgType(user);
  EXPECT_EQ(msg->GetMsgType(), user);
  void* data = nullptr;
  uint64_t size = 0;
  EXPECT_EQ(msg->GetRawData(data, size), kOk);
  EXPECT_EQ(size, 16u);
  auto again = MbufFlowMsg::FromMbuf(msg->mbuf());
  EXPECT_EQ(again->GetMsgType(), user);
}

TEST(MbufMsgTest, EmptyMessages) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  std::shared_ptr<MbufFlowMsg> msg;
  ASSERT_TRUE(a->AllocEmptyMsg(MsgType::MSG_TYPE_TENSOR_DATA, &msg).ok());
  EXPECT_EQ(msg->GetMsgType(), MsgType::MSG_TYPE_TENSOR_DATA);
  // Null data has no tensor (GE's): a UDF tells it from a zero-size one.
  EXPECT_EQ(msg->GetTensor(), nullptr);
  EXPECT_TRUE(msg->GetTensorList().empty());
  EXPECT_EQ(msg->GetRetCode(), 0);
  EXPECT_EQ(msg->GetFlowFlags(), 0u);

  ASSERT_TRUE(a->AllocEmptyMsg(MsgType::MSG_TYPE_RAW_MSG, &msg).ok());
  EXPECT_EQ(msg->GetMsgType(), MsgType::MSG_TYPE_RAW_MSG);
  EXPECT_EQ(msg->GetTensor(), nullptr);
  void* data = nullptr;
  uint64_t size = 5;
  EXPECT_EQ(msg->GetRawData(data, size), kOk);
  EXPECT_EQ(size, 0u);

  ASSERT_TRUE(a->AllocEmptyMsg(MsgType::MSG_TYPE_TENSOR_LIST, &msg).ok());
  EXPECT_EQ(msg->GetMsgType(), MsgType::MSG_TYPE_TENSOR_LIST);
  EXPECT_TRUE(msg->GetTensorList().empty());
}

// ---- Flow info ----

TEST(MbufMsgTest, FlowInfoSettersAndGetters) {
  UdfHarness h;
  auto msg = std::static_pointer_cast<MbufFlowMsg>(
      h.Tensor<float>(TensorDataType::DT_FLOAT, {1}, {1.0f}));
  msg->SetRetCode(-12345);
  msg->SetStartTime(1111111111111ull);
  msg->SetEndTime(std::numeric_limits<uint64_t>::max());
  msg->SetFlowFlags(static_cast<uint32_t>(FlowFunc::FlowFlag::FLOW_FLAG_EOS) |
                    static_cast<uint32_t>(FlowFunc::FlowFlag::FLOW_FLAG_SEG));
  msg->SetRouteLabel(77);
  msg->SetTransactionId(0xABCDEF0123456789ull);
  EXPECT_EQ(msg->GetRetCode(), -12345);
  EXPECT_EQ(msg->GetStartTime(), 1111111111111ull);
  EXPECT_EQ(msg->GetEndTime(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(msg->GetFlowFlags(), 3u);
  EXPECT_EQ(msg->GetTransactionId(), 0xABCDEF0123456789ull);
  EXPECT_EQ(msg->head().route_label, 77u);
  // Everything lives in the head: a second view sees it.
  auto again = MbufFlowMsg::FromMbuf(msg->mbuf());
  EXPECT_EQ(again->GetRetCode(), -12345);
  EXPECT_EQ(again->GetStartTime(), 1111111111111ull);
  EXPECT_EQ(again->GetEndTime(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(again->GetFlowFlags(), 3u);
  EXPECT_EQ(again->GetTransactionId(), 0xABCDEF0123456789ull);
  // Msg type.
  msg->SetMsgType(static_cast<MsgType>(2000));
  EXPECT_EQ(msg->GetMsgType(), static_cast<MsgType>(2000));
  // Setting flow info leaves the tensor alone.
  msg->SetMsgType(MsgType::MSG_TYPE_TENSOR_DATA);
  EXPECT_EQ(UdfHarness::Values<float>(*msg), std::vector<float>{1.0f});
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
