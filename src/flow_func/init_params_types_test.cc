// AttrValueImpl / AttrFromJson tests, the accepted forms: every JSON form a
// graph file may use maps to the right GetVal type, every other GetVal
// overload reports FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH (leaving the output
// untouched), the documented conversions (int -> float, int list -> float
// list, empty list -> every list type), DT_* names, and values from the C++
// API. Rejected forms and the DT_* name table: init_params_forms_test.cc.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/init_params.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::AscendString;
using FlowFunc::AttrValue;
using FlowFunc::TensorDataType;
using Json = nlohmann::json;

constexpr int32_t kOk = FlowFunc::FLOW_FUNC_SUCCESS;

std::shared_ptr<const AttrValue> Parse(const std::string& text) {
  std::shared_ptr<const AttrValue> attr;
  Status s = AttrFromJson(Json::parse(text), "attrs.x", &attr);
  EXPECT_TRUE(s.ok()) << text << ": " << s.ToString();
  EXPECT_NE(attr, nullptr) << text;
  return attr;
}

constexpr int32_t kMismatch = FlowFunc::FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;

// Which GetVal overloads succeed on `a`, as a bit set over Kind.
enum Kind {
  kStr,
  kStrList,
  kInt,
  kIntList,
  kIntListList,
  kFloat,
  kFloatList,
  kBool,
  kBoolList,
  kDt,
  kDtList,
  kKindCount
};
const char* const kKindNames[] = {"string",     "string list",   "int",
                                  "int list",   "int list list", "float",
                                  "float list", "bool",          "bool list",
                                  "dtype",      "dtype list"};

// Calls every overload; checks each returns success or the mismatch code
// (nothing else) and that a mismatch leaves the sentinel output untouched.
uint32_t Accepted(const AttrValue& a) {
  uint32_t bits = 0;
  auto note = [&](Kind k, int32_t rc, bool untouched) {
    EXPECT_TRUE(rc == kOk || rc == kMismatch) << kKindNames[k] << ": " << rc;
    if (rc == kOk) {
      bits |= 1u << k;
    } else {
      EXPECT_TRUE(untouched)
          << kKindNames[k] << ": mismatch changed the output";
    }
  };
  {
    AscendString v("sentinel");
    int32_t rc = a.GetVal(v);
    note(kStr, rc, std::string(v.GetString()) == "sentinel");
  }
  {
    std::vector<AscendString> v{AscendString("s")};
    int32_t rc = a.GetVal(v);
    note(kStrList, rc, v.size() == 1 && std::string(v[0].GetString()) == "s");
  }
  {
    int64_t v = -77;
    int32_t rc = a.GetVal(v);
    note(kInt, rc, v == -77);
  }
  {
    std::vector<int64_t> v{-77};
    int32_t rc = a.GetVal(v);
    note(kIntList, rc, v == std::vector<int64_t>{-77});
  }
  {
    std::vector<std::vector<int64_t>> v{{-77}};
    int32_t rc = a.GetVal(v);
    note(kIntListList, rc, v == std::vector<std::vector<int64_t>>{{-77}});
  }
  {
    float v = -77.5f;
    int32_t rc = a.GetVal(v);
    note(kFloat, rc, v == -77.5f);
  }
  {
    std::vector<float> v{-77.5f};
    int32_t rc = a.GetVal(v);
    note(kFloatList, rc, v == std::vector<float>{-77.5f});
  }
  {
    bool v = true;
    int32_t rc = a.GetVal(v);
    note(kBool, rc, v == true);
  }
  {
    std::vector<bool> v{true, true, true};
    int32_t rc = a.GetVal(v);
    note(kBoolList, rc, v == std::vector<bool>{true, true, true});
  }
  {
    TensorDataType v = TensorDataType::DT_DUAL;
    int32_t rc = a.GetVal(v);
    note(kDt, rc, v == TensorDataType::DT_DUAL);
  }
  {
    std::vector<TensorDataType> v{TensorDataType::DT_DUAL};
    int32_t rc = a.GetVal(v);
    note(kDtList, rc,
         v == std::vector<TensorDataType>{TensorDataType::DT_DUAL});
  }
  return bits;
}

uint32_t Bits(std::initializer_list<Kind> kinds) {
  uint32_t b = 0;
  for (Kind k : kinds) b |= 1u << k;
  return b;
}

std::string Describe(uint32_t bits) {
  std::string s;
  for (int k = 0; k < kKindCount; ++k) {
    if (bits & (1u << k))
      s += std::string(s.empty() ? "" : ", ") + kKindNames[k];
  }
  return "{" + s + "}";
}

#define EXPECT_ACCEPTS(attr, ...) \
  EXPECT_EQ(Describe(Accepted(*(attr))), Describe(Bits({__VA_ARGS__})))
TEST(AttrValueTest, IntegerIsIntAndConvertsToFloat) {
  auto a = Parse("42");
  EXPECT_ACCEPTS(a, kInt, kFloat);
  int64_t i = 0;
  EXPECT_EQ(a->GetVal(i), kOk);
  EXPECT_EQ(i, 42);
  float f = 0;
  EXPECT_EQ(a->GetVal(f), kOk);
  EXPECT_EQ(f, 42.0f);
}

TEST(AttrValueTest, NegativeAndLargeIntegersKeepTheirValue) {
  int64_t i = 0;
  EXPECT_EQ(Parse("-5")->GetVal(i), kOk);
  EXPECT_EQ(i, -5);
  EXPECT_EQ(Parse("1099511627776")->GetVal(i), kOk);  // 2^40
  EXPECT_EQ(i, int64_t{1} << 40);
  EXPECT_EQ(Parse("-9223372036854775808")->GetVal(i), kOk);
  EXPECT_EQ(i, INT64_MIN);
}

TEST(AttrValueTest, FloatIsOnlyFloat) {
  auto a = Parse("2.5");
  EXPECT_ACCEPTS(a, kFloat);
  float f = 0;
  EXPECT_EQ(a->GetVal(f), kOk);
  EXPECT_EQ(f, 2.5f);
  // A float literal with an integral value is still a float, not an int.
  EXPECT_ACCEPTS(Parse("3.0"), kFloat);
  EXPECT_ACCEPTS(Parse("1e3"), kFloat);
}

TEST(AttrValueTest, BooleanIsOnlyBool) {
  for (bool b : {true, false}) {
    auto a = Parse(b ? "true" : "false");
    EXPECT_ACCEPTS(a, kBool);
    bool v = !b;
    EXPECT_EQ(a->GetVal(v), kOk);
    EXPECT_EQ(v, b);
  }
}

TEST(AttrValueTest, StringIsOnlyString) {
  auto a = Parse("\"hello world\"");
  EXPECT_ACCEPTS(a, kStr);
  AscendString s;
  EXPECT_EQ(a->GetVal(s), kOk);
  EXPECT_STREQ(s.GetString(), "hello world");
  EXPECT_EQ(s.GetLength(), 11u);
}

TEST(AttrValueTest, StringWithEmbeddedNulKeepsItsLength) {
  auto a = Parse("\"a\\u0000b\"");
  AscendString s;
  ASSERT_EQ(a->GetVal(s), kOk);
  EXPECT_EQ(s.GetLength(), 3u);
}

TEST(AttrValueTest, EmptyStringIsAString) {
  auto a = Parse("\"\"");
  EXPECT_ACCEPTS(a, kStr);
  AscendString s("x");
  EXPECT_EQ(a->GetVal(s), kOk);
  EXPECT_EQ(s.GetLength(), 0u);
}

TEST(AttrValueTest, DtNameIsADataType) {
  auto a = Parse("\"DT_INT32\"");
  EXPECT_ACCEPTS(a, kDt);
  TensorDataType dt = TensorDataType::DT_FLOAT;
  EXPECT_EQ(a->GetVal(dt), kOk);
  EXPECT_EQ(dt, TensorDataType::DT_INT32);
}

TEST(AttrValueTest, NearDtNamesStayStrings) {
  for (const char* text : {"\"dt_int32\"", "\"DT_INT33\"", "\"DT_\"",
                           "\"DT_INT32 \"", "\"DT_UNKNOWN\""}) {
    EXPECT_ACCEPTS(Parse(text), kStr) << text;
  }
}

TEST(AttrValueTest, IntListConvertsToFloatList) {
  auto a = Parse("[1, -2, 3]");
  EXPECT_ACCEPTS(a, kIntList, kFloatList);
  std::vector<int64_t> iv;
  EXPECT_EQ(a->GetVal(iv), kOk);
  EXPECT_EQ(iv, (std::vector<int64_t>{1, -2, 3}));
  std::vector<float> fv;
  EXPECT_EQ(a->GetVal(fv), kOk);
  EXPECT_EQ(fv, (std::vector<float>{1.0f, -2.0f, 3.0f}));
}

TEST(AttrValueTest, NumberListWithAFloatIsAFloatList) {
  auto a = Parse("[1, 2.5, -3]");
  EXPECT_ACCEPTS(a, kFloatList);
  std::vector<float> fv;
  EXPECT_EQ(a->GetVal(fv), kOk);
  EXPECT_EQ(fv, (std::vector<float>{1.0f, 2.5f, -3.0f}));
}

TEST(AttrValueTest, BoolList) {
  auto a = Parse("[true, false, true]");
  EXPECT_ACCEPTS(a, kBoolList);
  std::vector<bool> v;
  EXPECT_EQ(a->GetVal(v), kOk);
  EXPECT_EQ(v, (std::vector<bool>{true, false, true}));
}

TEST(AttrValueTest, StringList) {
  auto a = Parse("[\"a\", \"bc\", \"\"]");
  EXPECT_ACCEPTS(a, kStrList);
  std::vector<AscendString> v;
  EXPECT_EQ(a->GetVal(v), kOk);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_STREQ(v[0].GetString(), "a");
  EXPECT_STREQ(v[1].GetString(), "bc");
  EXPECT_EQ(v[2].GetLength(), 0u);
}

TEST(AttrValueTest, DtNameList) {
  auto a = Parse("[\"DT_FLOAT\", \"DT_INT8\", \"DT_UINT2\"]");
  EXPECT_ACCEPTS(a, kDtList);
  std::vector<TensorDataType> v;
  EXPECT_EQ(a->GetVal(v), kOk);
  EXPECT_EQ(v, (std::vector<TensorDataType>{TensorDataType::DT_FLOAT,
                                            TensorDataType::DT_INT8,
                                            TensorDataType::DT_UINT2}));
}

TEST(AttrValueTest, ListMixingDtNamesAndOtherStringsIsAStringList) {
  for (const char* text :
       {"[\"DT_FLOAT\", \"hello\"]", "[\"hello\", \"DT_FLOAT\"]"}) {
    auto a = Parse(text);
    EXPECT_ACCEPTS(a, kStrList) << text;
    std::vector<AscendString> v;
    ASSERT_EQ(a->GetVal(v), kOk);
    ASSERT_EQ(v.size(), 2u);
  }
}

TEST(AttrValueTest, NestedIntLists) {
  auto a = Parse("[[1, 2], [], [3]]");
  EXPECT_ACCEPTS(a, kIntListList);
  std::vector<std::vector<int64_t>> v;
  EXPECT_EQ(a->GetVal(v), kOk);
  EXPECT_EQ(v, (std::vector<std::vector<int64_t>>{{1, 2}, {}, {3}}));
}

TEST(AttrValueTest, ListOfEmptyListsIsANestedIntList) {
  auto a = Parse("[[]]");
  EXPECT_ACCEPTS(a, kIntListList);
  std::vector<std::vector<int64_t>> v;
  EXPECT_EQ(a->GetVal(v), kOk);
  EXPECT_EQ(v, (std::vector<std::vector<int64_t>>{{}}));
}

TEST(AttrValueTest, EmptyListConvertsToEveryListType) {
  auto a = Parse("[]");
  EXPECT_ACCEPTS(a, kStrList, kIntList, kIntListList, kFloatList, kBoolList,
                 kDtList);
  // And each conversion yields an empty list (the outputs were non-empty).
  std::vector<AscendString> s{AscendString("x")};
  EXPECT_EQ(a->GetVal(s), kOk);
  EXPECT_TRUE(s.empty());
  std::vector<int64_t> i{1};
  EXPECT_EQ(a->GetVal(i), kOk);
  EXPECT_TRUE(i.empty());
  std::vector<std::vector<int64_t>> ii{{1}};
  EXPECT_EQ(a->GetVal(ii), kOk);
  EXPECT_TRUE(ii.empty());
  std::vector<float> f{1};
  EXPECT_EQ(a->GetVal(f), kOk);
  EXPECT_TRUE(f.empty());
  std::vector<bool> b{true};
  EXPECT_EQ(a->GetVal(b), kOk);
  EXPECT_TRUE(b.empty());
  std::vector<TensorDataType> d{TensorDataType::DT_INT8};
  EXPECT_EQ(a->GetVal(d), kOk);
  EXPECT_TRUE(d.empty());
}

TEST(AttrValueTest, ValuesFromTheCppApiMatchExactly) {
  // The C++ graph API builds AttrValueImpl directly.
  AttrValueImpl f(AttrValueImpl::Value{1.5f});
  EXPECT_EQ(Describe(Accepted(f)), Describe(Bits({kFloat})));
  AttrValueImpl fl(AttrValueImpl::Value{std::vector<float>{1.5f}});
  EXPECT_EQ(Describe(Accepted(fl)), Describe(Bits({kFloatList})));
  AttrValueImpl s(AttrValueImpl::Value{std::string("x")});
  EXPECT_EQ(Describe(Accepted(s)), Describe(Bits({kStr})));
  AttrValueImpl dl(AttrValueImpl::Value{
      std::vector<TensorDataType>{TensorDataType::DT_BF16}});
  EXPECT_EQ(Describe(Accepted(dl)), Describe(Bits({kDtList})));
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
