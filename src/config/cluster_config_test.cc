// Unit tests for cluster config parsing (docs/formats.md, "Cluster config"):
// both JSON forms, device lists, memory sizes, and that every rejection names
// the source and the JSON path of the offending field.
//
// Thread-safety: single-threaded tests; files go to a per-test temp path.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "hflow/cluster.h"

namespace hflow {
namespace {

constexpr uint64_t kGiB = 1ull << 30;

// Expects kInvalidArgument whose message contains every fragment.
void ExpectRejected(const Status& s, std::initializer_list<const char*> parts) {
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  for (const char* p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos)
        << "missing \"" << p << "\" in: " << s.message();
  }
}

Status Parse(const std::string& json, ClusterConfig* cfg) {
  return ParseClusterConfig(json, "cluster.json", cfg);
}

Status ParseOnly(const std::string& json) {
  ClusterConfig cfg;
  return Parse(json, &cfg);
}

TEST(ClusterConfigTest, GeFormWithOneNode) {
  ClusterConfig cfg;
  ASSERT_TRUE(Parse(R"({"cluster":[{"cluster_nodes":[{"node_id":0,
      "is_local":true,"ipaddr":"x","item_list":[{"item_id":0,"device_id":2},
      {"item_id":1,"device_id":3}]}]}],
      "item_def":[{"item_type":"Ascend","memory":"[DDR:32GB]"}]})",
                    &cfg)
                  .ok());
  EXPECT_EQ(cfg.source, "cluster.json");
  ASSERT_EQ(cfg.nodes.size(), 1u);
  EXPECT_TRUE(cfg.LocalNode().is_local);
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(cfg.LocalNode().devices[1].item_id, 1);
  // The single item_def applies to items that name no type.
  EXPECT_EQ(cfg.LocalNode().devices[0].memory_bytes, 32 * kGiB);
  EXPECT_FALSE(cfg.ResolvedDefaultDevice().has_value());
}

TEST(ClusterConfigTest, OnlyNodeIsLocalWithoutFlag) {
  ClusterConfig cfg;
  ASSERT_TRUE(Parse(R"({"cluster":[{"cluster_nodes":[{"node_id":4,
      "item_list":[{"device_id":0}]}]}]})",
                    &cfg)
                  .ok());
  EXPECT_EQ(cfg.LocalNode().node_id, 4);
  EXPECT_EQ(cfg.LocalNode().devices[0].memory_bytes, kDefaultDeviceMemoryBytes);
  EXPECT_EQ(cfg.ResolvedDefaultDevice(), 0);
}

TEST(ClusterConfigTest, SeveralNodesAndItemTypes) {
  ClusterConfig cfg;
  ASSERT_TRUE(Parse(R"({"cluster":[{"cluster_nodes":[
      {"node_id":0,"item_list":[{"device_id":0,"item_type":"big"}]},
      {"node_id":1,"is_local":true,"item_list":[{"device_id":5,"item_type":"small"},
                                                {"device_id":6}]}]}],
      "item_def":[{"item_type":"big","memory":"[DDR:64GB]"},
                  {"item_type":"small","memory":"[DDR:512MB]"}],
      "default_device":6})",
                    &cfg)
                  .ok());
  ASSERT_EQ(cfg.nodes.size(), 2u);
  EXPECT_FALSE(cfg.nodes[0].is_local);
  EXPECT_EQ(cfg.nodes[0].devices[0].memory_bytes, 64 * kGiB);
  EXPECT_EQ(cfg.LocalNode().node_id, 1);
  EXPECT_EQ(cfg.LocalNode().devices[0].memory_bytes, 512ull << 20);
  // Two definitions and no type: the default.
  EXPECT_EQ(cfg.LocalNode().devices[1].memory_bytes, kDefaultDeviceMemoryBytes);
  EXPECT_EQ(cfg.ResolvedDefaultDevice(), 6);
  EXPECT_FALSE(cfg.HasLocalDevice(0));  // device 0 of another node
}

TEST(ClusterConfigTest, CompactForm) {
  ClusterConfig cfg;
  ASSERT_TRUE(Parse(R"({"devices":[2,3,4,5],"memory_bytes":"32GB",
                        "default_device":2})",
                    &cfg)
                  .ok());
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_EQ(cfg.LocalNode().node_id, 0);
  EXPECT_EQ(cfg.LocalNode().devices[3].memory_bytes, 32 * kGiB);
  EXPECT_EQ(cfg.LocalNode().devices[3].item_id, 3);
  EXPECT_EQ(cfg.ResolvedDefaultDevice(), 2);

  ASSERT_TRUE(
      Parse(R"({"devices":[7,1],"memory_bytes":[1024,"1KB"]})", &cfg).ok());
  EXPECT_EQ(cfg.LocalNode().devices[0].memory_bytes, 1024u);
  EXPECT_EQ(cfg.LocalNode().devices[1].memory_bytes, 1024u);
  ASSERT_TRUE(Parse(R"({"devices":[0],"memory_bytes":4096})", &cfg).ok());
  EXPECT_EQ(cfg.LocalNode().devices[0].memory_bytes, 4096u);
}

// hflow's "backend" field, in both forms: unset unless given, and only
// the runtimes there are.
TEST(ClusterConfigTest, BackendField) {
  ClusterConfig cfg;
  ASSERT_TRUE(Parse(R"({"devices":[2,3]})", &cfg).ok());
  EXPECT_FALSE(cfg.backend.has_value());
  ASSERT_TRUE(Parse(R"({"devices":[2,3],"backend":"cuda"})", &cfg).ok());
  EXPECT_EQ(cfg.backend, "cuda");
  ASSERT_TRUE(Parse(R"({"cluster":[{"cluster_nodes":[{"node_id":0,
      "is_local":true,"item_list":[{"item_id":0,"device_id":3}]}]}],
      "backend":"sim"})",
                    &cfg)
                  .ok());
  EXPECT_EQ(cfg.backend, "sim");
  ExpectRejected(
      ParseOnly(R"({"devices":[2],"backend":"tpu"})"),
      {"cluster.json", "backend", "unknown backend \"tpu\"", "\"cuda\""});
  ExpectRejected(ParseOnly(R"({"devices":[2],"backend":7})"),
                 {"cluster.json", "backend"});
}

TEST(ClusterConfigTest, FailedParseLeavesOutputUntouched) {
  ClusterConfig cfg = DefaultClusterConfig();
  EXPECT_FALSE(Parse(R"({"devices":[]})", &cfg).ok());
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{0, 1, 2, 3}));
}

TEST(ClusterConfigTest, RejectsMalformedJsonWithPosition) {
  ExpectRejected(ParseOnly("{\"devices\": [1,\n 2,]}"),
                 {"cluster.json: (document): malformed JSON: ", "line 2",
                  "; check brackets"});
  ExpectRejected(ParseOnly(""), {"malformed JSON"});
  ExpectRejected(ParseOnly("[1,2]"),
                 {"cluster.json: (document): must be an object, got array"});
}

// Found by fuzzing (fuzz/regressions/cluster_config/deep_devices.json is a
// small stand-in): a device entry nested 200000 levels deep overflowed the
// stack when the error message quoted it. Documents nested deeper than
// util::kMaxJsonDepth are rejected before any value exists.
TEST(ClusterConfigTest, RejectsDeeplyNestedJson) {
  const int depth = 200000;
  ExpectRejected(
      ParseOnly("{\"devices\": " + std::string(depth, '[') +
                std::string(depth, ']') + "}"),
      {"cluster.json: ", "malformed JSON", "nested deeper than 64 levels"});
  ClusterConfig cfg;
  ASSERT_TRUE(
      Parse(R"({"devices": [1], "_x": [[[[[[[[[[[[]]]]]]]]]]]]})", &cfg).ok());
}

TEST(ClusterConfigTest, RejectsDuplicateDeviceOnNode) {
  ExpectRejected(
      ParseOnly(R"({"cluster":[{"cluster_nodes":[
      {"node_id":1,"item_list":[{"device_id":0}]},
      {"node_id":0,"is_local":true,"item_list":[{"device_id":3},{"device_id":3}]}]}]})"),
      {"cluster.json: cluster[0].cluster_nodes[1].item_list[1].device_id: "
       "duplicate device id 3 on node 0"});
  ExpectRejected(ParseOnly(R"({"devices":[1,2,1]})"),
                 {"devices[2]: duplicate device id 1"});
}

TEST(ClusterConfigTest, RejectsNegativeAndWrongTypedIds) {
  ExpectRejected(ParseOnly(R"({"devices":[1,-2]})"),
                 {"devices[1]: negative id -2"});
  ExpectRejected(ParseOnly(R"({"devices":["1"]})"),
                 {"devices[0]: must be a non-negative integer, got string"});
  ExpectRejected(ParseOnly(R"({"devices":[1.5]})"), {"devices[0]: must be"});
  ExpectRejected(ParseOnly(R"({"devices":[4294967296]})"),
                 {"devices[0]: id 4294967296 is too large"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[{"node_id":-1,
                     "item_list":[{"device_id":0}]}]}]})"),
                 {"cluster[0].cluster_nodes[0].node_id: negative id"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[{
                     "item_list":[{"device_id":0,"item_id":-3}]}]}]})"),
                 {"item_list[0].item_id: negative id"});
}

TEST(ClusterConfigTest, RejectsWrongStructureTypes) {
  ExpectRejected(ParseOnly(R"({"devices":3})"),
                 {"devices: must be an array, got number 3"});
  ExpectRejected(ParseOnly(R"({"cluster":{}})"), {"cluster: must be an array"});
  ExpectRejected(
      ParseOnly(R"({"cluster":[{"cluster_nodes":[{"is_local":"yes",
                     "item_list":[{"device_id":0}]}]}]})"),
      {"cluster[0].cluster_nodes[0].is_local: must be true or false"});
  ExpectRejected(
      ParseOnly(R"({"cluster":[{"cluster_nodes":[{"item_list":[3]}]}]})"),
      {"cluster[0].cluster_nodes[0].item_list[0]: must be an object"});
  ExpectRejected(
      ParseOnly(R"({"cluster":[{"cluster_nodes":[{"item_list":[{}]}]}]})"),
      {"item_list[0]: missing \"device_id\""});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[{
                     "item_list":[{"device_id":0}]}]}],"item_def":{}})"),
                 {"item_def: must be an array"});
}

TEST(ClusterConfigTest, RejectsEmptyDeviceLists) {
  ExpectRejected(ParseOnly(R"({"devices":[]})"),
                 {"devices: empty device list"});
  ExpectRejected(
      ParseOnly(
          R"({"cluster":[{"cluster_nodes":[{"node_id":2,"item_list":[]}]}]})"),
      {"cluster[0].cluster_nodes[0].item_list: empty device list on node 2"});
  ExpectRejected(
      ParseOnly(R"({"cluster":[{"cluster_nodes":[{"node_id":2}]}]})"),
      {"item_list: empty device list"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[]}]})"),
                 {"cluster[0].cluster_nodes: no nodes"});
  ExpectRejected(ParseOnly(R"({"cluster":[]})"),
                 {"cluster: expected exactly one"});
}

TEST(ClusterConfigTest, RejectsBadLocalNodeSets) {
  const char* kTwice = R"({"cluster":[{"cluster_nodes":[
      {"node_id":0,"is_local":true,"item_list":[{"device_id":0}]},
      {"node_id":0,"item_list":[{"device_id":1}]}]}]})";
  ExpectRejected(ParseOnly(kTwice),
                 {"cluster[0].cluster_nodes[1].node_id: node id 0 used twice"});
  const char* kTwoLocal = R"({"cluster":[{"cluster_nodes":[
      {"node_id":0,"is_local":true,"item_list":[{"device_id":0}]},
      {"node_id":1,"is_local":true,"item_list":[{"device_id":1}]}]}]})";
  ExpectRejected(
      ParseOnly(kTwoLocal),
      {"cluster[0].cluster_nodes[1].is_local: more than one local node",
       "is_local"});
  const char* kNoLocal = R"({"cluster":[{"cluster_nodes":[
      {"node_id":0,"item_list":[{"device_id":0}]},
      {"node_id":1,"item_list":[{"device_id":1}]}]}]})";
  ExpectRejected(ParseOnly(kNoLocal),
                 {"cluster[0].cluster_nodes: no local node among 2 nodes"});
}

TEST(ClusterConfigTest, RejectsBadDefaultDevice) {
  ExpectRejected(
      ParseOnly(R"({"devices":[2,3],"default_device":0})"),
      {"default_device: device 0 is not a device of the local node (2,3)"});
  ExpectRejected(ParseOnly(R"({"devices":[2,3],"default_device":"2"})"),
                 {"default_device: must be"});
  ClusterConfig cfg;
  ASSERT_TRUE(Parse(R"({"devices":[2,3],"default_device":null})", &cfg).ok());
  EXPECT_FALSE(cfg.ResolvedDefaultDevice().has_value());
}

TEST(ClusterConfigTest, RejectsBadMemory) {
  ExpectRejected(ParseOnly(R"({"devices":[2],"memory_bytes":0})"),
                 {"memory_bytes: memory size is zero"});
  ExpectRejected(ParseOnly(R"({"devices":[2],"memory_bytes":"lots"})"),
                 {"memory_bytes: cannot parse memory size \"lots\""});
  ExpectRejected(ParseOnly(R"({"devices":[2],"memory_bytes":-1})"),
                 {"memory_bytes: negative memory size"});
  ExpectRejected(ParseOnly(R"({"devices":[2,3],"memory_bytes":[1]})"),
                 {"memory_bytes: has 1 entries for 2 devices"});
  ExpectRejected(ParseOnly(R"({"devices":[2,3],"memory_bytes":[1,"0GB"]})"),
                 {"memory_bytes[1]: memory size is zero"});
  ExpectRejected(ParseOnly(R"({"devices":[2],"memory_bytes":{"2":1}})"),
                 {"memory_bytes: must be a memory size, got object"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[{"item_list":[
                     {"device_id":0}]}]}],"item_def":[{"memory":"[DDR:xGB]"}]})"),
                 {"item_def[0].memory: cannot parse"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[{"item_list":[
                     {"device_id":0,"item_type":"b"}]}]}],
                     "item_def":[{"item_type":"a","memory":"[DDR:1GB]"}]})"),
                 {"item_list[0].item_type: unknown item type \"b\""});
}

// Every field GE documents for numa_config passes (those hflow does not use
// are ignored), as in GE's own template.
TEST(ClusterConfigTest, AcceptsEveryGeDocumentedField) {
  ClusterConfig cfg;
  Status s = Parse(R"({"cluster":[{"cluster_nodes":[{"node_id":0,
      "node_type":"ATLAS900","ipaddr":"10.0.0.1","port":2509,
      "memory":25165824,"is_local":true,"deploy_res_path":"/home/",
      "auth_lib_path":"/opt/auth.so","data_panel":{"avail_ports":["16666~32767"]},
      "item_list":[{"item_id":0,"device_id":2,"ipaddr":"10.0.0.2"},
                   {"item_id":1,"device_id":3,"ipaddr":"10.0.0.3"}]}],
      "nodes_topology":{"type":"star","protocol":"RDMA:200Gb",
                        "topos":[{"plane_id":0,"devices":[2,3]}]}}],
    "node_def":[{"node_type":"ATLAS900","resource_type":"Aarch",
      "support_links":"[HCCS,PCIE,ROCE]","item_type":"Ascend910B1",
      "inter_item_memory_access_mode":"[NUMA]","h2d_bw":"PCIE:100Gb",
      "item_topology":[{"links_mode":"HCCS","links":[[0,1]]}]}],
    "item_def":[{"item_type":"Ascend910B1","resource_type":"Ascend",
      "memory":"[DDR:32GB]","aic_type":"[DAVINCI_V100:32]"}]})",
                   &cfg);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(cfg.LocalNode().devices[1].memory_bytes, 32 * kGiB);
}

// A misspelt key is an error naming the file and the key's JSON path, at
// every level hflow reads, in both forms.
TEST(ClusterConfigTest, RejectsUnknownKeysNamingFileAndPath) {
  const std::string node = R"({"node_id":0,"item_list":[{"device_id":2}]})";
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[)" + node +
                           R"(]}],"item_defs":[]})"),
                 {"cluster.json: item_defs: unknown field",
                  "known fields: cluster, item_def, default_device",
                  "accepted and ignored: node_def"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[)" + node +
                           R"(],"topology":{}}]})"),
                 {"cluster.json: cluster[0].topology: unknown field"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[{"node_id":0,
                     "is_locl":true,"item_list":[{"device_id":2}]}]}]})"),
                 {"cluster.json: cluster[0].cluster_nodes[0].is_locl: "
                  "unknown field",
                  "ipaddr"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[{"node_id":0,
                     "item_list":[{"device_id":2,"devce_id":3}]}]}]})"),
                 {"cluster[0].cluster_nodes[0].item_list[0].devce_id: "
                  "unknown field"});
  ExpectRejected(ParseOnly(R"({"cluster":[{"cluster_nodes":[)" + node +
                           R"(]}],"item_def":[{"memroy":"[DDR:1GB]"}]})"),
                 {"cluster.json: item_def[0].memroy: unknown field"});
  ExpectRejected(ParseOnly(R"({"devices":[2],"memory_byte":"8GB"})"),
                 {"cluster.json: memory_byte: unknown field",
                  "known fields: devices, memory_bytes, default_device"});
  // Annotations stay allowed.
  EXPECT_TRUE(ParseOnly(R"({"devices":[2],"comment":"x","_note":1})").ok());
}

TEST(ClusterConfigTest, RejectsMemoryInTheWrongForm) {
  auto ge = [](const std::string& mem) {
    return ParseOnly(
        R"({"cluster":[{"cluster_nodes":[{"item_list":[{"device_id":0}]}]}],
            "item_def":[{"memory":)" +
        mem + "}]}");
  };
  ExpectRejected(ge(R"("32GB")"),
                 {"item_def[0].memory: memory \"32GB\" is not in GE's form",
                  "[DDR:32GB]"});
  ExpectRejected(ge(R"("[DDR:32XB]")"),
                 {"item_def[0].memory: unknown unit", "[DDR:32XB]"});
  ExpectRejected(ge("34359738368"),
                 {"item_def[0].memory: must be a string", "[DDR:32GB]"});
  ExpectRejected(ge(R"("[DDR:0GB]")"),
                 {"item_def[0].memory: memory size is zero"});
  ExpectRejected(ParseOnly(R"({"devices":[2],"memory_bytes":-5})"),
                 {"memory_bytes: negative memory size -5", "\"32GB\""});
  ExpectRejected(ParseOnly(R"({"devices":[2,3],"memory_bytes":[1024,-1]})"),
                 {"memory_bytes[1]: negative memory size -1"});
  ExpectRejected(ParseOnly(R"({"devices":[2],"memory_bytes":"[DDR:8GB]"})"),
                 {"memory_bytes: GE's item_def form", "\"32GB\""});
}

TEST(ClusterConfigTest, RejectsDuplicateItemIdsOnNode) {
  ExpectRejected(
      ParseOnly(R"({"cluster":[{"cluster_nodes":[{"node_id":3,
                     "item_list":[{"item_id":0,"device_id":2},
                                  {"item_id":0,"device_id":3}]}]}]})"),
      {"cluster.json: cluster[0].cluster_nodes[0].item_list[1]."
       "item_id: duplicate item id 0 on node 3 (also item_list[0])"});
  // Item ids are per node: two nodes may both have item 0.
  EXPECT_TRUE(ParseOnly(R"({"cluster":[{"cluster_nodes":[
      {"node_id":0,"is_local":true,"item_list":[{"item_id":0,"device_id":2}]},
      {"node_id":1,"item_list":[{"item_id":0,"device_id":2}]}]}]})")
                  .ok());
}

TEST(ClusterConfigTest, RejectsMissingOrAmbiguousForm) {
  ExpectRejected(ParseOnly(R"({"nodes":[]})"),
                 {"neither \"cluster\" nor \"devices\" present"});
  ExpectRejected(ParseOnly(R"({"devices":[1],"cluster":[]})"),
                 {"both \"cluster\" and \"devices\""});
}

TEST(ClusterConfigTest, LoadsFileAndReportsMissingFile) {
  std::string path = ::testing::TempDir() + "hflow_cluster_config_test.json";
  {
    std::ofstream f(path);
    f << R"({"devices":[3,4]})";
  }
  ClusterConfig cfg;
  ASSERT_TRUE(LoadClusterConfigFile(path, &cfg).ok());
  EXPECT_EQ(cfg.source, path);
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{3, 4}));
  {
    std::ofstream f(path);
    f << R"({"devices":[3,3]})";
  }
  ExpectRejected(LoadClusterConfigFile(path, &cfg),
                 {path.c_str(), "devices[1]"});
  std::remove(path.c_str());

  Status s = LoadClusterConfigFile(path, &cfg);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos);
  EXPECT_NE(s.message().find("check the path"), std::string::npos);
  EXPECT_EQ(LoadClusterConfigFile(::testing::TempDir(), &cfg).code(),
            StatusCode::kNotFound);
}

TEST(DeviceListTest, ParsesIdsAndRanges) {
  ClusterConfig cfg;
  ASSERT_TRUE(ParseDeviceList("2,3,4,5", &cfg).ok());
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{2, 3, 4, 5}));
  EXPECT_EQ(cfg.source, "--devices");
  EXPECT_FALSE(cfg.ResolvedDefaultDevice().has_value());
  ASSERT_TRUE(ParseDeviceList("2~5", &cfg).ok());
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{2, 3, 4, 5}));
  ASSERT_TRUE(ParseDeviceList(" 0 , 3 ~ 4,7 ", &cfg).ok());
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{0, 3, 4, 7}));
  EXPECT_EQ(cfg.ResolvedDefaultDevice(), 0);
  ASSERT_TRUE(ParseDeviceList("6~6", &cfg).ok());
  EXPECT_EQ(cfg.LocalDeviceIds(), (std::vector<int32_t>{6}));
}

TEST(DeviceListTest, RejectsBadItemsNamingThem) {
  ClusterConfig cfg;
  ExpectRejected(ParseDeviceList("", &cfg), {"--devices: empty device list"});
  ExpectRejected(ParseDeviceList("2,,3", &cfg), {"--devices: empty item"});
  ExpectRejected(ParseDeviceList("2,3,", &cfg), {"empty item"});
  ExpectRejected(ParseDeviceList("5~2", &cfg), {"\"5~2\": range end is below"});
  ExpectRejected(ParseDeviceList("1,-2", &cfg), {"\"-2\": negative device id"});
  ExpectRejected(ParseDeviceList("1,x", &cfg), {"\"x\": not a device id"});
  ExpectRejected(ParseDeviceList("1~", &cfg), {"\"1~\": not a device id"});
  ExpectRejected(ParseDeviceList("1~2~3", &cfg), {"\"1~2~3\""});
  ExpectRejected(ParseDeviceList("2~4,3", &cfg),
                 {"\"3\": device 3 listed twice"});
  ExpectRejected(ParseDeviceList("99999999999", &cfg), {"too large"});
  ExpectRejected(ParseDeviceList("0~100000000", &cfg), {"range spans"});
}

TEST(MemorySizeTest, ParsesUnits) {
  struct Case {
    const char* text;
    uint64_t bytes;
  } cases[] = {
      {"32GB", 32 * kGiB},
      {"32GiB", 32 * kGiB},
      {"32gb", 32 * kGiB},
      {"512MB", 512ull << 20},
      {"512 MiB", 512ull << 20},
      {"1024", 1024},
      {"7b", 7},
      {"4k", 4096},
      {"4KiB", 4096},
      {"2T", 2ull << 40},
      {"2tb", 2ull << 40},
      {"[DDR:32GB]", 32 * kGiB},
      {" [DDR: 8G] ", 8 * kGiB},
      {"[DDR:16GB,HBM:8GB]", 16 * kGiB},
      {"0", 0},
  };
  for (const Case& c : cases) {
    uint64_t bytes = 1;
    Status s = ParseMemorySize(c.text, &bytes);
    EXPECT_TRUE(s.ok()) << c.text << ": " << s.ToString();
    EXPECT_EQ(bytes, c.bytes) << c.text;
  }
}

TEST(MemorySizeTest, RejectsGarbageAndOverflow) {
  for (const char* text : {"", "GB", "32XB", "3.5GB", "-1", "[DDR:]", "32 GB x",
                           "18446744073709551616", "17179869184GB"}) {
    uint64_t bytes = 5;
    Status s = ParseMemorySize(text, &bytes);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(bytes, 5u) << text;
  }
  uint64_t bytes = 0;
  EXPECT_NE(ParseMemorySize("99999999999999999999", &bytes)
                .message()
                .find("overflows"),
            std::string::npos);
}

TEST(ClusterConfigTest, DefaultAndLocalClusters) {
  ClusterConfig def = DefaultClusterConfig();
  EXPECT_EQ(def.LocalDeviceIds(), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(def.ResolvedDefaultDevice(), 0);
  ClusterConfig local = MakeLocalCluster({3, 6, 7}, kGiB);
  EXPECT_TRUE(local.HasLocalDevice(6));
  EXPECT_FALSE(local.HasLocalDevice(0));
  EXPECT_EQ(local.LocalNode().devices[2].memory_bytes, kGiB);
  EXPECT_EQ(local.LocalNode().devices[2].item_id, 2);
  ClusterConfig empty;
  EXPECT_TRUE(empty.LocalDeviceIds().empty());
  EXPECT_FALSE(empty.ResolvedDefaultDevice().has_value());
}

}  // namespace
}  // namespace hflow
