// The deployment plan: where every node instance runs, a queue for every
// edge, and a memory group per device. Inspectable as text and as Graphviz
// DOT with one cluster per device.
//
// Note [Queue placement]: a node input's queue lives on the device of the
// consuming instance: the consumer dequeues locally in its hot loop, and a
// producer on another device pays the one cross-device copy when it
// enqueues (issued on the destination device). Replicated consumers have
// one input queue per replica; a message with transaction id t goes to the
// replica exec::ReplicaOf(t) picks (a hash of t: Note [Replica choice] in
// exec/router.cc), so the messages of one transaction meet in one instance. A
// graph output's queue lives on the device of the producing
// node's first instance, so the common single-instance case copies nothing
// before the fetch.
//
// Thread-safety: a Plan is an immutable value once made.
#ifndef HFLOW_DEPLOY_PLANNER_H_
#define HFLOW_DEPLOY_PLANNER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "deploy/deploy_info.h"
#include "deploy/graph_def.h"
#include "hflow/cluster.h"

namespace hflow {
namespace deploy {

struct InstancePlan {
  std::string node;
  int32_t replica = 0;
  int32_t replicas = 1;
  // The local device whose executor calls it and holds its input queues.
  int32_t device = 0;
  // A replica on another host (Note [Instances on other hosts] in
  // deploy/remote_hosts.cc): that cluster node and its device there; -1:
  // this host's.
  int32_t host = -1;
  int32_t host_device = -1;

  bool Remote() const { return host >= 0; }
};

struct QueuePlan {
  std::string name;  // "add#0.in1", "out0"
  int32_t device = 0;
  uint32_t depth = 0;  // Note [Flow attribute precedence] in flow_attrs.cc
  EnqueuePolicy policy = EnqueuePolicy::kFifo;
  OutputRef producer;  // graph input or node output
  // Consumer: an instance input, or a graph output.
  bool graph_output = false;
  uint32_t output_index = 0;  // graph output index
  std::string node;           // consuming node
  int32_t replica = 0;
  uint32_t input = 0;  // node input index
};

struct PlanOptions {
  uint32_t queue_depth = 64;
  // The group and its one cache are the pool (Options::mbuf_pool_bytes);
  // max_alloc_bytes is the largest message (Options::max_message_bytes).
  uint64_t group_bytes = kDefaultMbufPoolBytes;  // per used device
  uint64_t cache_bytes = kDefaultMbufPoolBytes;  // one cache per group
  uint64_t max_alloc_bytes = kDefaultMaxMessageBytes;
};

struct Plan {
  GraphDef graph;
  PlanOptions options;
  std::vector<InstancePlan> instances;  // node order, then replica
  std::vector<QueuePlan> queues;
  std::vector<int32_t> devices;  // devices used, ascending
  // The cluster it was planned for (its hosts and credentials, for
  // instances on other hosts).
  ClusterConfig cluster;

  // Indexes into instances/queues.
  std::vector<size_t> InstancesOf(const std::string& node) const;
  // Queues fed by `producer` (one per consumer instance, plus outputs).
  std::vector<size_t> QueuesFedBy(const OutputRef& producer) const;
  // Input queue of (node, replica, input), or -1.
  int64_t InputQueue(const std::string& node, int32_t replica,
                     uint32_t input) const;
  int64_t OutputQueue(uint32_t graph_output) const;

  std::string ToText() const;
  std::string ToDot() const;
};

// The pool must hold what back-pressure reserves (Note [Waiting for memory]
// in services/memory_group.cc): a feed leaves two largest messages free, so
// a pool of at least three lets any message in. The checks MakePlan makes
// on the options, naming the options and the device.
// `plan` gives the devices used and the instances placed on each.
Status CheckPoolOptions(const PlanOptions& options,
                        const ClusterConfig& cluster, const Plan& plan);

// The graph's placement: `override_path` if given, else the graph's own
// deploy info (inline or file), else none (all round-robin).
Status DeployInfoForGraph(const GraphDef& graph,
                          const std::string& override_path,
                          const ClusterConfig& cluster, DeployInfo* out);

// Places every node (deploy info, else round-robin over the cluster's local
// devices in topological order) and lays out queues and groups.
Status MakePlan(const GraphDef& graph, const ClusterConfig& cluster,
                const DeployInfo& deploy, const PlanOptions& options,
                Plan* out);

}  // namespace deploy
}  // namespace hflow

#endif  // HFLOW_DEPLOY_PLANNER_H_
