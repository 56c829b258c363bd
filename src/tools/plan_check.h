// The checks `hflow validate` and `hflow run` make on a loaded graph before
// anything is deployed: input attrs, placement (the deploy info against the
// cluster), the plan, and whether each used device's memory can hold what
// the plan puts there. Errors name the file or field, the device and the
// nodes, and say what to change.
//
// Thread-safety: pure functions over their arguments; reentrant.
#ifndef HFLOW_TOOLS_PLAN_CHECK_H_
#define HFLOW_TOOLS_PLAN_CHECK_H_

#include <cstdint>
#include <string>

#include "deploy/graph_def.h"
#include "deploy/planner.h"
#include "hflow/cluster.h"
#include "hflow/status.h"

namespace hflow::tools {

// Expands `graph`'s input attrs, places it (`deploy_file` overrides the
// graph's own deploy info) and makes `*plan`, then checks memory
// (CheckPlanMemory).
Status CheckAndPlan(deploy::GraphDef graph, const std::string& deploy_file,
                    const ClusterConfig& cluster, deploy::Plan* plan);

// Note [Plan memory]: a used device holds one memory group for the graph's
// messages (PlanOptions::group_bytes, 256 MiB by default), from which every
// queue's messages and the UDFs' output messages are allocated. A device
// whose memory_bytes is smaller cannot deploy; this says so naming the
// device and the instances placed there.
Status CheckPlanMemory(const deploy::Plan& plan, const ClusterConfig& cluster);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_PLAN_CHECK_H_
