// Checks before deployment (see plan_check.h).
//
// Thread-safety: pure functions; no shared state.
#include "tools/plan_check.h"

#include <utility>

#include "deploy/deploy_info.h"

namespace hflow::tools {
Status CheckAndPlan(deploy::GraphDef graph, const std::string& deploy_file,
                    const Options& options, deploy::Plan* plan) {
  const ClusterConfig& cluster = options.cluster;
  HFLOW_RETURN_IF_ERROR(deploy::CheckBuiltinArity(graph));
  HFLOW_RETURN_IF_ERROR(deploy::ExpandInputAttrs(&graph));
  deploy::DeployInfo info;
  HFLOW_RETURN_IF_ERROR(
      deploy::DeployInfoForGraph(graph, deploy_file, cluster, &info));
  deploy::PlanOptions popts;
  popts.queue_depth = options.queue_depth;
  popts.group_bytes = options.mbuf_pool_bytes;
  popts.cache_bytes = options.mbuf_pool_bytes;
  popts.max_alloc_bytes = options.max_message_bytes;
  HFLOW_RETURN_IF_ERROR(deploy::MakePlan(graph, cluster, info, popts, plan));
  return Status::OK();
}

}  // namespace hflow::tools
