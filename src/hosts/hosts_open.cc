// libhflow_hosts.so's entry (hflow_hosts_open_v1, deploy/remote_hosts.h):
// a deployment's hosts connected, checked and watched, in parallel, and
// the instances made on them.
//
// Thread-safety: Create from several deploy pool threads (links_ is
// read-only once Open returns; ids are atomic). Each watch reports its
// host's loss once, from its own thread.
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "deploy/remote_hosts.h"
#include "hosts/host_instance.h"
#include "net/cluster_hosts.h"
#include "util/thread_name.h"

namespace hflow::hosts {
namespace {

// Beats every 200 ms; a host silent for 1.5 s is lost, so a graph fails
// within the 2 s its users may wait for (the connection's keepalive ends
// a call in flight to a stopped daemon within about as long), while a
// busy host that is late by a beat or seven is not.
constexpr uint32_t kBeatMs = 200;
constexpr uint32_t kLostAfterMs = 1500;

class Hosts final : public deploy::RemoteHosts {
 public:
  // Ends the session on every host at once, waiting for their unloads,
  // then the watches (whose end would also end them).
  ~Hosts() override {
    std::vector<std::thread> ends;
    for (auto& [node, link] : links_) {
      ends.emplace_back([this, link = link] {
        util::SetCurrentThreadName("hflow-hostend");
        EndSession(*link, stop_timeout_ms_);
      });
    }
    for (auto& t : ends) t.join();
    watches_.clear();
  }

  void Closing() override {
    for (auto& [node, link] : links_) link->closing = true;
  }

  Status Open(const deploy::RemoteHostsOptions& o);

  Status Create(deploy::RemoteInstanceSpec spec,
                std::unique_ptr<flow_func::Instance>* out) override {
    auto it = links_.find(spec.host);
    if (it == links_.end()) {
      return Status::Internal("cluster node " + std::to_string(spec.host) +
                              " was not connected");
    }
    *out =
        std::make_unique<HostInstance>(it->second, next_id_++, std::move(spec));
    return Status::OK();
  }

 private:
  // Connects to `node` and checks its daemon: identity, protocol, devices.
  static Status Connect(const deploy::RemoteHostsOptions& o,
                        const net::Credentials& creds, const ClusterNode& node,
                        const std::vector<int32_t>& devices,
                        std::shared_ptr<net::HostClient>* out);

  // A Stop for the session (instance 0): the daemon unloads all of it.
  static void EndSession(const HostLink& link, int32_t timeout_ms) {
    worker::v1::HostMessage m;
    m.mutable_stop();
    net::InstanceCall call;
    call.session = link.session;
    call.request = m.SerializeAsString();
    net::InstanceReply reply;
    (void)link.client->Call(&call, &reply, timeout_ms);  // gone: ended
  }

  std::map<int32_t, std::shared_ptr<HostLink>> links_;
  std::vector<std::unique_ptr<net::HostWatch>> watches_;
  int32_t stop_timeout_ms_ = -1;
  std::atomic<uint64_t> next_id_{1};
};

// The connections of this process's deployments, by daemon, node and
// credentials: a deployment reuses the connection (and its TLS session)
// of one before it while that one lives, instead of a new handshake.
std::shared_ptr<net::HostClient> CachedClient(
    const std::string& key,
    const std::function<Status(std::shared_ptr<net::HostClient>*)>& connect,
    Status* status) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<net::HostClient>> cache;
  {
    std::lock_guard<std::mutex> l(mu);
    if (auto c = cache[key].lock()) return c;
  }
  std::shared_ptr<net::HostClient> c;
  *status = connect(&c);
  if (!status->ok()) return nullptr;
  std::lock_guard<std::mutex> l(mu);
  cache[key] = c;
  return c;
}

Status Hosts::Connect(const deploy::RemoteHostsOptions& o,
                      const net::Credentials& creds, const ClusterNode& node,
                      const std::vector<int32_t>& devices,
                      std::shared_ptr<net::HostClient>* out) {
  net::HostAddress address;
  HFLOW_RETURN_IF_ERROR(net::NodeAddress(o.cluster, node, &address));
  net::ClientOptions co;
  co.credentials = creds;
  co.name = "cluster node " + std::to_string(node.node_id);
  Status connected;
  std::shared_ptr<net::HostClient> client = CachedClient(
      address.ToString() + "|" + co.name + "|" + creds.Describe() + "|" +
          creds.token + creds.cert_pem,
      [&](std::shared_ptr<net::HostClient>* c) {
        std::unique_ptr<net::HostClient> made;
        HFLOW_RETURN_IF_ERROR(net::HostClient::Connect(address, co, &made));
        *c = std::move(made);
        return Status::OK();
      },
      &connected);
  HFLOW_RETURN_IF_ERROR(connected);
  net::HelloQuery q;
  q.node_id = node.node_id;
  q.devices = node.DeviceIds();
  q.driver = o.session;
  net::HelloInfo info;
  HFLOW_RETURN_IF_ERROR(client->Hello(q, &info));
  if (info.node_id >= 0 && info.node_id != node.node_id) {
    return Status::InvalidArgument(
        client->Where() + " says it is cluster node " +
        std::to_string(info.node_id) + ", but " + o.cluster.source +
        " gives its ipaddr and port to node " + std::to_string(node.node_id) +
        "; correct cluster_nodes[].ipaddr/port, or hflowd --node-id");
  }
  for (int32_t d : devices) {
    if (std::find(info.devices.begin(), info.devices.end(), d) ==
        info.devices.end()) {
      return Status::InvalidArgument(
          client->Where() + " serves devices " +
          FormatDeviceList(info.devices) + ", not device " + std::to_string(d) +
          ", which the deploy info places a node on; "
          "start hflowd there with --devices " +
          FormatDeviceList(node.DeviceIds()) + " (as " + o.cluster.source +
          " lists for node " + std::to_string(node.node_id) + ")");
    }
  }
  *out = std::move(client);
  return Status::OK();
}

Status Hosts::Open(const deploy::RemoteHostsOptions& o) {
  stop_timeout_ms_ = o.stop_timeout_ms;
  net::Credentials creds;
  HFLOW_RETURN_IF_ERROR(net::LoadClusterCredentials(o.cluster, &creds));
  std::vector<int32_t> nodes;
  std::vector<const ClusterNode*> found;
  for (const auto& [id, devs] : o.devices) {
    const ClusterNode* node = nullptr;
    for (const ClusterNode& n : o.cluster.nodes) {
      if (n.node_id == id) node = &n;
    }
    if (node == nullptr) {
      return Status::InvalidArgument("cluster node " + std::to_string(id) +
                                     " is not in " + o.cluster.source);
    }
    nodes.push_back(id);
    found.push_back(node);
  }
  // In parallel: a deployment over many hosts waits for the slowest once.
  std::vector<Status> status(nodes.size());
  std::vector<std::shared_ptr<net::HostClient>> clients(nodes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < nodes.size(); ++i) {
    threads.emplace_back([&, i] {
      util::SetCurrentThreadName("hflow-hostopen");
      status[i] =
          Connect(o, creds, *found[i], o.devices.at(nodes[i]), &clients[i]);
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : status) HFLOW_RETURN_IF_ERROR(s);
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto link = std::make_shared<HostLink>();
    link->node = nodes[i];
    link->client = clients[i];
    link->session = o.session;
    link->on_lost = o.on_lost;
    links_[nodes[i]] = link;
    watches_.push_back(
        clients[i]->Watch(kBeatMs, kLostAfterMs, o.on_lost, o.session));
  }
  return Status::OK();
}

}  // namespace
}  // namespace hflow::hosts

extern "C" __attribute__((visibility("default"))) hflow::Status
hflow_hosts_open_v1(const hflow::deploy::RemoteHostsOptions& options,
                    std::unique_ptr<hflow::deploy::RemoteHosts>* out) {
  auto hosts = std::make_unique<hflow::hosts::Hosts>();
  HFLOW_RETURN_IF_ERROR(hosts->Open(options));
  *out = std::move(hosts);
  return hflow::Status::OK();
}
