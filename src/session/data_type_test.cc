// The host API's DataType helpers read the one dtype table: every type with
// a host name round-trips through its name and has the table's size (bf16
// included), GE names round-trip through the attr parser's lookup, and
// unknown values are refused.
#include <gtest/gtest.h>

#include <string>

#include "flow_func/init_params.h"
#include "flow_func/lib/flow_func_internal.h"
#include "hflow/session.h"

namespace hflow {
namespace {

TEST(DataTypeTable, HostAndGeNamesRoundTripWithTheTablesSizes) {
  size_t host_types = 0;
  for (const auto& d : FlowFunc::internal::AllDataTypes()) {
    FlowFunc::TensorDataType ge;
    ASSERT_TRUE(flow_func::ParseDataTypeName(d.ge_name, &ge)) << d.ge_name;
    EXPECT_EQ(ge, d.dtype);
    EXPECT_STREQ(flow_func::DataTypeName(d.dtype), d.ge_name);
    if (d.host_name == nullptr) continue;
    ++host_types;
    DataType dt;
    ASSERT_TRUE(ParseDataTypeName(d.host_name, &dt)) << d.host_name;
    EXPECT_EQ(static_cast<int32_t>(dt), static_cast<int32_t>(d.dtype));
    EXPECT_STREQ(DataTypeName(dt), d.host_name);
    EXPECT_EQ(DataTypeSize(dt) * 8, static_cast<size_t>(d.bits)) << d.host_name;
  }
  EXPECT_EQ(host_types, 13u);
  DataType dt;
  ASSERT_TRUE(ParseDataTypeName("bfloat16", &dt));
  EXPECT_EQ(dt, DataType::kBf16);
  EXPECT_EQ(DataTypeSize(DataType::kBf16), 2u);
  ASSERT_TRUE(ParseDataTypeName("double", &dt));  // numpy alias
  EXPECT_EQ(dt, DataType::kDouble);
  EXPECT_FALSE(ParseDataTypeName("float128", &dt));
  EXPECT_EQ(DataTypeSize(static_cast<DataType>(5)), 0u);             // a gap
  EXPECT_STREQ(DataTypeName(static_cast<DataType>(29)), "unknown");  // int4
}

}  // namespace
}  // namespace hflow
