// Unit tests of writing .npy files (--output-npy): what NpyBytes writes
// reads back through the .npy reader with the same dtype, shape and bytes,
// with numpy's header layout, and unwritable paths are clear errors.
//
// Thread-safety: single-threaded.
#include "tools/npy_file.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hflow::tools {
namespace {

Tensor RoundTrip(const Tensor& t) {
  Tensor back;
  Status s = ParseNpyBytes(NpyBytes(t), "mem", &back);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return back;
}

TEST(NpyFileTest, WritesWhatTheReaderReadsBack) {
  for (const std::vector<int64_t>& shape :
       {std::vector<int64_t>{}, {3}, {1, 3}, {3, 1, 1}}) {
    Tensor t = Tensor::From<int32_t>(DataType::kInt32, shape, {7, -1, 9});
    if (shape.empty()) t.data.resize(4);
    Tensor back = RoundTrip(t);
    EXPECT_EQ(back.dtype, DataType::kInt32);
    EXPECT_EQ(back.shape, shape);
    EXPECT_EQ(back.data, t.data);
  }
  Tensor f = Tensor::From<double>(DataType::kDouble, {2}, {0.5, -2});
  EXPECT_EQ(RoundTrip(f).As<double>(), (std::vector<double>{0.5, -2}));
  Tensor b = Tensor::From<uint8_t>(DataType::kBool, {2}, {1, 0});
  EXPECT_EQ(RoundTrip(b).dtype, DataType::kBool);
}

TEST(NpyFileTest, HeaderIsNumpysLayout) {
  std::string bytes =
      NpyBytes(Tensor::From<float>(DataType::kFloat, {3}, {1, 2, 3}));
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  size_t header_len =
      static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);  // data starts 64-aligned
  std::string header = bytes.substr(10, header_len);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(header.rfind(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0),
            0u)
      << header;
  EXPECT_EQ(bytes.size(), 10 + header_len + 12);
}

TEST(NpyFileTest, Bfloat16GoesOutAsItsBits) {
  Tensor t = Tensor::From<uint16_t>(DataType::kBf16, {1}, {0x3F80});
  Tensor back = RoundTrip(t);
  EXPECT_EQ(back.dtype, DataType::kUint16);
  EXPECT_EQ(back.data, t.data);
}

TEST(NpyFileTest, UnwritablePathNamesIt) {
  Status s = WriteNpyFile("/nonexistent/dir/x.npy",
                          Tensor::From<int8_t>(DataType::kInt8, {1}, {1}));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/dir/x.npy"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace hflow::tools
