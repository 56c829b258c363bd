// Host messages to mbufs and back: every message type round-trips with its
// flow info, tensor lists land at 64-byte aligned offsets the UDF side
// reads (head.tensor_list), empty messages carry null_data and no payload,
// FetchData's tensor view of each type, and FlowInfo's user-data offsets.
// On device 6 (no device 0 in the set).
#include "session/host_message.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace session {
namespace {

Tensor I32(std::vector<int32_t> v) {
  return Tensor::From<int32_t>(DataType::kInt32,
                               {static_cast<int64_t>(v.size())}, v);
}

class HostMessageTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::MakeGroup(svc_, 6, "g", 1 << 20); }
  services::MbufPtr Write(const Message& m, uint64_t trans = 5) {
    FeedPart part{0, nullptr, &m, nullptr};
    services::MbufPtr mbuf;
    EXPECT_TRUE(
        svc_.AllocMbuf(6, "g", "deployer", PayloadBytes(part), &mbuf).ok());
    Status s = WritePart(&svc_, part, trans, mbuf);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return mbuf;
  }

  std::shared_ptr<rt::SimRuntime> sim_ = testing::MakeSim({3, 6, 7});
  services::ExchangeService svc_{sim_.get()};
};

TEST_F(HostMessageTest, TensorListRoundTripsAtAlignedOffsets) {
  Message m;
  m.msg_type = kMsgTypeTensorList;
  m.tensors = {I32({1, 2, 3}), I32({4})};
  m.info.flags = kFlowFlagSeg;
  m.info.start_time = 9;
  ASSERT_TRUE(m.info.SetUserData("ud", 2, 10).ok());
  FeedPart part{0, nullptr, &m, nullptr};
  EXPECT_EQ(PayloadBytes(part), 64u + 4u) << "the second tensor starts at 64";
  services::MbufPtr mbuf = Write(m);
  const services::MbufHead& h = mbuf->head();
  ASSERT_EQ(h.tensor_list.size(), 2u);
  EXPECT_EQ(h.tensor_list[1].offset, 64u);
  EXPECT_EQ(h.trans_id, 5u);
  Message back;
  ASSERT_TRUE(ReadMessage(&svc_, mbuf, &back).ok());
  EXPECT_EQ(back.msg_type, kMsgTypeTensorList);
  ASSERT_EQ(back.tensors.size(), 2u);
  EXPECT_EQ(back.tensors[0].As<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(back.tensors[1].As<int32_t>(), (std::vector<int32_t>{4}));
  EXPECT_EQ(back.info.flags, kFlowFlagSeg);
  EXPECT_EQ(back.info.start_time, 9u);
  EXPECT_EQ(back.info.transaction_id, 5u);
  EXPECT_EQ(back.info.user_data.size(), 12u);
  Tensor t;
  EXPECT_EQ(ReadTensor(&svc_, mbuf, &t).code(), StatusCode::kInvalidArgument);
}

TEST_F(HostMessageTest, RawUserTypeAndEmptyMessages) {
  Message raw;
  raw.msg_type = kMsgTypeUserDefineStart;
  raw.raw = {1, 2, 3, 4, 5};
  services::MbufPtr mbuf = Write(raw);
  Message back;
  ASSERT_TRUE(ReadMessage(&svc_, mbuf, &back).ok());
  EXPECT_EQ(back.msg_type, kMsgTypeUserDefineStart);
  EXPECT_EQ(back.raw, raw.raw);
  Tensor t;
  ASSERT_TRUE(ReadTensor(&svc_, mbuf, &t).ok());
  EXPECT_EQ(t.dtype, DataType::kUint8);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(t.data, raw.raw);

  Message empty;
  empty.empty = true;
  empty.info.flags = kFlowFlagEos;
  mbuf = Write(empty);
  EXPECT_TRUE(mbuf->head().null_data);
  EXPECT_EQ(services::ToVector(mbuf->head().shape), (std::vector<int64_t>{0}));
  ASSERT_TRUE(ReadMessage(&svc_, mbuf, &back).ok());
  EXPECT_TRUE(back.empty);
  EXPECT_TRUE(back.tensors.empty());
  EXPECT_EQ(back.info.flags, kFlowFlagEos);
  ASSERT_TRUE(ReadTensor(&svc_, mbuf, &t).ok());
  EXPECT_TRUE(t.data.empty());
}

TEST_F(HostMessageTest, CheckMessageRules) {
  const uint64_t kMax = 1 << 10;
  Message ok;
  ok.tensors = {I32({1})};
  EXPECT_TRUE(CheckMessage(ok, kMax, "w: ").ok());
  Message none;  // a tensor message without a tensor
  EXPECT_EQ(CheckMessage(none, kMax, "w: ").code(),
            StatusCode::kInvalidArgument);
  none.empty = true;
  EXPECT_TRUE(CheckMessage(none, kMax, "w: ").ok());
  Message empty_list;
  empty_list.msg_type = kMsgTypeTensorList;
  EXPECT_EQ(CheckMessage(empty_list, kMax, "w: ").code(),
            StatusCode::kInvalidArgument);
  Message big;
  big.msg_type = kMsgTypeRawData;
  big.raw.assign(kMax + 1, 0);
  Status s = CheckMessage(big, kMax, "w: ");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("max_message_bytes"), std::string::npos);
  Message tensors_on_raw;
  tensors_on_raw.msg_type = kMsgTypeUserDefineStart + 1;
  tensors_on_raw.tensors = {I32({1})};
  EXPECT_EQ(CheckMessage(tensors_on_raw, kMax, "w: ").code(),
            StatusCode::kInvalidArgument);
}

TEST(FlowInfoUserData, OffsetsAsGe) {
  FlowInfo info;
  const uint32_t a = 0xA1B2C3D4;
  ASSERT_TRUE(info.SetUserData(&a, 4, 8).ok());
  EXPECT_EQ(info.user_data.size(), 12u);
  uint32_t b = 0;
  ASSERT_TRUE(info.GetUserData(&b, 4, 8).ok());
  EXPECT_EQ(b, a);
  EXPECT_EQ(info.SetUserData(&a, 4, 61).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(info.GetUserData(&b, 4, 12).code(), StatusCode::kInvalidArgument)
      << "nothing set there";
  EXPECT_EQ(info.SetUserData(nullptr, 1, 0).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace session
}  // namespace hflow
