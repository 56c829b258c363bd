// The control protocol's conversions round-trip exactly: every field of
// an mbuf head, and every kind of init-params value; user data over 64
// bytes is refused.
//
// Thread-safety: single-threaded.
#include "worker/wire.h"

#include <gtest/gtest.h>

namespace hflow {
namespace worker {
namespace {

TEST(WireTest, HeadRoundTripsEveryField) {
  services::MbufHead h;
  h.trans_id = 77;
  h.flags = services::kFlowFlagEos;
  h.ret_code = -5;
  h.start_time = 11;
  h.end_time = 12;
  h.msg_type = 2;
  h.dtype = 9;
  h.shape.assign({2, 3});
  h.route_label = 4;
  h.data_label = 5;
  h.tensor_list.push_back(services::TensorDesc{3, {4}, 64, 16});
  h.data_offset = 32;
  h.align = 64;
  h.error_node = 3;
  h.null_data = true;
  ASSERT_TRUE(h.SetUserData("abc", 3).ok());
  v1::MsgHead w;
  HeadToWire(h, &w);
  services::MbufHead back;
  ASSERT_TRUE(HeadFromWire(w, &back).ok());
  EXPECT_EQ(back.trans_id, 77u);
  EXPECT_EQ(back.flags, services::kFlowFlagEos);
  EXPECT_EQ(back.ret_code, -5);
  EXPECT_EQ(back.start_time, 11u);
  EXPECT_EQ(back.end_time, 12u);
  EXPECT_EQ(back.msg_type, 2);
  EXPECT_EQ(back.dtype, 9);
  EXPECT_EQ(services::ToVector(back.shape), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back.route_label, 4u);
  EXPECT_EQ(back.data_label, 5u);
  ASSERT_EQ(back.tensor_list.size(), 1u);
  EXPECT_EQ(back.tensor_list[0].dtype, 3);
  EXPECT_EQ(back.tensor_list[0].shape, std::vector<int64_t>{4});
  EXPECT_EQ(back.tensor_list[0].offset, 64u);
  EXPECT_EQ(back.tensor_list[0].bytes, 16u);
  EXPECT_EQ(back.data_offset, 32u);
  EXPECT_EQ(back.align, 64u);
  EXPECT_EQ(back.error_node, 3u);
  EXPECT_TRUE(back.null_data);
  EXPECT_EQ(back.user_data_len, 3u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(back.user_data), 3), "abc");
}

TEST(WireTest, UserDataOverSixtyFourBytesIsRefused) {
  v1::MsgHead w;
  w.set_user_data(std::string(65, 'x'));
  services::MbufHead back;
  EXPECT_FALSE(HeadFromWire(w, &back).ok());
}

TEST(WireTest, EveryInitParamKindRoundTrips) {
  using Impl = flow_func::AttrValueImpl;
  using DT = FlowFunc::TensorDataType;
  flow_func::AttrMap attrs;
  auto put = [&](const char* name, Impl::Value v) {
    attrs[name] = std::make_shared<const Impl>(std::move(v));
  };
  put("s", std::string("text"));
  put("sl", std::vector<std::string>{"a", "b"});
  put("i", int64_t{-3});
  put("il", std::vector<int64_t>{1, 2});
  put("ill", std::vector<std::vector<int64_t>>{{1}, {2, 3}});
  put("f", 1.5f);
  put("fl", std::vector<float>{0.5f});
  put("b", true);
  put("bl", std::vector<bool>{true, false});
  put("dt", DT::DT_INT64);
  put("dtl", std::vector<DT>{DT::DT_FLOAT, DT::DT_INT8});
  google::protobuf::Map<std::string, v1::AttrValue> w;
  ASSERT_TRUE(AttrsToWire(attrs, &w).ok());
  flow_func::AttrMap back;
  ASSERT_TRUE(AttrsFromWire(w, &back).ok());
  ASSERT_EQ(back.size(), attrs.size());
  for (const auto& [name, value] : attrs) {
    SCOPED_TRACE(name);
    const auto* a = dynamic_cast<const Impl*>(value.get());
    const auto* b = dynamic_cast<const Impl*>(back.at(name).get());
    ASSERT_NE(b, nullptr);
    EXPECT_TRUE(a->value() == b->value());
  }
}

TEST(WireTest, AnEmptyValueIsRefusedNamingTheParam) {
  google::protobuf::Map<std::string, v1::AttrValue> w;
  w["nothing"];
  flow_func::AttrMap back;
  Status s = AttrsFromWire(w, &back);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'nothing'"), std::string::npos);
}

}  // namespace
}  // namespace worker
}  // namespace hflow
