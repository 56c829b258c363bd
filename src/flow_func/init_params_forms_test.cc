// AttrFromJson / AttrMapFromJson tests, rejected forms and DT_* names:
// numbers outside the attribute types, mixed lists, objects and null are
// rejected naming their path; maps convert every key and name the bad one;
// and the DT_* name table round-trips against tensor_data_type.h.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/init_params.h"

namespace hflow {
namespace flow_func {
namespace {

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

// ---- Rejected forms ----

void ExpectRejected(const std::string& text, const std::string& where) {
  std::shared_ptr<const AttrValue> attr;
  Status s = AttrFromJson(Json::parse(text), where, &attr);
  EXPECT_FALSE(s.ok()) << text;
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument)
      << text << ": " << s.ToString();
  EXPECT_NE(s.ToString().find(where), std::string::npos)
      << text << ": message does not name the path: " << s.ToString();
  EXPECT_EQ(attr, nullptr) << text;
}

// Found by fuzzing the graph file (issue 8): these used to be bent into
// another value (an unsigned beyond int64 wrapped to -1, 1e300 became inf).
TEST(AttrValueTest, NumbersOutsideTheAttributeTypesAreRejected) {
  const std::string where = "graph.json: nodes[0].init_params.n";
  for (const char* text : {"18446744073709551615", "9223372036854775808",
                           "1e300", "-1e39", "[1, 18446744073709551615]",
                           "[1.5, 1e300]", "[[1, 2], [9223372036854775808]]"}) {
    ExpectRejected(text, where);
  }
  int64_t i = 0;
  EXPECT_EQ(Parse("9223372036854775807")->GetVal(i), kOk);  // INT64_MAX fits
  EXPECT_EQ(i, INT64_MAX);
  float f = 0;
  EXPECT_EQ(Parse("3.4e38")->GetVal(f), kOk);  // within float
}

TEST(AttrValueTest, MixedListsAreRejectedNamingThePath) {
  const std::string where = "graph.json: nodes[2].init_params.bias";
  for (const char* text :
       {"[1, \"a\"]", "[true, 1]", "[1, true]", "[\"a\", true]",
        "[\"DT_FLOAT\", 1]", "[[1], 2]", "[1, [2]]", "[[1], [2.5]]",
        "[[1], [\"a\"]]", "[[[1]]]", "[1.5, \"x\"]"}) {
    ExpectRejected(text, where);
  }
}

TEST(AttrValueTest, ObjectsAndNullAreRejectedNamingThePath) {
  const std::string where = "graph.json: nodes[0].init_params.cfg";
  for (const char* text : {"{}", "{\"a\": 1}", "null", "[null]", "[{}]",
                           "[1, null]", "[[1], null]"}) {
    ExpectRejected(text, where);
  }
}

TEST(AttrValueTest, MapConvertsEveryKeyAndNamesTheBadOne) {
  AttrMap m;
  Status s = AttrMapFromJson(
      Json::parse(R"({"a": 1, "b": "DT_FLOAT", "c": [1.5], "d": []})"),
      "graph.json: nodes[1].init_params", &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(m.size(), 4u);
  int64_t a = 0;
  EXPECT_EQ(m.at("a")->GetVal(a), kOk);
  EXPECT_EQ(a, 1);
  TensorDataType b = TensorDataType::DT_INT8;
  EXPECT_EQ(m.at("b")->GetVal(b), kOk);
  EXPECT_EQ(b, TensorDataType::DT_FLOAT);
  std::vector<float> c;
  EXPECT_EQ(m.at("c")->GetVal(c), kOk);
  EXPECT_EQ(c, std::vector<float>{1.5f});
  std::vector<TensorDataType> d{TensorDataType::DT_INT8};
  EXPECT_EQ(m.at("d")->GetVal(d), kOk);
  EXPECT_TRUE(d.empty());

  AttrMap bad;
  s = AttrMapFromJson(Json::parse(R"({"ok": 1, "weights": [1, "x"]})"),
                      "graph.json: nodes[3].init_params", &bad);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.ToString().find("graph.json: nodes[3].init_params.weights"),
            std::string::npos)
      << s.ToString();

  s = AttrMapFromJson(Json::parse(R"({"n": null})"),
                      "g.json: nodes[4].init_params", &bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("g.json: nodes[4].init_params.n"),
            std::string::npos)
      << s.ToString();
}

TEST(AttrValueTest, MapMustBeAnObject) {
  for (const char* text : {"[]", "1", "\"x\"", "null", "[{\"a\": 1}]"}) {
    AttrMap m;
    Status s = AttrMapFromJson(Json::parse(text),
                               "graph.json: nodes[0].init_params", &m);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_NE(s.ToString().find("graph.json: nodes[0].init_params"),
              std::string::npos)
        << s.ToString();
  }
}

TEST(AttrValueTest, EmptyObjectIsAnEmptyMap) {
  AttrMap m;
  EXPECT_TRUE(AttrMapFromJson(Json::object(), "x", &m).ok());
  EXPECT_TRUE(m.empty());
}

// ---- DT_* names ----

// Every enumerator of tensor_data_type.h, read from the header itself so a
// new type without a name in the table fails here.
std::vector<std::pair<std::string, int>> HeaderDtNames() {
  std::ifstream in(std::string(HFLOW_SOURCE_DIR) +
                   "/include/flow_func/tensor_data_type.h");
  EXPECT_TRUE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  std::vector<std::pair<std::string, int>> out;
  std::regex re(R"((DT_[A-Z0-9_]+)\s*=\s*(\d+)\s*,)");
  for (std::sregex_iterator it(text.begin(), text.end(), re), end; it != end;
       ++it) {
    out.emplace_back((*it)[1].str(), std::stoi((*it)[2].str()));
  }
  return out;
}

TEST(AttrValueTest, ParseAndNameRoundTripForEveryHeaderDtName) {
  auto names = HeaderDtNames();
  ASSERT_EQ(names.size(), 23u) << "tensor_data_type.h changed?";
  for (const auto& [name, value] : names) {
    TensorDataType dt = TensorDataType::DT_UNDEFINED;
    ASSERT_TRUE(ParseDataTypeName(name, &dt)) << name;
    EXPECT_EQ(static_cast<int>(dt), value) << name;
    EXPECT_STREQ(DataTypeName(dt), name.c_str()) << name;
    // And as an attribute.
    TensorDataType from_attr = TensorDataType::DT_UNDEFINED;
    EXPECT_EQ(Parse("\"" + name + "\"")->GetVal(from_attr), kOk) << name;
    EXPECT_EQ(from_attr, dt) << name;
  }
}

TEST(AttrValueTest, ListOfEveryDtName) {
  auto names = HeaderDtNames();
  Json list = Json::array();
  std::vector<TensorDataType> want;
  for (const auto& [name, value] : names) {
    list.push_back(name);
    want.push_back(static_cast<TensorDataType>(value));
  }
  std::shared_ptr<const AttrValue> a;
  ASSERT_TRUE(AttrFromJson(list, "x", &a).ok());
  std::vector<TensorDataType> got;
  EXPECT_EQ(a->GetVal(got), kOk);
  EXPECT_EQ(got, want);
}

TEST(AttrValueTest, UnknownDtNamesAndValues) {
  TensorDataType dt = TensorDataType::DT_BOOL;
  for (const char* name : {"", "DT_", "dt_float", "DT_FLOAT ", "FLOAT",
                           "DT_FLOAT32", "DT_STRING"}) {
    EXPECT_FALSE(ParseDataTypeName(name, &dt)) << name;
    EXPECT_EQ(dt, TensorDataType::DT_BOOL) << "output changed for " << name;
  }
  EXPECT_STREQ(DataTypeName(TensorDataType::DT_UNDEFINED), "DT_UNDEFINED");
  EXPECT_STREQ(DataTypeName(static_cast<TensorDataType>(5)), "DT_UNDEFINED");
  EXPECT_STREQ(DataTypeName(static_cast<TensorDataType>(-1)), "DT_UNDEFINED");
  EXPECT_STREQ(DataTypeName(static_cast<TensorDataType>(1000)), "DT_UNDEFINED");
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
