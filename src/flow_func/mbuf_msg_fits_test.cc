// CheckHeadFits: a message from another process or host is refused when
// its head describes more data than came with it, for each kind of
// message, at the boundary and past it (overflowing shapes included).
//
// Thread-safety: single-threaded.
#include <gtest/gtest.h>

#include <cstdint>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::MsgType;
using FlowFunc::TensorDataType;

services::MbufHead Tensor(std::vector<int64_t> shape, uint64_t offset = 0) {
  services::MbufHead h;
  h.msg_type = static_cast<uint16_t>(MsgType::MSG_TYPE_TENSOR_DATA);
  h.dtype = static_cast<int32_t>(TensorDataType::DT_INT64);
  h.shape.assign(shape.begin(), shape.end());
  h.data_offset = offset;
  return h;
}

TEST(CheckHeadFitsTest, TensorFitsExactlyAndNotOneByteLess) {
  EXPECT_TRUE(CheckHeadFits(Tensor({4}), 32).ok());
  EXPECT_TRUE(CheckHeadFits(Tensor({4}, 8), 40).ok());
  const Status s = CheckHeadFits(Tensor({4}, 8), 39);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("32 bytes"), std::string::npos) << s.message();
  EXPECT_FALSE(CheckHeadFits(Tensor({100}), 8).ok());
  EXPECT_FALSE(CheckHeadFits(Tensor({1}, 9), 8).ok());  // offset past the end
}

TEST(CheckHeadFitsTest, OverflowingOrNegativeShapesAreRefused) {
  EXPECT_FALSE(CheckHeadFits(Tensor({int64_t(1) << 62, 8}), 1 << 20).ok());
  EXPECT_FALSE(CheckHeadFits(Tensor({-1}), 1 << 20).ok());
  services::MbufHead empty = Tensor({1 << 20});
  empty.null_data = true;  // no tensor at all: nothing to read
  EXPECT_TRUE(CheckHeadFits(empty, 0).ok());
}

TEST(CheckHeadFitsTest, ListedTensorsAndRawBytes) {
  services::MbufHead list;
  list.msg_type = static_cast<uint16_t>(MsgType::MSG_TYPE_TENSOR_LIST);
  services::TensorDesc a;
  a.dtype = static_cast<int32_t>(TensorDataType::DT_INT32);
  a.shape = {2};
  a.offset = 0;
  a.bytes = 8;
  services::TensorDesc b = a;
  b.offset = 64;
  list.tensor_list = {a, b};
  EXPECT_TRUE(CheckHeadFits(list, 72).ok());
  EXPECT_FALSE(CheckHeadFits(list, 71).ok());
  list.tensor_list[1].bytes = 4;  // smaller than its own shape says
  EXPECT_FALSE(CheckHeadFits(list, 1024).ok());

  services::MbufHead raw;
  raw.msg_type = static_cast<uint16_t>(MsgType::MSG_TYPE_RAW_MSG);
  raw.shape = {100};
  EXPECT_TRUE(CheckHeadFits(raw, 100).ok());
  EXPECT_FALSE(CheckHeadFits(raw, 99).ok());
  raw.shape = {-5};
  EXPECT_FALSE(CheckHeadFits(raw, 99).ok());
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
