// Unit tests of the `hflow run` value syntax (DTYPE:..., DTYPE[...]:...,
// @file.npy), its errors and the 16-bit float conversions. .npy files are
// written byte by byte into a temp dir, so the tests need no NumPy.
//
// Thread-safety: single-threaded; each test uses its own temp dir.
#include "tools/input_value.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "tools/npy_file.h"

namespace hflow::tools {
namespace {

Tensor MustParse(const std::string& text) {
  Tensor t;
  Status s = ParseInputValue(text, &t);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return t;
}

// The error message for `text`, which must fail with kInvalidArgument.
std::string ErrorOf(const std::string& text) {
  Tensor t;
  Status s = ParseInputValue(text, &t);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
  return s.message();
}

#define EXPECT_HAS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

TEST(InputValueTest, OneDimensionalInt32) {
  Tensor t = MustParse("int32:1,-2,3");
  EXPECT_EQ(t.dtype, DataType::kInt32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(t.As<int32_t>(), (std::vector<int32_t>{1, -2, 3}));
  // Blanks around values are allowed.
  EXPECT_EQ(MustParse("int32: 4 , 5").As<int32_t>(),
            (std::vector<int32_t>{4, 5}));
}

TEST(InputValueTest, ShapedScalarAndEmpty) {
  Tensor t = MustParse("float32[2,2]:1,2.5,-3,4e2");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t.As<float>(), (std::vector<float>{1, 2.5f, -3, 400}));
  Tensor s = MustParse("int64[]:7");
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.As<int64_t>(), (std::vector<int64_t>{7}));
  Tensor e = MustParse("int32:");
  EXPECT_EQ(e.shape, (std::vector<int64_t>{0}));
  EXPECT_TRUE(e.data.empty());
  Tensor z = MustParse("uint8[2,0]:");
  EXPECT_EQ(z.shape, (std::vector<int64_t>{2, 0}));
}

TEST(InputValueTest, IntegerRangesPerDtype) {
  EXPECT_EQ(MustParse("int8:-128,127").As<int8_t>(),
            (std::vector<int8_t>{-128, 127}));
  EXPECT_EQ(MustParse("uint8:0,255").As<uint8_t>(),
            (std::vector<uint8_t>{0, 255}));
  EXPECT_EQ(MustParse("int16:-32768").As<int16_t>()[0], -32768);
  EXPECT_EQ(MustParse("uint16:65535").As<uint16_t>()[0], 65535);
  EXPECT_EQ(MustParse("uint32:4294967295").As<uint32_t>()[0], 4294967295u);
  EXPECT_EQ(MustParse("int64:-9223372036854775808").As<int64_t>()[0],
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(MustParse("uint64:18446744073709551615").As<uint64_t>()[0],
            std::numeric_limits<uint64_t>::max());
  EXPECT_HAS(ErrorOf("int8:1,128"), "bad int8 value '128' at position 2");
  EXPECT_HAS(ErrorOf("uint8:-1"), "bad uint8 value '-1' at position 1");
  EXPECT_HAS(ErrorOf("uint64:-1"), "position 1");
  EXPECT_HAS(ErrorOf("int64:9223372036854775808"), "position 1");
  EXPECT_HAS(ErrorOf("int32:1,2.5"), "bad int32 value '2.5' at position 2");
  EXPECT_HAS(ErrorOf("int32:1,,3"), "value '' at position 2");
}

TEST(InputValueTest, FloatsAndAliases) {
  EXPECT_EQ(MustParse("float:0.1").As<float>()[0], 0.1f);
  EXPECT_EQ(MustParse("double:0.1").As<double>()[0], 0.1);
  EXPECT_EQ(MustParse("float64:1e300").dtype, DataType::kDouble);
  EXPECT_EQ(MustParse("fp32:1").dtype, DataType::kFloat);
  EXPECT_EQ(MustParse("half:1").dtype, DataType::kFloat16);
  EXPECT_EQ(MustParse("bf16:1").dtype, DataType::kBf16);
  EXPECT_TRUE(std::isinf(MustParse("float32:-inf").As<float>()[0]));
  EXPECT_HAS(ErrorOf("float32:1e39"), "bad float32 value '1e39' at position 1");
  EXPECT_HAS(ErrorOf("float32:1x"), "position 1");
}

TEST(InputValueTest, Float16AndBfloat16Encoding) {
  auto bits = [](const std::string& text) {
    return MustParse(text).As<uint16_t>();
  };
  EXPECT_EQ(bits("float16:1,-2,0.1,65504,0"),
            (std::vector<uint16_t>{0x3C00, 0xC000, 0x2E66, 0x7BFF, 0}));
  // Smallest subnormal 2^-24 and a value that rounds to zero.
  EXPECT_EQ(bits("float16:6e-8,1e-8"), (std::vector<uint16_t>{1, 0}));
  EXPECT_HAS(ErrorOf("float16:65520"), "bad float16 value '65520'");
  EXPECT_EQ(bits("bfloat16:1,3.14159,-0.5"),
            (std::vector<uint16_t>{0x3F80, 0x4049, 0xBF00}));
}

TEST(InputValueTest, HalfConversionsRoundTripEveryValue) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    uint16_t h = static_cast<uint16_t>(b);
    float f = HalfToFloat(h);
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), h) << std::hex << b;
    ASSERT_EQ(FloatToBf16(Bf16ToFloat(h)), h) << std::hex << b;
  }
  // Halfway between 1 and the next half (1 + 2^-10): ties to even.
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
}

TEST(InputValueTest, Bool) {
  EXPECT_EQ(MustParse("bool:true,false,1,0,True").As<uint8_t>(),
            (std::vector<uint8_t>{1, 0, 1, 0, 1}));
  EXPECT_HAS(ErrorOf("bool:true,yes"), "bad bool value 'yes' at position 2");
}

TEST(InputValueTest, SyntaxErrorsNameTheInput) {
  EXPECT_HAS(ErrorOf("int32"),
             "input value 'int32': no ':' between the dtype and the values; "
             "write DTYPE:");
  EXPECT_HAS(
      ErrorOf("int33:1"),
      "input value 'int33:1': dtype: unknown dtype 'int33'; use one of int8");
  EXPECT_HAS(ErrorOf("int32[2,2]:1,2,3"),
             "values: shape [2,2] needs 4 values, got 3; give one");
  EXPECT_HAS(ErrorOf("int32[]:1,2"), "shape [] needs 1 values, got 2");
  EXPECT_HAS(ErrorOf("int32[2,x]:1,2"), "shape: dimension 'x'");
  EXPECT_HAS(ErrorOf("int32[-1]:1"), "dimension '-1'");
  EXPECT_HAS(ErrorOf("int32[2:1,2"),
             "shape: '[2' is not closed; write the shape as [d0,d1,...]");
  EXPECT_HAS(ErrorOf("@"), "input value '@': '@' names no file; write @");
}

TEST(InputValueTest, InputArg) {
  std::string name;
  Tensor t;
  ASSERT_TRUE(ParseInputArg("a=int32:1,2", &name, &t).ok());
  EXPECT_EQ(name, "a");
  EXPECT_EQ(t.As<int32_t>(), (std::vector<int32_t>{1, 2}));
  Status s = ParseInputArg("int32:1", &name, &t);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_HAS(s.message(),
             "--input 'int32:1': expected NAME=VALUE; write e.g. a=int32");
  EXPECT_HAS(ParseInputArg("=int32:1", &name, &t).message(), "NAME=VALUE");
  EXPECT_HAS(ParseInputArg("b=int32:z", &name, &t).message(),
             "--input 'b=int32:z': values: bad int32 value 'z' at position 1");
}

class InputValueNpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "hflow_npy_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    (void)std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  // Writes an .npy file of format `major` with header dict `dict`, padded
  // as NumPy does, followed by `data`; returns its path.
  std::string Write(const std::string& name, int major, const std::string& dict,
                    const std::string& data) {
    size_t len_size = major == 1 ? 2 : 4;
    std::string header = dict;
    size_t total = 8 + len_size + header.size() + 1;
    header += std::string((64 - total % 64) % 64, ' ') + "\n";
    std::string bytes = "\x93NUMPY";
    bytes += static_cast<char>(major);
    bytes += '\0';
    for (size_t i = 0; i < len_size; ++i) {
      bytes += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
    }
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes << header << data;
    return path;
  }

  template <typename T>
  static std::string Bytes(const std::vector<T>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()),
                       v.size() * sizeof(T));
  }

  Tensor MustLoad(const std::string& path) {
    Tensor t;
    Status s = ParseInputValue("@" + path, &t);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return t;
  }

  std::string LoadError(const std::string& path) {
    Tensor t;
    Status s = ParseInputValue("@" + path, &t);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    return s.message();
  }

  std::string dir_;
};

TEST_F(InputValueNpyTest, ReadsSeveralDtypesAndVersions) {
  std::vector<int32_t> i32 = {1, 2, 3, 4, 5, 6};
  Tensor t = MustLoad(
      Write("i4.npy", 1,
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
            Bytes(i32)));
  EXPECT_EQ(t.dtype, DataType::kInt32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.As<int32_t>(), i32);

  std::vector<float> f32 = {0.5f, -1.25f, 3};
  t = MustLoad(Write(
      "f4.npy", 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
      Bytes(f32)));
  EXPECT_EQ(t.dtype, DataType::kFloat);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(t.As<float>(), f32);

  std::vector<double> f8 = {2.5};
  t = MustLoad(
      Write("f8.npy", 3,
            "{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": ()}",
            Bytes(f8)));
  EXPECT_EQ(t.dtype, DataType::kDouble);
  EXPECT_TRUE(t.shape.empty());
  EXPECT_EQ(t.As<double>(), f8);

  std::vector<uint8_t> b1 = {1, 0, 1};
  t = MustLoad(Write(
      "b1.npy", 1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }",
      Bytes(b1)));
  EXPECT_EQ(t.dtype, DataType::kBool);
  EXPECT_EQ(t.data, b1);

  std::vector<uint16_t> f2 = {0x3C00, 0xC000};
  t = MustLoad(Write(
      "f2.npy", 1, "{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }",
      Bytes(f2)));
  EXPECT_EQ(t.dtype, DataType::kFloat16);
  EXPECT_EQ(t.As<uint16_t>(), f2);

  std::vector<int64_t> i8 = {-1, 1LL << 40};
  t = MustLoad(
      Write("i8.npy", 1,
            "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }",
            Bytes(i8)));
  EXPECT_EQ(t.dtype, DataType::kInt64);
  EXPECT_EQ(t.As<int64_t>(), i8);

  std::vector<uint8_t> u1 = {7, 255};
  t = MustLoad(Write(
      "u1.npy", 1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2,), }",
      Bytes(u1)));
  EXPECT_EQ(t.dtype, DataType::kUint8);
  EXPECT_EQ(t.data, u1);
}

TEST_F(InputValueNpyTest, RejectsWhatItCannotRead) {
  std::string four(4, '\0');
  EXPECT_HAS(
      LoadError(Write(
          "be.npy", 1,
          "{'descr': '>i4', 'fortran_order': False, 'shape': (1,), }", four)),
      "big-endian dtype '>i4' is not supported");
  EXPECT_HAS(
      LoadError(Write(
          "fo.npy", 1,
          "{'descr': '<i4', 'fortran_order': True, 'shape': (1,), }", four)),
      "Fortran-order arrays are not supported");
  EXPECT_HAS(
      LoadError(Write(
          "short.npy", 1,
          "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", four)),
      "holds 4 data bytes; shape [2] of int32 needs 8");
  EXPECT_HAS(LoadError(Write(
                 "c8.npy", 1,
                 "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                 four + four)),
             "dtype '<c8' is not supported");
  EXPECT_HAS(LoadError(Write("noshape.npy", 1,
                             "{'descr': '<i4', 'fortran_order': False}", four)),
             "no 'shape'");
  std::string v9 = Write("v9.npy", 9, "{}", "");
  EXPECT_HAS(LoadError(v9), "unsupported format version 9.0");

  std::string plain = dir_ + "/plain.npy";
  std::ofstream(plain) << "just text, not numpy";
  std::string err = LoadError(plain);
  EXPECT_HAS(err, "NumPy file '" + plain + "': not a .npy file");

  std::string missing = dir_ + "/missing.npy";
  err = LoadError(missing);
  EXPECT_HAS(err, "input value '@" + missing + "': cannot open NumPy file '" +
                      missing + "'");
}

// Found by review while writing the fuzz target (regression input in
// fuzz/regressions/input_value/): the needed byte count, elements * width,
// wrapped around size_t, so shape (2**61,) of '<f8' "needed" 0 bytes and an
// empty file loaded as a tensor of 2^61 doubles with no data.
TEST_F(InputValueNpyTest, ShapeWhoseByteCountOverflowsIsRejected) {
  EXPECT_HAS(LoadError(Write("wrap.npy", 1,
                             "{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (2305843009213693952,), }",
                             "")),
             "holds 0 data bytes; shape [2305843009213693952] of float64 "
             "needs more than fit in memory");
  EXPECT_HAS(LoadError(Write("dims.npy", 1,
                             "{'descr': '|u1', 'fortran_order': False, "
                             "'shape': (4294967296, 4294967296), }",
                             "")),
             "shape [4294967296,4294967296] of uint8 needs more than fit in "
             "memory");
}

// numpy stores bools as bytes 0 and 1; other bytes are a corrupt file and
// used to reach the UDF as a bool that is neither true nor false.
TEST_F(InputValueNpyTest, BoolBytesMustBeZeroOrOne) {
  EXPECT_HAS(LoadError(Write("b1.npy", 1,
                             "{'descr': '|b1', 'fortran_order': False, "
                             "'shape': (3,), }",
                             std::string("\x01\x00\x02", 3))),
             "bool element 2 is byte 2, not 0 or 1");
}

TEST(InputValueTest, ParseNpyBytesReadsMemoryAndNamesTheSource) {
  std::string header =
      "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
  header += std::string((64 - (10 + header.size() + 1) % 64) % 64, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size());
  bytes += '\0';
  bytes += header;
  bytes += std::string("\x05\x00\xff\xff", 4);
  Tensor t;
  Status s = ParseNpyBytes(bytes, "mem", &t);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(t.dtype, DataType::kInt16);
  EXPECT_EQ(t.As<int16_t>(), (std::vector<int16_t>{5, -1}));
  EXPECT_HAS(ParseNpyBytes(bytes.substr(0, 9), "mem", &t).message(),
             "NumPy file 'mem': not a .npy file");
}

TEST(InputValueTest, ShapeWhoseElementCountOverflowsIsRejected) {
  Tensor t;
  EXPECT_HAS(ParseInputValue("int8[4294967296,4294967296]:1", &t).message(),
             "shape: [4294967296,4294967296] has more elements than fit "
             "in memory; check the dimensions");
}

}  // namespace
}  // namespace hflow::tools
