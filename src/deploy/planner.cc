// Planning (see planner.h). Thread-safety: reentrant; plans are values.
#include "deploy/planner.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace hflow {
namespace deploy {
namespace {

std::string InstanceName(const InstancePlan& i) {
  return i.replicas > 1 ? i.node + "#" + std::to_string(i.replica) : i.node;
}

// Note [OVERWRITE where transactions pair]
// A node with several inputs, and a fetch of several outputs, pair
// messages by transaction id. An OVERWRITE queue drops messages on its
// own, so the partner of a dropped message would wait for it forever (the
// node stalls on that transaction; the fetch holds its outputs until it
// fails). Until input alignment with dropping lets such a wait end, hflow
// refuses OVERWRITE there, at planning, rather than let the graph hang.
Status CheckOverwriteQueues(const Plan& plan) {
  const GraphDef& g = plan.graph;
  for (const QueuePlan& q : plan.queues) {
    if (q.policy != EnqueuePolicy::kOverwrite) continue;
    std::string where;
    if (q.graph_output && g.outputs.size() > 1) {
      where = "graph output " + std::to_string(q.output_index) + " (one of " +
              std::to_string(g.outputs.size()) + " outputs a fetch pairs)";
    } else if (!q.graph_output && g.FindNode(q.node)->inputs.size() > 1) {
      where = "node '" + q.node + "' input " + std::to_string(q.input) +
              " (one of " + std::to_string(g.FindNode(q.node)->inputs.size()) +
              " inputs it pairs)";
    }
    if (where.empty()) continue;
    return Status::InvalidArgument(
        g.source + ": " + where +
        ": enqueue policy OVERWRITE is not supported where messages are "
        "paired by transaction (a dropped message would leave its partner "
        "waiting forever); set OVERWRITE on single-input nodes and "
        "single-output graphs only, or FIFO here");
  }
  return Status::OK();
}

}  // namespace

std::vector<size_t> Plan::InstancesOf(const std::string& node) const {
  std::vector<size_t> v;
  for (size_t i = 0; i < instances.size(); ++i) {
    if (instances[i].node == node) v.push_back(i);
  }
  return v;
}

std::vector<size_t> Plan::QueuesFedBy(const OutputRef& producer) const {
  std::vector<size_t> v;
  for (size_t i = 0; i < queues.size(); ++i) {
    if (queues[i].producer == producer) v.push_back(i);
  }
  return v;
}

int64_t Plan::InputQueue(const std::string& node, int32_t replica,
                         uint32_t input) const {
  for (size_t i = 0; i < queues.size(); ++i) {
    const QueuePlan& q = queues[i];
    if (!q.graph_output && q.node == node && q.replica == replica &&
        q.input == input) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

int64_t Plan::OutputQueue(uint32_t graph_output) const {
  for (size_t i = 0; i < queues.size(); ++i) {
    if (queues[i].graph_output && queues[i].output_index == graph_output) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

Status DeployInfoForGraph(const GraphDef& graph,
                          const std::string& override_path,
                          const ClusterConfig& cluster, DeployInfo* out) {
  std::vector<std::string> names;
  for (const NodeDef& n : graph.nodes) names.push_back(n.name);
  if (!override_path.empty()) {
    return LoadDeployInfoFile(override_path, names, cluster, out);
  }
  if (!graph.deploy_info_path.empty()) {
    return LoadDeployInfoFile(graph.deploy_info_path, names, cluster, out);
  }
  if (!graph.deploy_info_json.empty()) {
    return ParseDeployInfo(graph.deploy_info_json, graph.source + " (deploy)",
                           names, cluster, out);
  }
  *out = DeployInfo{};
  return Status::OK();
}

Status MakePlan(const GraphDef& graph, const ClusterConfig& cluster,
                const DeployInfo& deploy, const PlanOptions& options,
                Plan* out) {
  std::vector<int32_t> local = cluster.LocalDeviceIds();
  if (local.empty()) {
    return Status::InvalidArgument("plan: the cluster has no local devices");
  }
  Plan plan;
  plan.graph = graph;
  plan.cluster = cluster;
  plan.options = options;
  size_t rr = 0;  // round-robin cursor over local devices
  std::map<std::string, std::vector<int32_t>> placed;
  // A replica's place: its device in this process (for a replica on
  // another host: the local device that keeps its queues, Note [Instances
  // on other hosts]) and, on another host, that host's node and device.
  struct Place {
    int32_t device = 0;
    int32_t host = -1;
    int32_t host_device = -1;
  };
  auto add_instances = [&](const NodeDef* n, const std::vector<Place>& at) {
    std::vector<int32_t> devs;
    for (size_t r = 0; r < at.size(); ++r) {
      devs.push_back(at[r].device);
      InstancePlan p{n->name, int32_t(r), int32_t(at.size()), at[r].device};
      p.host = at[r].host;
      p.host_device = at[r].host_device;
      plan.instances.push_back(std::move(p));
    }
    placed[n->name] = devs;
  };
  std::vector<const NodeDef*> colocated;
  for (const NodeDef* n : TopologicalOrder(graph)) {
    if (!n->colocate_with.empty()) {
      colocated.push_back(n);
      continue;
    }
    std::vector<Place> at;
    auto it = deploy.placement.find(n->name);
    if (it != deploy.placement.end()) {
      for (const LogicDevice& d : it->second) {
        if (d.node != cluster.LocalNode().node_id) {
          at.push_back(Place{local[rr++ % local.size()], d.node, d.device});
        } else {
          at.push_back(Place{d.device});
        }
      }
    } else {
      at.push_back(Place{local[rr++ % local.size()]});
    }
    add_instances(n, at);
  }
  // Nodes hflow inserted run on the first device of the node they serve,
  // in this process.
  for (const NodeDef* n : colocated) {
    auto it = placed.find(n->colocate_with);
    add_instances(
        n, {Place{it != placed.end() ? it->second.front() : local.front()}});
  }
  // A queue per (consumer instance, input), then per graph output.
  for (const InstancePlan& inst : plan.instances) {
    const NodeDef* n = graph.FindNode(inst.node);
    for (uint32_t i = 0; i < n->inputs.size(); ++i) {
      QueuePlan q;
      q.name = InstanceName(inst) + ".in" + std::to_string(i);
      q.device = inst.device;
      const QueueAttr attr =
          ResolveQueueAttr(graph, n, i, n->inputs[i], options.queue_depth);
      q.depth = attr.depth;
      q.policy = attr.policy;
      q.producer = n->inputs[i];
      q.node = inst.node;
      q.replica = inst.replica;
      q.input = i;
      plan.queues.push_back(std::move(q));
    }
  }
  for (uint32_t k = 0; k < graph.outputs.size(); ++k) {
    QueuePlan q;
    q.name = "out" + std::to_string(k);
    const OutputRef& ref = graph.outputs[k];
    auto producers = plan.InstancesOf(ref.op);
    q.device = producers.empty() ? local.front()
                                 : plan.instances[producers.front()].device;
    const QueueAttr attr =
        ResolveQueueAttr(graph, nullptr, 0, ref, options.queue_depth);
    q.depth = attr.depth;
    q.policy = attr.policy;
    q.producer = ref;
    q.graph_output = true;
    q.output_index = k;
    plan.queues.push_back(std::move(q));
  }
  HFLOW_RETURN_IF_ERROR(CheckOverwriteQueues(plan));
  std::set<int32_t> used;
  for (const auto& i : plan.instances) used.insert(i.device);
  for (const auto& q : plan.queues) used.insert(q.device);
  plan.devices.assign(used.begin(), used.end());
  HFLOW_RETURN_IF_ERROR(CheckPoolOptions(options, cluster, plan));
  *out = std::move(plan);
  return Status::OK();
}

Status CheckPoolOptions(const PlanOptions& o, const ClusterConfig& cluster,
                        const Plan& plan) {
  const std::vector<int32_t>& devices = plan.devices;
  const std::string pool = "the mbuf pool of " + std::to_string(o.cache_bytes) +
                           " bytes (Options::mbuf_pool_bytes, hflow run "
                           "--mbuf-pool-bytes)";
  if (o.max_alloc_bytes == 0 || o.cache_bytes / 3 < o.max_alloc_bytes) {
    return Status::InvalidArgument(
        "plan: " + pool +
        " must hold at least 3 messages of the max message "
        "size " +
        std::to_string(o.max_alloc_bytes) +
        " bytes (Options::max_message_bytes, --max-message-bytes); raise the "
        "pool or lower the max message size");
  }
  for (const ClusterNode& n : cluster.nodes) {
    if (!n.is_local) continue;
    for (const DeviceDesc& d : n.devices) {
      if (std::find(devices.begin(), devices.end(), d.device_id) ==
              devices.end() ||
          o.group_bytes <= d.memory_bytes) {
        continue;
      }
      std::string nodes;
      for (const InstancePlan& inst : plan.instances) {
        if (inst.device != d.device_id) continue;
        nodes += (nodes.empty() ? "'" : ", '") + inst.node + "#" +
                 std::to_string(inst.replica) + "'";
      }
      return Status::InvalidArgument(
          "plan: device " + std::to_string(d.device_id) + " has " +
          std::to_string(d.memory_bytes) + " bytes of memory (" +
          cluster.source + ": memory_bytes) but " + pool +
          " for the messages of " + (nodes.empty() ? "its queues" : nodes) +
          " needs more; lower the pool, give the device more memory, or "
          "place those nodes on another device");
    }
  }
  return Status::OK();
}

std::string Plan::ToText() const {
  std::ostringstream os;
  os << "graph " << graph.name << ": " << instances.size() << " instances, "
     << queues.size() << " queues on devices";
  for (int32_t d : devices) os << " " << d;
  os << "\n";
  for (int32_t d : devices) {
    os << "device " << d << ":\n";
    for (const auto& i : instances) {
      if (i.device != d) continue;
      const NodeDef* n = graph.FindNode(i.node);
      os << "  instance " << InstanceName(i) << " ("
         << (!n->pp.function.empty()         ? n->pp.function
             : !n->pp.compile_config.empty() ? n->pp.compile_config
                                             : n->pp.funcs.front().name)
         << ")";
      if (i.Remote()) {
        os << " on cluster node " << i.host << " device " << i.host_device;
      }
      os << "\n";
    }
    for (const auto& q : queues) {
      if (q.device != d) continue;
      os << "  queue " << q.name << " depth " << q.depth;
      if (q.policy != EnqueuePolicy::kFifo) {
        os << " " << EnqueuePolicyName(q.policy);
      }
      os << " <- " << q.producer.ToString() << "\n";
    }
    os << "  memory group: " << options.group_bytes << " bytes, cache "
       << options.cache_bytes << " bytes, max message "
       << options.max_alloc_bytes << " bytes\n";
  }
  return os.str();
}

std::string Plan::ToDot() const {
  std::ostringstream os;
  os << "digraph \"" << graph.name << "\" {\n  rankdir=LR;\n";
  for (const std::string& in : graph.inputs) {
    os << "  \"in:" << in << "\" [shape=invhouse,label=\"" << in << "\"];\n";
  }
  for (int32_t d : devices) {
    os << "  subgraph cluster_device" << d << " {\n    label=\"device " << d
       << "\";\n";
    for (const auto& i : instances) {
      if (i.device == d) {
        os << "    \"" << InstanceName(i) << "\" [shape=box];\n";
      }
    }
    for (const auto& q : queues) {
      if (q.device == d) {
        os << "    \"q:" << q.name << "\" [shape=ellipse,label=\"" << q.name
           << "\"];\n";
      }
    }
    os << "  }\n";
  }
  for (const auto& q : queues) {
    // Producer -> queue (every producer instance), queue -> consumer.
    if (graph.IsGraphInput(q.producer.op)) {
      os << "  \"in:" << q.producer.op << "\" -> \"q:" << q.name << "\";\n";
    } else {
      for (size_t p : InstancesOf(q.producer.op)) {
        os << "  \"" << InstanceName(instances[p]) << "\" -> \"q:" << q.name
           << "\" [label=\"" << q.producer.index << "\"];\n";
      }
    }
    if (q.graph_output) {
      os << "  \"q:" << q.name << "\" -> \"out:" << q.output_index << "\";\n";
      os << "  \"out:" << q.output_index << "\" [shape=house,label=\"output "
         << q.output_index << "\"];\n";
    } else {
      for (size_t c : InstancesOf(q.node)) {
        if (instances[c].replica == q.replica) {
          os << "  \"q:" << q.name << "\" -> \"" << InstanceName(instances[c])
             << "\";\n";
        }
      }
    }
  }
  os << "}\n";
  return os.str();
}

}  // namespace deploy
}  // namespace hflow
