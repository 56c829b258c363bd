// Fuzz target: the cluster config parsers of include/hflow/cluster.h, fed
// the bytes as a user's --cluster file (ParseClusterConfig, the same text
// LoadClusterConfigFile reads), as a --devices LIST (ParseDeviceList) and
// as an item_def memory size (ParseMemorySize).
//
// Invariants of a successful parse (docs/user_guide.md, "Cluster"): exactly
// one local node, every node has devices, ids are unique per node, node ids
// are unique, memory is non-zero, the default device is local; and printing
// the config in GE's form and parsing that again gives the same config.
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <set>
#include <string>

#include "fuzz_check.h"
#include "hflow/cluster.h"

namespace {

using hflow::ClusterConfig;
using hflow::ClusterNode;
using hflow::DeviceDesc;

void CheckConfig(const ClusterConfig& cfg) {
  FUZZ_CHECK(!cfg.nodes.empty());
  int locals = 0;
  std::set<int32_t> node_ids;
  for (const ClusterNode& n : cfg.nodes) {
    locals += n.is_local ? 1 : 0;
    FUZZ_CHECK(n.node_id >= 0);
    FUZZ_CHECK(node_ids.insert(n.node_id).second);
    FUZZ_CHECK(!n.devices.empty());
    std::set<int32_t> ids, item_ids;
    for (const DeviceDesc& d : n.devices) {
      FUZZ_CHECK(d.device_id >= 0 && d.item_id >= 0);
      FUZZ_CHECK(d.memory_bytes > 0);
      FUZZ_CHECK(ids.insert(d.device_id).second);
      FUZZ_CHECK(item_ids.insert(d.item_id).second);
    }
  }
  FUZZ_CHECK(locals == 1);
  if (cfg.default_device) FUZZ_CHECK(cfg.HasLocalDevice(*cfg.default_device));
}

// GE's form of `cfg`, one item type per device so each keeps its memory.
std::string ToGeJson(const ClusterConfig& cfg) {
  std::string nodes, defs;
  int type = 0;
  for (const ClusterNode& n : cfg.nodes) {
    std::string items;
    for (const DeviceDesc& d : n.devices) {
      std::string t = "\"t" + std::to_string(type++) + "\"";
      if (!defs.empty()) defs += ",";
      // GE's form "[DDR:<bytes>]": item_def memory is a string.
      defs += "{\"item_type\":" + t +
              ",\"memory\":\"[DDR:" + std::to_string(d.memory_bytes) + "]\"}";
      if (!items.empty()) items += ",";
      items += "{\"item_id\":" + std::to_string(d.item_id) +
               ",\"device_id\":" + std::to_string(d.device_id) +
               ",\"item_type\":" + t + "}";
    }
    if (!nodes.empty()) nodes += ",";
    nodes += "{\"node_id\":" + std::to_string(n.node_id) +
             ",\"is_local\":" + (n.is_local ? "true" : "false") +
             ",\"item_list\":[" + items + "]}";
  }
  std::string json = "{\"cluster\":[{\"cluster_nodes\":[" + nodes +
                     "]}],\"item_def\":[" + defs + "]";
  if (cfg.default_device) {
    json += ",\"default_device\":" + std::to_string(*cfg.default_device);
  }
  return json + "}";
}

bool SameNodes(const ClusterConfig& a, const ClusterConfig& b) {
  if (a.nodes.size() != b.nodes.size()) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const ClusterNode &x = a.nodes[i], &y = b.nodes[i];
    if (x.node_id != y.node_id || x.is_local != y.is_local ||
        x.devices.size() != y.devices.size()) {
      return false;
    }
    for (size_t k = 0; k < x.devices.size(); ++k) {
      const DeviceDesc &p = x.devices[k], &q = y.devices[k];
      if (p.device_id != q.device_id || p.item_id != q.item_id ||
          p.memory_bytes != q.memory_bytes) {
        return false;
      }
    }
  }
  return a.default_device == b.default_device;
}

void FuzzConfig(std::string_view text) {
  ClusterConfig cfg;
  if (!hflow::ParseClusterConfig(text, "fuzz.json", &cfg).ok()) return;
  CheckConfig(cfg);
  ClusterConfig again;
  hflow::Status s = hflow::ParseClusterConfig(ToGeJson(cfg), "again", &again);
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
  FUZZ_CHECK(s.ok());
  FUZZ_CHECK(SameNodes(cfg, again));
}

void FuzzDeviceList(std::string_view text) {
  ClusterConfig cfg;
  if (!hflow::ParseDeviceList(text, &cfg).ok()) return;
  CheckConfig(cfg);
  FUZZ_CHECK(cfg.nodes.size() == 1);
  std::string list;
  for (int32_t id : cfg.LocalDeviceIds()) {
    list += (list.empty() ? "" : ",") + std::to_string(id);
  }
  ClusterConfig again;
  FUZZ_CHECK(hflow::ParseDeviceList(list, &again).ok());
  FUZZ_CHECK(SameNodes(cfg, again));
}

void FuzzMemorySize(std::string_view text) {
  uint64_t bytes = 0;
  if (!hflow::ParseMemorySize(text, &bytes).ok()) return;
  uint64_t again = 1;
  FUZZ_CHECK(hflow::ParseMemorySize(std::to_string(bytes), &again).ok());
  FUZZ_CHECK(again == bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = hflow_fuzz::AsText(data, size);
  FuzzConfig(text);
  FuzzDeviceList(text);
  FuzzMemorySize(text);
  return 0;
}
