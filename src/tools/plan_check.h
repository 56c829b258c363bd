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
#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow::tools {

// Expands `graph`'s input attrs, places it (`deploy_file` overrides the
// graph's own deploy info) on `options.cluster` and makes `*plan` with the
// queue depth and message pool `options` give, as BuildGraph would: the
// plan fails when a used device's memory cannot hold the message pool,
// naming the device and the instances placed there (deploy::MakePlan).
Status CheckAndPlan(deploy::GraphDef graph, const std::string& deploy_file,
                    const Options& options, deploy::Plan* plan);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_PLAN_CHECK_H_
