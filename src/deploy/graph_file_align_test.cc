// The graph file's "inputs_align" (FlowGraph::SetInputsAlignAttrs in the
// file): parsed with GE's limits, and each bad value named by path.
#include <gtest/gtest.h>

#include <string>

#include "deploy/graph_def.h"

namespace hflow {
namespace deploy {
namespace {

Status ParseWithAlign(const std::string& align, GraphDef* g) {
  const std::string text =
      R"({"name": "g", "inputs": ["x"], "nodes": [{"name": "id", "inputs": ["x"],
          "outputs": 1, "function": "_BuiltIn_Identity"}], "outputs": ["id:0"],
          "inputs_align": )" +
      align + "}";
  return ParseGraphJson(text, "g.json", "/tmp", g);
}

TEST(GraphFileAlignTest, ParsesGesThreeSettings) {
  GraphDef g;
  Status s = ParseWithAlign(
      R"({"max_cache_num": 16, "timeout_ms": 200, "dropout": true})", &g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.align.max_cache, 16u);
  EXPECT_EQ(g.align.timeout_ms, 200);
  EXPECT_TRUE(g.align.dropout);
  ASSERT_TRUE(ParseWithAlign(R"({"max_cache_num": 4})", &g).ok());
  EXPECT_EQ(g.align.timeout_ms, -1) << "no timeout by default";
  EXPECT_FALSE(g.align.dropout);
}

TEST(GraphFileAlignTest, BadValuesNameTheirPath) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"max_cache_num": 1025})", "inputs_align.max_cache_num"},
      {R"({"max_cache_num": 4, "timeout_ms": 0})", "inputs_align.timeout_ms"},
      {R"({"max_cache_num": 4, "timeout_ms": 600001})",
       "inputs_align.timeout_ms"},
      {R"({"max_cache_num": 4, "dropout": 1})", "inputs_align.dropout"},
      {R"({"timeout_ms": 5})", "has no max_cache_num"},
      {R"({"max_cache_num": 4, "max_cache": 4})", "max_cache"},
      {R"(16)", "inputs_align"},
  };
  for (const auto& [align, says] : cases) {
    GraphDef g;
    Status s = ParseWithAlign(align, &g);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << align;
    EXPECT_NE(s.message().find(says), std::string::npos)
        << align << ": " << s.ToString();
    EXPECT_NE(s.message().find("g.json"), std::string::npos) << s.ToString();
  }
}

}  // namespace
}  // namespace deploy
}  // namespace hflow
