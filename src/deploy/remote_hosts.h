// Instances on other hosts: the interface through which a deployment
// makes them, implemented by libhflow_hosts.so (src/hosts, on gRPC), which
// libhflow loads only when a plan places a node on another host, so that
// nothing else pays for gRPC. Note [Instances on other hosts] in
// remote_hosts.cc says how such an instance runs.
//
// Thread-safety: RemoteHosts::Create may be called from several deploy
// pool threads at once; on_lost from a watch thread of the library.
#ifndef HFLOW_DEPLOY_REMOTE_HOSTS_H_
#define HFLOW_DEPLOY_REMOTE_HOSTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/instance.h"
#include "flow_func/udf_context.h"
#include "hflow/cluster.h"
#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow {
namespace deploy {

struct RemoteInstanceSpec {
  int32_t host = 0;    // cluster node id
  int32_t device = 0;  // the device there
  std::vector<flow_func::FuncDesc> funcs;
  // As a local instance's: outputs, allocator (of the local device that
  // keeps its queues), raise and exception. env.device is `device`.
  flow_func::InstanceEnv env;
  uint64_t max_message_bytes = 0;
  int32_t alloc_timeout_ms = 10000;
  int32_t init_timeout_ms = -1;  // Load's deadline (-1: none)
};

// The hosts one deployment uses, connected and watched.
class RemoteHosts {
 public:
  virtual ~RemoteHosts() = default;
  // The instance on its host, not yet Init'ed (Init loads it there).
  virtual Status Create(RemoteInstanceSpec spec,
                        std::unique_ptr<flow_func::Instance>* out) = 0;
  // Init's every instance in `made` (Create's, none Init'ed yet) on its
  // host: one call per host carrying all its loads, every host at once,
  // and each daemon loads them side by side, instead of a round trip and
  // a load after the other. The first failure, naming its instance and
  // host; what loaded elsewhere stays until the deployment unloads it.
  virtual Status InitAll(const std::vector<flow_func::Instance*>& made) = 0;
  // Appends every device of each host, as its daemon counts them (node:
  // the host's cluster node), all hosts at once. The first host that does
  // not answer fails it, named.
  virtual Status Reports(std::vector<DeviceReport>* out) = 0;
  // The whole deployment is going: its instances need not unload one by
  // one (a round trip each); the destructor ends each host's session, in
  // parallel, and returns once every host has unloaded what it had.
  virtual void Closing() {}
};

struct RemoteHostsOptions {
  ClusterConfig cluster;
  // Per cluster node used, the devices the plan places on it.
  std::map<int32_t, std::vector<int32_t>> devices;
  // The deployment's name on the daemons; what it loaded there goes when
  // the RemoteHosts object (or this process) does.
  std::string session;
  // Told once per lost host, from a watch thread: kDeviceLost naming it.
  std::function<void(const Status&)> on_lost;
  // How long the end of a session may wait for a host (-1: for ever).
  int32_t stop_timeout_ms = -1;
};

// Loads libhflow_hosts.so ($HFLOW_HOSTS_LIBRARY, else beside libhflow)
// and connects to every host in `options.devices` in parallel: each must
// answer with the cluster's credentials and protocol, and serve the
// devices placed on it. Errors name the host and the config field.
Status OpenRemoteHosts(const RemoteHostsOptions& options,
                       std::unique_ptr<RemoteHosts>* out);

// The library's entry (hflow_hosts_open_v1): the same call.
using OpenRemoteHostsFn = Status (*)(const RemoteHostsOptions&,
                                     std::unique_ptr<RemoteHosts>*);

}  // namespace deploy
}  // namespace hflow

#endif  // HFLOW_DEPLOY_REMOTE_HOSTS_H_
