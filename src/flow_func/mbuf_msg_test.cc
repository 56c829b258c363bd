// MbufTensor / MbufFlowMsg / MsgAllocator tests: tensor messages (shape,
// dtype, sizes, Reshape and its transport in the head), payload alignment,
// tensor lists, raw and empty messages, flow info, messages crossing a
// device queue or copied to another device, invalid requests, and memory
// returning to the sim device when everything is dropped.
#include "flow_func/mbuf_msg.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "udf_test_util.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::MsgType;
using FlowFunc::TensorDataType;
using testing::UdfHarness;

constexpr int32_t kOk = FlowFunc::FLOW_FUNC_SUCCESS;
constexpr int32_t kParamInvalid = FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;

std::shared_ptr<MsgAllocator> AllocatorOf(UdfHarness& h) {
  return h.Env("alloc", 0, 0).allocator;
}

std::shared_ptr<MbufFlowMsg> TensorMsg(MsgAllocator& a,
                                       const std::vector<int64_t>& shape,
                                       TensorDataType dt,
                                       uint32_t align = 512) {
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = a.AllocTensorMsg(shape, dt, align, &msg);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return msg;
}

uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// [p, p + n) lies inside the mbuf's data part.
bool InsideMbuf(const services::Mbuf& m, const void* p, uint64_t n) {
  uintptr_t lo = Addr(m.data());
  uintptr_t hi = lo + m.size();
  return Addr(p) >= lo && Addr(p) + n <= hi;
}

void Fill(FlowFunc::Tensor* t, uint8_t byte) {
  std::memset(t->GetData(), byte, t->GetDataSize());
}

bool AllBytes(const FlowFunc::Tensor* t, uint8_t byte) {
  const auto* p = static_cast<const uint8_t*>(t->GetData());
  for (uint64_t i = 0; i < t->GetDataSize(); ++i) {
    if (p[i] != byte) return false;
  }
  return true;
}

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
  EXPECT_EQ(mm->head().shape, (std::vector<int64_t>{4, 1, 2}));
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
  ASSERT_NE(msg->GetTensor(), nullptr);
  EXPECT_EQ(msg->GetTensor()->GetShape(), (std::vector<int64_t>{0}));
  EXPECT_EQ(msg->GetTensor()->GetElementCnt(), 0);
  EXPECT_EQ(msg->GetTensor()->GetDataSize(), 0u);
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

// ---- Across queues and devices ----

TEST(MbufMsgTest, TensorSurvivesADeviceQueue) {
  UdfHarness h;
  auto msg = std::static_pointer_cast<MbufFlowMsg>(
      h.Tensor<int32_t>(TensorDataType::DT_INT32, {2, 2}, {9, 8, 7, 6}, 55));
  msg->SetRetCode(3);
  msg->SetFlowFlags(1);
  ASSERT_EQ(msg->GetTensor()->Reshape({4}), kOk);
  uint32_t q = 0;
  ASSERT_TRUE(h.svc().CreateQueue(h.device(), 4, "mbuf_msg_test_q", &q).ok());
  ASSERT_TRUE(h.svc().Enqueue(q, msg->mbuf(), 0).ok());
  services::MbufPtr got;
  Status s = h.svc().Dequeue(q, &got, 1000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto out = MbufFlowMsg::FromMbuf(got);
  ASSERT_NE(out->GetTensor(), nullptr);
  EXPECT_EQ(out->GetTensor()->GetShape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(out->GetTensor()->GetDataType(), TensorDataType::DT_INT32);
  EXPECT_EQ(UdfHarness::Values<int32_t>(*out),
            (std::vector<int32_t>{9, 8, 7, 6}));
  EXPECT_EQ(out->GetTransactionId(), 55u);
  EXPECT_EQ(out->GetRetCode(), 3);
  EXPECT_EQ(out->GetFlowFlags(), 1u);
  EXPECT_EQ(Addr(out->GetTensor()->GetData()) % 512, 0u);
  EXPECT_TRUE(h.svc().DestroyQueue(q).ok());
}

// Creates the "msgs" group on `device` of the harness's service.
void AddMsgGroup(UdfHarness& h, int32_t device) {
  Status s = h.svc().SubmitEventSync(
      device, services::CreateGroupRequest{"msgs", 16 << 20}, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  s = h.svc().SubmitEventSync(
      device, services::AllocCacheRequest{"msgs", 8 << 20, 4 << 20}, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
}

TEST(MbufMsgTest, TensorSurvivesCopyToAnotherDevice) {
  UdfHarness h({2, 3}, 2);
  AddMsgGroup(h, 3);
  auto msg = std::static_pointer_cast<MbufFlowMsg>(
      h.Tensor<double>(TensorDataType::DT_DOUBLE, {3}, {1.5, -2.5, 3.25}, 9));
  services::MbufPtr copy;
  Status s = h.svc().CopyMbuf(msg->mbuf(), 3, "msgs", "deployer", &copy);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(copy->device(), 3);
  auto out = MbufFlowMsg::FromMbuf(copy);
  ASSERT_NE(out->GetTensor(), nullptr);
  EXPECT_NE(out->GetTensor()->GetData(), msg->GetTensor()->GetData());
  EXPECT_EQ(out->GetTensor()->GetShape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(out->GetTensor()->GetDataType(), TensorDataType::DT_DOUBLE);
  EXPECT_EQ(UdfHarness::Values<double>(*out),
            (std::vector<double>{1.5, -2.5, 3.25}));
  EXPECT_EQ(out->GetTransactionId(), 9u);
  EXPECT_GE(out->GetTensor()->GetDataBufferSize(),
            out->GetTensor()->GetDataSize());
  EXPECT_TRUE(InsideMbuf(*copy, out->GetTensor()->GetData(),
                         out->GetTensor()->GetDataSize()));
  // The copy is independent of the original.
  static_cast<double*>(msg->GetTensor()->GetData())[0] = 100.0;
  EXPECT_EQ(UdfHarness::Values<double>(*out)[0], 1.5);
}

TEST(MbufMsgTest, TensorListAndRawSurviveCopyToAnotherDevice) {
  UdfHarness h({3, 6, 7}, 6);
  AddMsgGroup(h, 7);
  auto a = AllocatorOf(h);
  std::shared_ptr<MbufFlowMsg> list;
  ASSERT_TRUE(a->AllocTensorListMsg(
                   {{2}, {3}},
                   {TensorDataType::DT_INT16, TensorDataType::DT_UINT8}, 512,
                   &list)
                  .ok());
  Fill(list->GetTensorList()[0], 0x11);
  Fill(list->GetTensorList()[1], 0x22);
  services::MbufPtr copy;
  ASSERT_TRUE(
      h.svc().CopyMbuf(list->mbuf(), 7, "msgs", "deployer", &copy).ok());
  auto out = MbufFlowMsg::FromMbuf(copy);
  auto tl = out->GetTensorList();
  ASSERT_EQ(tl.size(), 2u);
  EXPECT_EQ(tl[0]->GetShape(), std::vector<int64_t>{2});
  EXPECT_EQ(tl[1]->GetDataType(), TensorDataType::DT_UINT8);
  EXPECT_TRUE(AllBytes(tl[0], 0x11));
  EXPECT_TRUE(AllBytes(tl[1], 0x22));

  std::shared_ptr<MbufFlowMsg> raw;
  ASSERT_TRUE(a->AllocRawMsg(10, 512, &raw).ok());
  void* data = nullptr;
  uint64_t size = 0;
  ASSERT_EQ(raw->GetRawData(data, size), kOk);
  std::memcpy(data, "0123456789", 10);
  ASSERT_TRUE(h.svc().CopyMbuf(raw->mbuf(), 7, "msgs", "deployer", &copy).ok());
  auto rout = MbufFlowMsg::FromMbuf(copy);
  ASSERT_EQ(rout->GetRawData(data, size), kOk);
  ASSERT_EQ(size, 10u);
  EXPECT_EQ(std::memcmp(data, "0123456789", 10), 0);
}

TEST(MbufMsgTest, TensorSurvivesCopyQMbufBetweenDeviceQueues) {
  UdfHarness h({2, 3}, 2);
  AddMsgGroup(h, 3);
  auto msg = std::static_pointer_cast<MbufFlowMsg>(
      h.Tensor<int64_t>(TensorDataType::DT_INT64, {1, 2}, {-1, 1ll << 50}, 77));
  uint32_t src = 0, dst = 0;
  ASSERT_TRUE(h.svc().CreateQueue(2, 2, "mbuf_msg_src", &src).ok());
  ASSERT_TRUE(h.svc().CreateQueue(3, 2, "mbuf_msg_dst", &dst).ok());
  ASSERT_TRUE(h.svc().Enqueue(src, msg->mbuf(), 0).ok());
  services::CopyQMbufRequest r;
  r.src_queue = src;
  r.dst_queue = dst;
  r.dst_group = "msgs";
  Status s = h.svc().SubmitEventSync(3, r, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  services::MbufPtr got;
  ASSERT_TRUE(h.svc().Dequeue(dst, &got, 1000).ok());
  EXPECT_EQ(got->device(), 3);
  auto out = MbufFlowMsg::FromMbuf(got);
  ASSERT_NE(out->GetTensor(), nullptr);
  EXPECT_EQ(out->GetTensor()->GetShape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(UdfHarness::Values<int64_t>(*out),
            (std::vector<int64_t>{-1, 1ll << 50}));
  EXPECT_EQ(out->GetTransactionId(), 77u);
  EXPECT_TRUE(h.svc().DestroyQueue(src).ok());
  EXPECT_TRUE(h.svc().DestroyQueue(dst).ok());
}

// Regression: the alignment a UDF asked for holds for the receiver on
// another device too (the copy once kept the sender's data_offset, computed
// for the sender's block address).
TEST(MbufMsgTest, AlignmentSurvivesCopyToAnotherDevice) {
  UdfHarness h({2, 3}, 2);
  AddMsgGroup(h, 3);
  auto a = AllocatorOf(h);
  std::vector<services::MbufPtr> keep;  // vary block positions on device 3
  for (int i = 0; i < 16; ++i) {
    auto msg = TensorMsg(*a, {100 + i}, TensorDataType::DT_FLOAT, 4096);
    services::MbufPtr copy;
    ASSERT_TRUE(
        h.svc().CopyMbuf(msg->mbuf(), 3, "msgs", "deployer", &copy).ok());
    auto out = MbufFlowMsg::FromMbuf(copy);
    EXPECT_EQ(Addr(out->GetTensor()->GetData()) % 4096, 0u) << i;
    keep.push_back(copy);
  }
}

// ---- Invalid requests ----

TEST(MbufMsgTest, NegativeDimsAreRejected) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  for (const std::vector<int64_t>& shape :
       std::vector<std::vector<int64_t>>{{-1}, {2, -3}, {-1, -1}, {0, -1}}) {
    std::shared_ptr<MbufFlowMsg> msg;
    Status s = a->AllocTensorMsg(shape, TensorDataType::DT_FLOAT, 512, &msg);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.ToString().find("invalid shape"), std::string::npos)
        << s.ToString();
    EXPECT_NE(s.ToString().find("device 2"), std::string::npos) << s.ToString();
    EXPECT_EQ(msg, nullptr);
  }
}

TEST(MbufMsgTest, InvalidDataTypesAreRejected) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  for (int dt :
       {static_cast<int>(TensorDataType::DT_UNDEFINED), 5, 13, -1, 1000}) {
    std::shared_ptr<MbufFlowMsg> msg;
    Status s =
        a->AllocTensorMsg({2}, static_cast<TensorDataType>(dt), 512, &msg);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument)
        << dt << ": " << s.ToString();
    EXPECT_NE(s.ToString().find("data type"), std::string::npos)
        << s.ToString();
    EXPECT_EQ(msg, nullptr);
  }
}

TEST(MbufMsgTest, TooLargeTensorFailsCleanly) {
  UdfHarness h;
  std::shared_ptr<MbufFlowMsg> msg;
  // 1 GiB: more than the 64 MiB group holds.
  Status s = AllocatorOf(h)->AllocTensorMsg({1 << 30}, TensorDataType::DT_UINT8,
                                            512, &msg);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(msg, nullptr);
}

// Regression: a shape whose byte size (or element count) overflows int64 is
// rejected (it was once "allocated" with no data at all, and a UDF writing
// GetElementCnt() elements would scribble over the pool).
TEST(MbufMsgTest, OverflowingShapesAreRejected) {
  UdfHarness h;
  auto a = AllocatorOf(h);
  const std::vector<std::vector<int64_t>> shapes = {
      {int64_t{1} << 62},                    // 2^64 bytes of float
      {int64_t{1} << 32, int64_t{1} << 32},  // 2^64 elements: wraps to 0
      {std::numeric_limits<int64_t>::max(), 2},
  };
  for (const auto& shape : shapes) {
    std::shared_ptr<MbufFlowMsg> msg;
    Status s = a->AllocTensorMsg(shape, TensorDataType::DT_FLOAT, 512, &msg);
    EXPECT_FALSE(s.ok()) << ::testing::PrintToString(shape) << " allocated "
                         << (msg ? msg->GetTensor()->GetDataSize() : 0)
                         << " bytes for "
                         << (msg ? msg->GetTensor()->GetElementCnt() : 0)
                         << " elements";
  }
}

// ---- Memory accounting ----

uint64_t MemUsed(rt::SimRuntime& sim, int32_t device) {
  rt::DeviceStats st;
  EXPECT_TRUE(sim.GetDeviceStats(device, &st).ok());
  return st.mem_used_bytes;
}
uint64_t LiveAllocations(rt::SimRuntime& sim, int32_t device) {
  rt::DeviceStats st;
  EXPECT_TRUE(sim.GetDeviceStats(device, &st).ok());
  return st.live_allocations;
}

TEST(MbufMsgTest, MemoryReturnsToZeroAfterEverythingIsDropped) {
  auto sim = testing::MakeSim({2, 3});
  {
    services::ExchangeService svc(sim.get());
    for (int32_t d : {2, 3}) {
      ASSERT_TRUE(
          svc.SubmitEventSync(d, services::CreateGroupRequest{"msgs", 16 << 20},
                              nullptr)
              .ok());
      ASSERT_TRUE(svc.SubmitEventSync(
                         d,
                         services::AllocCacheRequest{"msgs", 4 << 20, 1 << 20},
                         nullptr)
                      .ok());
    }
    MsgAllocator a(&svc, 2, "msgs", "deployer");
    std::vector<std::shared_ptr<FlowFunc::FlowMsg>> msgs;
    std::vector<std::shared_ptr<FlowFunc::Tensor>> tensors;
    std::vector<services::MbufPtr> copies;
    for (int i = 0; i < 8; ++i) {
      std::shared_ptr<MbufFlowMsg> m;
      ASSERT_TRUE(a.AllocTensorMsg({i + 1, 100}, TensorDataType::DT_FLOAT,
                                   i % 2 ? 4096 : 512, &m)
                      .ok());
      services::MbufPtr c;
      ASSERT_TRUE(svc.CopyMbuf(m->mbuf(), 3, "msgs", "deployer", &c).ok());
      copies.push_back(c);
      // A tensor outliving its message keeps the mbuf alive.
      tensors.push_back(std::shared_ptr<FlowFunc::Tensor>(m, m->GetTensor()));
      msgs.push_back(m);
    }
    std::shared_ptr<MbufFlowMsg> l, r, e;
    ASSERT_TRUE(
        a.AllocTensorListMsg({{3}, {4}},
                             {TensorDataType::DT_INT8, TensorDataType::DT_INT8},
                             512, &l)
            .ok());
    ASSERT_TRUE(a.AllocRawMsg(1000, 512, &r).ok());
    ASSERT_TRUE(a.AllocEmptyMsg(MsgType::MSG_TYPE_TENSOR_DATA, &e).ok());
    msgs.push_back(l);
    msgs.push_back(r);
    msgs.push_back(e);
    EXPECT_GT(MemUsed(*sim, 2), 0u);
    EXPECT_GT(MemUsed(*sim, 3), 0u);
    msgs.clear();
    copies.clear();
    tensors.clear();
  }  // the service destroys its groups
  for (int32_t d : {2, 3}) {
    EXPECT_EQ(MemUsed(*sim, d), 0u) << "device " << d;
    EXPECT_EQ(LiveAllocations(*sim, d), 0u) << "device " << d;
  }
}

TEST(MbufMsgTest, DirectBlocksReturnWhenTheLastMessageDrops) {
  // A group without caches allocates each mbuf from the device directly.
  auto sim = testing::MakeSim({4, 5});
  services::ExchangeService svc(sim.get());
  ASSERT_TRUE(
      svc.SubmitEventSync(5, services::CreateGroupRequest{"direct", 16 << 20},
                          nullptr)
          .ok());
  uint64_t base = MemUsed(*sim, 5);
  MsgAllocator a(&svc, 5, "direct", "deployer");
  std::shared_ptr<MbufFlowMsg> m;
  ASSERT_TRUE(
      a.AllocTensorMsg({1000}, TensorDataType::DT_INT32, 4096, &m).ok());
  EXPECT_GE(MemUsed(*sim, 5), base + 4000);
  auto view = MbufFlowMsg::FromMbuf(m->mbuf());
  m.reset();
  EXPECT_GE(MemUsed(*sim, 5), base + 4000) << "a second view keeps the mbuf";
  // Dropped on a thread that never bound anything.
  testing::RunOnFreshThread([&] { view.reset(); });
  EXPECT_EQ(MemUsed(*sim, 5), base);
  EXPECT_EQ(MemUsed(*sim, 4), 0u);
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
