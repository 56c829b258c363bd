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

// Runs `each(i)` for i in [0, n), each on a thread of its own named
// `name`, all at once (a deployment over many hosts waits for the slowest
// once, not for their sum); their first error, in order of i.
Status OnEachHost(size_t n, const char* name,
                  const std::function<Status(size_t)>& each) {
  std::vector<Status> status(n);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      util::SetCurrentThreadName(name);
      status[i] = each(i);
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : status) HFLOW_RETURN_IF_ERROR(s);
  return Status::OK();
}

class Hosts final : public deploy::RemoteHosts {
 public:
  // Ends the session on every host at once, waiting for their unloads,
  // then the watches (whose end would also end them).
  ~Hosts() override {
    const std::vector<std::shared_ptr<HostLink>> links = Links();
    (void)OnEachHost(links.size(), "hflow-hostend", [&](size_t i) {
      EndSession(*links[i], stop_timeout_ms_);
      return Status::OK();
    });
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

  Status InitAll(const std::vector<flow_func::Instance*>& made) override;
  Status Reports(std::vector<DeviceReport>* out) override;

 private:
  // Connects to `node` and checks its daemon: identity, protocol, devices.
  static Status Connect(const deploy::RemoteHostsOptions& o,
                        const net::Credentials& creds, const ClusterNode& node,
                        const std::vector<int32_t>& devices,
                        std::shared_ptr<net::HostClient>* out);

  std::vector<std::shared_ptr<HostLink>> Links() const {
    std::vector<std::shared_ptr<HostLink>> links;
    for (const auto& [node, link] : links_) links.push_back(link);
    return links;
  }

  // One Batch of `insts`' Loads to their host (Note [Loads side by side]
  // in daemon/instance_load.cc).
  static Status LoadOnHost(const std::vector<HostInstance*>& insts);

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

// Note [Connections outlive deployments]
// A connection costs a new channel, a TCP (and TLS) handshake and
// gRPC's settings exchange: milliseconds that a deployment's build would
// pay per host, and a session that builds graphs one after the other
// would pay every time. The process keeps each connection it made, by
// daemon, node and credentials, and a deployment reuses one that is up
// (Ready). Up is a guess: a daemon that died a moment ago (and perhaps
// restarted at its address) may not have been noticed yet. So a reused
// connection whose Hello fails is dropped and the Hello tried once more
// on a new one; the error, if any, is the new connection's. Deployments
// still holding an old connection keep it. The table is never destroyed:
// gRPC objects must not be torn down by static destructors at exit.
class ClientCache {
 public:
  static ClientCache& Get() {
    static auto* cache = new ClientCache();
    return *cache;
  }
  // The connection kept for `key`, if it is up; nullptr otherwise.
  std::shared_ptr<net::HostClient> Find(const std::string& key) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = clients_.find(key);
    if (it == clients_.end() || !it->second->Ready()) return nullptr;
    return it->second;
  }
  void Keep(const std::string& key, std::shared_ptr<net::HostClient> c) {
    std::lock_guard<std::mutex> l(mu_);
    // Connections nobody uses and that are down go.
    for (auto it = clients_.begin(); it != clients_.end();) {
      if (it->second.use_count() == 1 && !it->second->Ready()) {
        it = clients_.erase(it);
      } else {
        ++it;
      }
    }
    clients_[key] = std::move(c);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<net::HostClient>> clients_;
};

Status Hosts::Connect(const deploy::RemoteHostsOptions& o,
                      const net::Credentials& creds, const ClusterNode& node,
                      const std::vector<int32_t>& devices,
                      std::shared_ptr<net::HostClient>* out) {
  net::HostAddress address;
  HFLOW_RETURN_IF_ERROR(net::NodeAddress(o.cluster, node, &address));
  net::ClientOptions co;
  co.credentials = creds;
  co.name = "cluster node " + std::to_string(node.node_id);
  const std::string key = address.ToString() + "|" + co.name + "|" +
                          creds.Describe() + "|" + creds.token + creds.cert_pem;
  net::HelloQuery q;
  q.node_id = node.node_id;
  q.devices = node.DeviceIds();
  q.driver = o.session;
  net::HelloInfo info;
  std::shared_ptr<net::HostClient> client = ClientCache::Get().Find(key);
  Status said = client != nullptr ? client->Hello(q, &info)
                                  : Status::NotFound("no connection yet");
  // None kept, or a kept one whose connection is gone after all (no
  // answer, or none in time); a daemon's refusal stands.
  if (said.code() == StatusCode::kNotFound ||
      said.code() == StatusCode::kTimeout) {
    std::unique_ptr<net::HostClient> made;
    HFLOW_RETURN_IF_ERROR(net::HostClient::Connect(address, co, &made));
    client = std::move(made);
    said = client->Hello(q, &info);
    if (said.ok()) ClientCache::Get().Keep(key, client);
  }
  HFLOW_RETURN_IF_ERROR(said);
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

Status Hosts::LoadOnHost(const std::vector<HostInstance*>& insts) {
  worker::v1::HostMessage m;
  int32_t timeout_ms = 0;  // the longest Init allowed; -1: none
  for (size_t i = 0; i < insts.size(); ++i) {
    Status made = insts[i]->MakeLoad(m.mutable_batch()->add_msgs());
    if (!made.ok()) {  // nothing sent: the ones made leave their Init
      for (size_t j = 0; j < i; ++j) (void)insts[j]->Loaded(made, "");
      return made;
    }
    const int32_t t = insts[i]->init_timeout_ms();
    timeout_ms = (t < 0 || timeout_ms < 0) ? -1 : std::max(timeout_ms, t);
  }
  const HostLink& link = insts.front()->link();
  net::InstanceCall call;
  call.session = link.session;
  call.request = m.SerializeAsString();
  net::InstanceReply reply;
  Status sent = link.client->Call(&call, &reply, timeout_ms);
  if (sent.ok() && reply.replies.size() != insts.size()) {
    sent = Status::Internal(link.client->Where() + " answered " +
                            std::to_string(reply.replies.size()) + " of " +
                            std::to_string(insts.size()) + " loads");
  }
  Status first;
  for (size_t i = 0; i < insts.size(); ++i) {
    Status s = insts[i]->Loaded(sent, sent.ok() ? reply.replies[i] : "");
    if (first.ok()) first = s;
  }
  return first;
}

Status Hosts::InitAll(const std::vector<flow_func::Instance*>& made) {
  std::map<int32_t, std::vector<HostInstance*>> by_host;
  for (flow_func::Instance* inst : made) {
    auto* h = static_cast<HostInstance*>(inst);  // Create made it
    by_host[h->link().node].push_back(h);
  }
  std::vector<const std::vector<HostInstance*>*> lists;
  for (const auto& [node, insts] : by_host) lists.push_back(&insts);
  return OnEachHost(lists.size(), "hflow-hostload",
                    [&](size_t i) { return LoadOnHost(*lists[i]); });
}

Status Hosts::Reports(std::vector<DeviceReport>* out) {
  const std::vector<std::shared_ptr<HostLink>> links = Links();
  std::vector<std::vector<DeviceReport>> rows(links.size());
  HFLOW_RETURN_IF_ERROR(  // all or none
      OnEachHost(links.size(), "hflow-hostreport", [&](size_t i) {
        return links[i]->client->DeviceReports(&rows[i]);
      }));
  for (size_t i = 0; i < links.size(); ++i) {
    for (DeviceReport& r : rows[i]) {
      r.node = links[i]->node;
      out->push_back(r);
    }
  }
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
  std::vector<std::shared_ptr<net::HostClient>> clients(nodes.size());
  HFLOW_RETURN_IF_ERROR(
      OnEachHost(nodes.size(), "hflow-hostopen", [&](size_t i) {
        return Connect(o, creds, *found[i], o.devices.at(nodes[i]),
                       &clients[i]);
      }));
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
