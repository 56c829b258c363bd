// Checks before deployment (see plan_check.h).
//
// Thread-safety: pure functions; no shared state.
#include "tools/plan_check.h"

#include <utility>

#include "deploy/deploy_info.h"

namespace hflow::tools {
namespace {

std::string MiB(uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

Status CheckAndPlan(deploy::GraphDef graph, const std::string& deploy_file,
                    const ClusterConfig& cluster, deploy::Plan* plan) {
  HFLOW_RETURN_IF_ERROR(deploy::CheckBuiltinArity(graph));
  HFLOW_RETURN_IF_ERROR(deploy::ExpandInputAttrs(&graph));
  deploy::DeployInfo info;
  HFLOW_RETURN_IF_ERROR(
      deploy::DeployInfoForGraph(graph, deploy_file, cluster, &info));
  HFLOW_RETURN_IF_ERROR(
      deploy::MakePlan(graph, cluster, info, deploy::PlanOptions{}, plan));
  return CheckPlanMemory(*plan, cluster);
}

Status CheckPlanMemory(const deploy::Plan& plan, const ClusterConfig& cluster) {
  const uint64_t need = plan.options.group_bytes;
  for (int32_t id : plan.devices) {
    uint64_t have = 0;
    for (const DeviceDesc& d : cluster.LocalNode().devices) {
      if (d.device_id == id) have = d.memory_bytes;
    }
    if (have >= need) continue;
    std::string nodes;
    for (const deploy::InstancePlan& inst : plan.instances) {
      if (inst.device != id) continue;
      nodes += (nodes.empty() ? "'" : ", '") + inst.node + "#" +
               std::to_string(inst.replica) + "'";
    }
    return Status::OutOfMemory(
        plan.graph.source + ": device " + std::to_string(id) + " has " +
        std::to_string(have) + " bytes of memory, but the plan needs " +
        MiB(need) + " there for the messages of " + nodes +
        "; give the device more memory_bytes in the cluster file, or place "
        "those nodes on another device");
  }
  return Status::OK();
}

}  // namespace hflow::tools
