// Fuzz target: the deploy info parser (src/deploy/deploy_info.cc), fed the
// bytes as a user's deploy info file (ParseDeployInfo, the text
// LoadDeployInfoFile reads) against a fixed graph and cluster, and as one
// logic_device_list string (ParseLogicDeviceList).
//
// Invariants of a successful parse (docs/user_guide.md, "Deploy info"): every
// placed node is a graph node, every device is in the cluster and listed once
// per node; a device list is non-empty, duplicate-free and bounded; and
// printing the placement as GE deploy_info and parsing it again gives the same
// one.
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "deploy/deploy_info.h"
#include "fuzz_check.h"

namespace {

using hflow::deploy::DeployInfo;
using hflow::deploy::LogicDevice;

// The typo guard of deploy_info.cc: no list expands beyond this.
constexpr size_t kMaxExpanded = 4096;

const std::vector<std::string>& NodeNames() {
  static const std::vector<std::string> kNames = {"a", "add", "post", "twice",
                                                  "add.batch0"};
  return kNames;
}

// Node 0 (local) holds devices 0..7, node 3 holds 2, 5 and 100.
const hflow::ClusterConfig& Cluster() {
  static const hflow::ClusterConfig kCluster = [] {
    hflow::ClusterConfig c = hflow::MakeLocalCluster({0, 1, 2, 3, 4, 5, 6, 7});
    hflow::ClusterNode remote;
    remote.node_id = 3;
    for (int32_t d : {2, 5, 100}) {
      remote.devices.push_back(hflow::DeviceDesc{d, 0, 1 << 20});
    }
    c.nodes.push_back(remote);
    return c;
  }();
  return kCluster;
}

bool InCluster(const LogicDevice& d) {
  if (d.cluster != 0) return false;
  for (const auto& n : Cluster().nodes) {
    if (n.node_id != d.node) continue;
    for (const auto& dev : n.devices) {
      if (dev.device_id == d.device) return true;
    }
  }
  return false;
}

std::string Text(const LogicDevice& d) {
  std::string s = std::to_string(d.cluster) + ":" + std::to_string(d.node) +
                  ":" + std::to_string(d.device);
  return d.numa < 0 ? s : s + ":" + std::to_string(d.numa);
}

void CheckList(const std::vector<LogicDevice>& devs) {
  FUZZ_CHECK(devs.size() <= kMaxExpanded);
  std::set<std::tuple<int32_t, int32_t, int32_t, int32_t>> seen;
  for (const LogicDevice& d : devs) {
    FUZZ_CHECK(d.cluster >= 0 && d.node >= 0 && d.device >= 0 && d.numa >= -1);
    FUZZ_CHECK(seen.emplace(d.cluster, d.node, d.device, d.numa).second);
  }
}

void FuzzDeployInfo(std::string_view text) {
  DeployInfo info;
  if (!hflow::deploy::ParseDeployInfo(text, "fuzz.json", NodeNames(), Cluster(),
                                      &info)
           .ok()) {
    return;
  }
  std::string entries;
  for (const auto& [name, devs] : info.placement) {
    bool known = false;
    for (const auto& n : NodeNames()) known = known || n == name;
    FUZZ_CHECK(known);
    CheckList(devs);
    std::string list;
    for (const LogicDevice& d : devs) {
      FUZZ_CHECK(InCluster(d));
      list += (list.empty() ? "" : ",") + Text(d);
    }
    // An empty flow_node_list places nothing, so every placement has devices.
    FUZZ_CHECK(!devs.empty());
    entries += std::string(entries.empty() ? "" : ",") +
               "{\"flow_node_name\":\"" + name + "\",\"logic_device_id\":\"" +
               list + "\"}";
  }
  DeployInfo again;
  FUZZ_CHECK(
      hflow::deploy::ParseDeployInfo("{\"deploy_info\":[" + entries + "]}",
                                     "again", NodeNames(), Cluster(), &again)
          .ok());
  FUZZ_CHECK(again.placement == info.placement);
}

void FuzzDeviceList(std::string_view text) {
  std::vector<LogicDevice> devs;
  if (!hflow::deploy::ParseLogicDeviceList(text, &devs).ok()) return;
  FUZZ_CHECK(!devs.empty());
  CheckList(devs);
  std::string list;
  for (const LogicDevice& d : devs) list += (list.empty() ? "" : ",") + Text(d);
  std::vector<LogicDevice> again;
  FUZZ_CHECK(hflow::deploy::ParseLogicDeviceList(list, &again).ok());
  FUZZ_CHECK(again == devs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = hflow_fuzz::AsText(data, size);
  FuzzDeployInfo(text);
  FuzzDeviceList(text);
  return 0;
}
