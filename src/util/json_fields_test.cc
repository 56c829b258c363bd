// Unit tests for util::JsonFields, the field checker of hflow's config
// parsers: the one error wording "<source>: <path>: <problem>; <hint>",
// typed readers with their ranges, the unknown-key check with its "did you
// mean" suggestion, and bounded-depth parsing.
//
// Thread-safety: single-threaded tests.
#include "util/json_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace hflow {
namespace util {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// Expects kInvalidArgument with exactly `message`.
void ExpectError(const Status& s, const std::string& message) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), message);
}

TEST(JsonFieldsTest, OneWordingForEveryError) {
  ExpectError(FieldError("a.json", "x[1]", "is wrong", "fix it"),
              "a.json: x[1]: is wrong; fix it");
  ExpectError(FieldError("a.json", "", "is wrong", ""), "a.json: is wrong");
  const JsonFields f("a.json");
  ExpectError(f.Error("x", "is wrong", "fix it"),
              "a.json: x: is wrong; fix it");
  EXPECT_EQ(JsonFields("", "<cluster config>").source(), "<cluster config>");
  EXPECT_EQ(JsonFields("--input 'a=int32:1'").source(), "--input 'a=int32:1'");
}

TEST(JsonFieldsTest, PathsAndDescriptions) {
  EXPECT_EQ(JsonPath("", "name"), "name");
  EXPECT_EQ(JsonPath("nodes[0]", "name"), "nodes[0].name");
  EXPECT_EQ(JsonPath("nodes", 3), "nodes[3]");
  EXPECT_EQ(DescribeJson(Json("32XB")), "string \"32XB\"");
  EXPECT_EQ(DescribeJson(Json::array({1, 2})), "array [1,2]");
  const std::string long_text = DescribeJson(Json(std::string(100, 'x')));
  EXPECT_EQ(long_text.size(), std::string("string ").size() + 40);
  EXPECT_THAT(long_text, ::testing::EndsWith("..."));
}

TEST(JsonFieldsTest, ParseNamesTheDocumentAndPosition) {
  const JsonFields f("a.json");
  Json root;
  ASSERT_TRUE(f.Parse(R"({"a": [1]})", &root).ok());
  EXPECT_EQ(root["a"][0], 1);
  Status s = f.Parse("{\"a\": [1,\n 2,]}", &root);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("a.json: (document): malformed JSON: parse error at "
                        "line 2"));
  EXPECT_THAT(
      s.message(),
      HasSubstr("; check brackets, commas and quotes at that position"));
  s = f.Parse(std::string(1000, '[') + std::string(1000, ']'), &root);
  EXPECT_THAT(s.message(),
              HasSubstr("a.json: (document): malformed JSON: nested deeper "
                        "than 64 levels"));
}

TEST(JsonFieldsTest, UnknownKeysNameThePathAndTheKnownKeys) {
  const JsonFields f("d.json");
  const Json obj = Json::parse(
      R"({"logic_device_list": "0:0:1", "description": "x", "comment": 1,
          "_note": 2, "invoke_list": []})");
  EXPECT_TRUE(f.Keys(obj, "e[0]", {"logic_device_list"}, {"invoke_list"}).ok());
  ExpectError(f.Keys(Json::parse(R"({"logic_device_lst": 1})"), "e[0]",
                     {"flow_node_list", "logic_device_list"}, {"invoke_list"}),
              "d.json: e[0].logic_device_lst: unknown field; known fields: "
              "flow_node_list, logic_device_list (accepted and ignored: "
              "invoke_list); did you mean \"logic_device_list\"?");
  // A key far from every known one gets no guess; at the top level the
  // path is the key alone.
  ExpectError(f.Keys(Json::parse(R"({"hosts": 1})"), "", {"devices"}),
              "d.json: hosts: unknown field; known fields: devices");
  // Short keys need a close match: "ab" is not a typo of "id".
  EXPECT_THAT(f.Keys(Json::parse(R"({"ab": 1})"), "", {"id"}).message(),
              ::testing::Not(HasSubstr("did you mean")));
  EXPECT_TRUE(f.Keys(Json::array({1}), "", {"a"}).ok());  // not an object
}

TEST(JsonFieldsTest, TypeMismatchesNameTheValueAndTheFix) {
  const JsonFields f("g.json");
  std::string str;
  bool b = false;
  ExpectError(f.String(Json(3), "name", &str),
              "g.json: name: must be a non-empty string, got number 3; write "
              "a non-empty string there");
  ExpectError(f.String(Json(""), "name", &str, "name the graph"),
              "g.json: name: must be a non-empty string, got string \"\"; "
              "name the graph");
  ASSERT_TRUE(f.String(Json("g"), "name", &str).ok());
  EXPECT_EQ(str, "g");
  ExpectError(f.Bool(Json("yes"), "x", &b),
              "g.json: x: must be true or false, got string \"yes\"; write "
              "true or false there");
  ASSERT_TRUE(f.Bool(Json(true), "x", &b).ok());
  EXPECT_TRUE(b);
  EXPECT_THAT(f.Array(Json::object(), "inputs").message(),
              HasSubstr("g.json: inputs: must be an array, got object {}"));
  EXPECT_THAT(f.Object(Json::array(), "(document)", "write {...}").message(),
              HasSubstr("g.json: (document): must be an object, got array "
                        "[]; write {...}"));
}

TEST(JsonFieldsTest, IntegersStayInTheirRange) {
  const JsonFields f("c.json");
  int64_t v = 7;
  ExpectError(f.Int(Json(1.5), "n", 0, &v),
              "c.json: n: must be an integer, got number 1.5; write a whole "
              "number in [0, 2147483647]");
  ExpectError(f.Int(Json(-1), "n", 0, &v),
              "c.json: n: must be in [0, 2147483647], got -1; write a number "
              "in that range");
  // nlohmann reads 0 as unsigned: the lower bound still applies.
  EXPECT_THAT(f.Int(Json::parse("0"), "n", 1, &v).message(),
              HasSubstr("must be in [1, 2147483647], got 0"));
  // Beyond int32 (would wrap to 0) and beyond int64 (would wrap negative).
  EXPECT_THAT(f.Int(Json::parse("4294967296"), "n", 0, &v).message(),
              HasSubstr("c.json: n: must be in [0, 2147483647], got "
                        "4294967296"));
  EXPECT_THAT(f.Int(Json::parse("18446744073709551615"), "n", 0, &v).message(),
              HasSubstr("got 18446744073709551615"));
  EXPECT_THAT(f.Int(Json(5), "n", 0, &v, 4).message(),
              HasSubstr("must be in [0, 4], got 5"));
  EXPECT_EQ(v, 7);  // untouched by every rejection
  ASSERT_TRUE(f.Int(Json(-1), "n", -1, &v).ok());
  EXPECT_EQ(v, -1);
  ASSERT_TRUE(f.Int(Json::parse("2147483647"), "n", 0, &v).ok());
  EXPECT_EQ(v, 2147483647);
}

TEST(JsonFieldsTest, MembersRequiredAndOptional) {
  const JsonFields f("g.json");
  const Json obj = Json::parse(
      R"({"n": 2, "b": true, "s": "x", "a": [1], "o": {}, "bad": "2"})");
  const Json* found = nullptr;
  ASSERT_TRUE(f.Required(obj, "nodes[0]", "n", "give it", &found).ok());
  EXPECT_EQ(*found, 2);
  ExpectError(f.Required(obj, "nodes[0]", "outputs", "give the count", &found),
              "g.json: nodes[0].outputs: is missing; give the count");
  EXPECT_EQ(JsonFields::Find(obj, "none"), nullptr);
  EXPECT_EQ(JsonFields::Find(Json(3), "n"), nullptr);

  int64_t n = -1;
  bool b = false;
  std::string s = "keep";
  ASSERT_TRUE(f.OptInt(obj, "", "n", 0, &n).ok());
  ASSERT_TRUE(f.OptBool(obj, "", "b", &b).ok());
  ASSERT_TRUE(f.OptString(obj, "", "s", &s).ok());
  EXPECT_EQ(n, 2);
  EXPECT_TRUE(b);
  EXPECT_EQ(s, "x");
  ASSERT_TRUE(f.OptArray(obj, "", "a", &found).ok());
  EXPECT_TRUE(found->is_array());
  ASSERT_TRUE(f.OptObject(obj, "", "o", &found).ok());
  EXPECT_TRUE(found->is_object());
  // Absent: nothing changes, and no error.
  ASSERT_TRUE(f.OptInt(obj, "", "none", 0, &n).ok());
  ASSERT_TRUE(f.OptString(obj, "", "none", &s).ok());
  ASSERT_TRUE(f.OptArray(obj, "", "none", &found).ok());
  EXPECT_EQ(n, 2);
  EXPECT_EQ(s, "x");
  EXPECT_EQ(found, nullptr);
  // Present with the wrong type: the member's full path.
  EXPECT_THAT(f.OptInt(obj, "x", "bad", 0, &n).message(),
              HasSubstr("g.json: x.bad: must be an integer, got string"));
  EXPECT_THAT(f.OptArray(obj, "", "n", &found).message(),
              HasSubstr("g.json: n: must be an array, got number 2"));
}

}  // namespace
}  // namespace util
}  // namespace hflow
