// MbufTensor / MbufFlowMsg / MsgAllocator tests, across queues and devices:
// messages crossing a device queue or copied to another device (tensors,
// tensor lists, raw data, alignment), invalid requests (negative dims, bad
// dtypes, too large or overflowing shapes), and memory returning to the sim
// device when everything is dropped.
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
using mbuf_msg_test::TensorMsg;
using testing::UdfHarness;

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
