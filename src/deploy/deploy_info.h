// Deploy info (GE format; see docs/formats.md): which devices each flow
// node runs on.
//   {"batch_deploy_info": [{"flow_node_list": ["add"], "logic_device_list":
//   "0:0:2~5"}],
//    "deploy_info": [{"flow_node_name": "post", "logic_device_id": "0:0:3"}]}
// A logic device is cluster:node:device[:numa]; each part a number or a range
// a~b; entries separated by commas; the Cartesian product gives one instance
// per device (more than one: data-parallel replicas).
//
// Thread-safety: plain values; parsing is reentrant.
#ifndef HFLOW_DEPLOY_DEPLOY_INFO_H_
#define HFLOW_DEPLOY_DEPLOY_INFO_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "hflow/cluster.h"
#include "hflow/status.h"

namespace hflow {
namespace deploy {

struct LogicDevice {
  int32_t cluster = 0;
  int32_t node = 0;    // cluster node id (host)
  int32_t device = 0;  // item_list[].device_id
  int32_t numa = -1;   // -1: not given
  bool operator==(const LogicDevice& o) const {
    return cluster == o.cluster && node == o.node && device == o.device &&
           numa == o.numa;
  }
};

// Expands "0:0:2~5,0:0:7" into logic devices, in order, without duplicates
// (a duplicate is an error: two replicas on one device by accident).
Status ParseLogicDeviceList(std::string_view text,
                            std::vector<LogicDevice>* out);

struct DeployInfo {
  // Flow node name -> its devices (one instance each), in listed order.
  std::map<std::string, std::vector<LogicDevice>> placement;
};

// Parses and checks against the graph's node names and the cluster: unknown
// node names, nodes placed twice, nodes or devices outside the cluster and
// malformed ranges are rejected naming `source` and the entry.
Status ParseDeployInfo(std::string_view json_text, std::string_view source,
                       const std::vector<std::string>& node_names,
                       const ClusterConfig& cluster, DeployInfo* out);
Status LoadDeployInfoFile(const std::string& path,
                          const std::vector<std::string>& node_names,
                          const ClusterConfig& cluster, DeployInfo* out);

}  // namespace deploy
}  // namespace hflow

#endif  // HFLOW_DEPLOY_DEPLOY_INFO_H_
