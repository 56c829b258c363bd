// Unit tests of the result lines of `hflow run`: every dtype, the strings
// for NaN and the infinities, failed results with their code name and
// error node, and exact read-back of float text.
//
// Thread-safety: single-threaded.
#include "tools/result_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tools/input_value.h"
#include "tools/ret_codes.h"

namespace hflow::tools {
namespace {

Tensor MustParse(const std::string& text) {
  Tensor t;
  Status s = ParseInputValue(text, &t);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  return t;
}

TEST(ResultJsonTest, FormatsEveryDtype) {
  EXPECT_EQ(OutputJsonLine(0, 1, 0, MustParse("int32:2,3,4")),
            R"({"output":0,"trans_id":1,"ret_code":0,"dtype":"int32",)"
            R"("shape":[3],"data":[2,3,4]})");
  EXPECT_EQ(OutputJsonLine(1, 7, 0, MustParse("float32[2]:0.1,100")),
            R"({"output":1,"trans_id":7,"ret_code":0,"dtype":"float32",)"
            R"("shape":[2],"data":[0.1,100]})");
  auto data = [](const std::string& text) {
    std::string line = OutputJsonLine(0, 1, 0, MustParse(text));
    return line.substr(line.find("\"data\":") + 7);
  };
  EXPECT_EQ(data("float32:0.3333333333,1e20,-0"), "[0.33333334,1e+20,-0]}");
  EXPECT_EQ(data("float64:0.1,0.3333333333333333"),
            "[0.1,0.3333333333333333]}");
  EXPECT_EQ(data("float32:nan,inf,-inf"), R"(["NaN","Infinity","-Infinity"]})");
  EXPECT_EQ(data("float64:nan,-inf"), R"(["NaN","-Infinity"]})");
  EXPECT_EQ(data("float16:inf,nan"), R"(["Infinity","NaN"]})");
  EXPECT_EQ(data("bfloat16:-inf"), R"(["-Infinity"]})");
  EXPECT_EQ(data("float16:0.1,1,-2.5,65504"), "[0.1,1,-2.5,65504]}");
  EXPECT_EQ(data("bfloat16:3.14159,1"), "[3.14,1]}");
  EXPECT_EQ(data("bool:true,false"), "[true,false]}");
  EXPECT_EQ(data("int64:-9223372036854775808"), "[-9223372036854775808]}");
  EXPECT_EQ(data("uint64:18446744073709551615"), "[18446744073709551615]}");
  EXPECT_EQ(data("int8:-5"), "[-5]}");
  EXPECT_EQ(OutputJsonLine(0, 3, 0, MustParse("int32[]:9")),
            R"({"output":0,"trans_id":3,"ret_code":0,"dtype":"int32",)"
            R"("shape":[],"data":[9]})");
}

TEST(ResultJsonTest, FailedMessageHasNoData) {
  EXPECT_EQ(OutputJsonLine(0, 2, 164000, Tensor{}),
            R"({"output":0,"trans_id":2,"ret_code":164000,)"
            R"("ret_name":"FLOW_FUNC_ERR_PARAM_INVALID"})");
  FlowInfo info;
  info.transaction_id = 4;
  info.ret_code = 9900001;
  info.error_node = "st\"ep";
  std::string line;
  AppendOutputJson(1, info, Tensor{}, &line);
  EXPECT_EQ(line, R"({"output":1,"trans_id":4,"ret_code":9900001,)"
                  R"("ret_name":"user-defined","error_node":"st\"ep"})");
}

TEST(ResultJsonTest, CodeNames) {
  EXPECT_STREQ(RetCodeName(0), "FLOW_FUNC_SUCCESS");
  EXPECT_STREQ(RetCodeName(564000), "FLOW_FUNC_FAILED");
  EXPECT_STREQ(RetCodeName(164001), "FLOW_FUNC_ERR_ATTR_NOT_EXITS");
  EXPECT_STREQ(RetCodeName(564103), "FLOW_FUNC_ERR_EVENT_ERROR");
  EXPECT_STREQ(RetCodeName(9999999), "user-defined");
  EXPECT_STREQ(RetCodeName(-1), "unknown");
}

// Every finite value of a 16-bit float prints as text that reads back to
// the same bits (the digit search of the small floats).
TEST(ResultJsonTest, HalfTextReadsBackForEveryValue) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    for (DataType dt : {DataType::kFloat16, DataType::kBf16}) {
      uint16_t bits = static_cast<uint16_t>(b);
      Tensor t = Tensor::From<uint16_t>(dt, {1}, {bits});
      double v =
          dt == DataType::kFloat16 ? HalfToFloat(bits) : Bf16ToFloat(bits);
      if (!std::isfinite(v)) continue;
      std::string line = OutputJsonLine(0, 1, 0, t);
      std::string text = line.substr(line.find("\"data\":[") + 8);
      double back = std::strtod(text.c_str(), nullptr);
      uint16_t again =
          dt == DataType::kFloat16 ? DoubleToHalf(back) : DoubleToBf16(back);
      // -0 and 0 differ in bits and both print their sign.
      ASSERT_EQ(again, bits) << line;
    }
  }
}

TEST(ResultJsonTest, FloatTextReadsBackExactly) {
  for (float f : {0.1f, 1.0f / 3, 123456.789f, 1e-45f, 3.4028235e38f, -7e-3f}) {
    std::string line = OutputJsonLine(
        0, 1, 0, Tensor::From<float>(DataType::kFloat, {1}, {f}));
    std::string text = line.substr(line.find("\"data\":[") + 8);
    EXPECT_EQ(std::strtof(text.c_str(), nullptr), f) << line;
  }
}

}  // namespace
}  // namespace hflow::tools
