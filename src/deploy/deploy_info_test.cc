// Deploy info tests: logic device lists expand ranges into their Cartesian
// product in order, duplicates and malformed parts are rejected naming the
// entry, and the typo guard bounds a whole list (also against products that
// overflow 64 bits). Bugs found by fuzzing (fuzz/regressions/deploy_info/)
// each have a case here.
#include "deploy/deploy_info.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace hflow {
namespace deploy {
namespace {

using ::testing::HasSubstr;

TEST(DeployInfoTest, ExpandsRangesInOrder) {
  std::vector<LogicDevice> devs;
  ASSERT_TRUE(ParseLogicDeviceList("0:0:2~3, 0:1:0:0~1", &devs).ok());
  ASSERT_EQ(devs.size(), 4u);
  EXPECT_EQ(devs[0], (LogicDevice{0, 0, 2, -1}));
  EXPECT_EQ(devs[1], (LogicDevice{0, 0, 3, -1}));
  EXPECT_EQ(devs[2], (LogicDevice{0, 1, 0, 0}));
  EXPECT_EQ(devs[3], (LogicDevice{0, 1, 0, 1}));
}

// GE's placement fields hflow does not use pass; a misspelt key is an error
// naming the file and the key's JSON path, at every level.
TEST(DeployInfoTest, AcceptsGeFieldsAndRejectsUnknownKeys) {
  ClusterConfig cluster = MakeLocalCluster({2, 3, 4, 5});
  const std::vector<std::string> nodes = {"a", "b"};
  DeployInfo info;
  Status s = ParseDeployInfo(
      R"({"batch_deploy_info": [{"flow_node_list": ["a"],
            "logic_device_list": "0:0:2~3", "redundant_logic_device_list": "",
            "invoke_list": []}],
          "deploy_info": [{"flow_node_name": "b", "logic_device_id": "0:0:5"}],
          "dynamic_schedule_enable": false, "keep_logic_device_order": true})",
      "d.json", nodes, cluster, &info);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(info.placement["a"].size(), 2u);

  const char* const cases[][2] = {
      {R"({"batch_deploy_infos": []})",
       "d.json: batch_deploy_infos: unknown field; known fields: "
       "batch_deploy_info, deploy_info"},
      {R"({"batch_deploy_info": [{"flow_node_list": ["a"],
            "logic_device_list": "0:0:2", "logic_device_lst": "0:0:3"}]})",
       "d.json: batch_deploy_info[0].logic_device_lst: unknown field"},
      {R"({"deploy_info": [{"flow_node_name": "b", "logic_device_id": "0:0:5",
            "logic_device": "0:0:4"}]})",
       "d.json: deploy_info[0].logic_device: unknown field"},
  };
  for (const auto& c : cases) {
    s = ParseDeployInfo(c[0], "d.json", nodes, cluster, &info);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c[0];
    EXPECT_THAT(s.message(), HasSubstr(c[1])) << c[0];
  }
}

TEST(DeployInfoTest, RejectsMalformedListsNamingTheEntry) {
  const char* const cases[][2] = {
      {"", "empty logic device list"},
      {"0:0:1,", "has an empty entry"},
      {"0:0", "expected cluster:node:device[:numa], got 2 parts"},
      {"0:0:5~2", "runs backwards"},
      {"0:0:x", "'x' is not a number"},
      {"0:0:-1", "'-1' is not a number"},
      {"0:0:1,0:0:1", "names 0:0:1 twice"},
      {"0:0:0~4096", "beyond 4096 devices"},
  };
  for (const auto& c : cases) {
    std::vector<LogicDevice> devs;
    Status s = ParseLogicDeviceList(c[0], &devs);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c[0];
    EXPECT_THAT(s.message(), HasSubstr(c[1])) << c[0];
  }
}

// Found by fuzzing: the entry's device count was a product of four spans of
// up to 2^31 each; it overflowed int64 (undefined behaviour), and a product
// that wrapped to a small number let the loops expand 2^124 devices.
TEST(DeployInfoTest, HugeProductIsRejectedWithoutOverflow) {
  std::vector<LogicDevice> devs;
  Status s = ParseLogicDeviceList(
      "0~2147483647:0~2147483647:0~2147483647:0~2147483647", &devs);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("beyond 4096 devices"));
}

// The guard covers the whole list: many entries within the limit each used
// to add up to millions of devices, then a pairwise duplicate scan over
// them took hours.
TEST(DeployInfoTest, GuardBoundsTheWholeList) {
  std::string list;
  for (int n = 0; n < 100; ++n) {
    list += (list.empty() ? "" : ",") + std::string("0:") + std::to_string(n) +
            ":0~4000";
  }
  std::vector<LogicDevice> devs;
  const auto start = std::chrono::steady_clock::now();
  Status s = ParseLogicDeviceList(list, &devs);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'0:1:0~4000' takes the list beyond"));

  // Exactly the limit is fine, and duplicates among 4096 are found quickly.
  ASSERT_TRUE(ParseLogicDeviceList("0:0:0~2047,0:1:0~2047", &devs).ok());
  EXPECT_EQ(devs.size(), 4096u);
  s = ParseLogicDeviceList("0:0:0~2047,0:0:2047~4094", &devs);
  EXPECT_THAT(s.message(), HasSubstr("names 0:0:2047 twice"));
}

TEST(DeployInfoTest, ParsesGeFormatAgainstGraphAndCluster) {
  const ClusterConfig cluster = MakeLocalCluster({0, 1, 2, 3, 4, 5});
  DeployInfo info;
  Status s = ParseDeployInfo(
      R"({"batch_deploy_info": [{"flow_node_list": ["add"],
                                 "logic_device_list": "0:0:2~5"}],
          "deploy_info": [{"flow_node_name": "post",
                           "logic_device_id": "0:0:3"}]})",
      "d.json", {"add", "post"}, cluster, &info);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(info.placement["add"].size(), 4u);
  EXPECT_EQ(info.placement["post"], (std::vector<LogicDevice>{{0, 0, 3, -1}}));

  s = ParseDeployInfo(
      R"({"deploy_info": [{"flow_node_name": "add", "logic_device_id":
          "0~2147483647:0~2147483647:0~2147483647:0~2147483647"}]})",
      "d.json", {"add"}, cluster, &info);
  EXPECT_THAT(s.message(),
              HasSubstr("d.json: deploy_info[0].logic_device_id: "));
}

TEST(DeployInfoTest, DeeplyNestedDocumentIsRejected) {
  DeployInfo info;
  Status s = ParseDeployInfo("{\"deploy_info\": " + std::string(100000, '[') +
                                 std::string(100000, ']') + "}",
                             "d.json", {"add"}, MakeLocalCluster({0}), &info);
  EXPECT_THAT(s.message(), HasSubstr("d.json: (document): malformed JSON: "
                                     "nested deeper than 64 levels"));
  s = ParseDeployInfo("{\"deploy_info\": [", "d.json", {"add"},
                      MakeLocalCluster({0}), &info);
  EXPECT_THAT(s.message(),
              HasSubstr("d.json: (document): malformed JSON: parse error at "
                        "line 1"));
}

}  // namespace
}  // namespace deploy
}  // namespace hflow
