// Probing a cluster's remote hosts (net/cluster_hosts.h).
//
// Thread-safety: each probe thread writes only its own HostProbe.
#include "net/cluster_hosts.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "net/host_client.h"
#include "util/thread_name.h"

namespace hflow::net {
namespace {

std::string NodePath(const ClusterConfig& cluster, const ClusterNode& node) {
  const size_t i = static_cast<size_t>(&node - cluster.nodes.data());
  return cluster.source + ": cluster[0].cluster_nodes[" + std::to_string(i) +
         "]";
}

std::string DriverName() {
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  return std::string(host) + ":" + std::to_string(::getpid());
}

// The config's node against what its daemon says.
Status Match(const ClusterConfig& cluster, const ClusterNode& node,
             const std::string& where, const HelloInfo& info) {
  if (info.node_id >= 0 && info.node_id != node.node_id) {
    return Status::FailedPrecondition(
        NodePath(cluster, node) + ".node_id: " + where + " serves node " +
        std::to_string(info.node_id) + ", but the config lists it as node " +
        std::to_string(node.node_id) +
        "; correct node_id or the daemon's --node-id");
  }
  for (size_t i = 0; i < node.devices.size(); ++i) {
    const int32_t d = node.devices[i].device_id;
    if (std::find(info.devices.begin(), info.devices.end(), d) ==
        info.devices.end()) {
      return Status::FailedPrecondition(
          NodePath(cluster, node) + ".item_list[" + std::to_string(i) +
          "].device_id: device " + std::to_string(d) + " is not served by " +
          where + ", which serves " + FormatDeviceList(info.devices) +
          "; start hflowd there with --devices listing it, or remove it "
          "from the node's item_list");
    }
  }
  return Status::OK();
}

void Probe(const ClusterConfig& cluster, const ClusterNode& node,
           const Credentials& creds, const ProbeOptions& o, HostProbe* p) {
  util::SetCurrentThreadName("hflow-probe");
  p->node_id = node.node_id;
  p->status = NodeAddress(cluster, node, &p->address);
  if (!p->status.ok()) return;
  ClientOptions co;
  co.credentials = creds;
  co.connect_timeout_ms = o.timeout_ms;
  co.call_timeout_ms = o.timeout_ms;
  co.name = "node " + std::to_string(node.node_id);
  co.protocol_version = o.protocol_version;
  std::unique_ptr<HostClient> client;
  p->status = HostClient::Connect(p->address, co, &client);
  if (!p->status.ok()) return;
  HelloQuery q;
  q.node_id = node.node_id;
  q.devices = node.DeviceIds();
  q.driver = DriverName();
  const auto t0 = std::chrono::steady_clock::now();
  p->status = client->Hello(q, &p->info);
  p->hello_ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
  if (!p->status.ok()) return;
  p->status = Match(cluster, node, client->Where(), p->info);
}

}  // namespace

Status LoadClusterCredentials(const ClusterConfig& cluster, Credentials* out) {
  const ClusterCredentials& c = cluster.credentials;
  CredentialFiles files{c.token_file, c.tls_ca, c.tls_cert, c.tls_key};
  if (files.Empty()) {
    return Status::InvalidArgument(
        cluster.source +
        ": the cluster has other hosts but no \"credentials\"; hflowd "
        "serves only clients with the cluster's credentials: add "
        "\"credentials\": {\"token_file\": \"FILE\"} (the file hflowd was "
        "given with --token-file) or TLS files (tls_ca, tls_cert, tls_key)");
  }
  Status s = LoadCredentials(files, out);
  if (!s.ok()) {
    return Status(s.code(), cluster.source + ": credentials: " + s.message());
  }
  return Status::OK();
}

Status NodeAddress(const ClusterConfig& cluster, const ClusterNode& node,
                   HostAddress* out) {
  const std::string path = NodePath(cluster, node);
  if (node.ipaddr.empty() || node.port == 0) {
    return Status::InvalidArgument(
        path + ": node " + std::to_string(node.node_id) +
        " is another host but has no " +
        (node.ipaddr.empty() ? "\"ipaddr\"" : "\"port\"") +
        "; write where its hflowd listens, e.g. \"ipaddr\": \"10.0.0.2\", "
        "\"port\": 7000");
  }
  return MakeHostAddress(node.ipaddr, node.port, path + ".ipaddr", out);
}

Status ProbeHosts(const ClusterConfig& cluster, const Credentials& creds,
                  const ProbeOptions& options, std::vector<HostProbe>* out) {
  const std::vector<const ClusterNode*> remote = cluster.RemoteNodes();
  out->assign(remote.size(), HostProbe{});
  std::vector<std::thread> threads;
  for (size_t i = 0; i < remote.size(); ++i) {
    threads.emplace_back(
        [&, i] { Probe(cluster, *remote[i], creds, options, &(*out)[i]); });
  }
  for (std::thread& t : threads) t.join();
  for (const HostProbe& p : *out) {
    if (!p.status.ok()) return p.status;
  }
  return Status::OK();
}

}  // namespace hflow::net
