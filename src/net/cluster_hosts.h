// The driver's view of a multi-host cluster's other hosts: their
// credentials from the cluster config, and a probe that connects every
// remote node's hflowd in parallel and checks it is the host the config
// describes (protocol, node id, every listed device served).
//
// Thread-safety: reentrant; ProbeHosts makes and joins one named thread
// per remote node (hflow-probe).
#ifndef HFLOW_NET_CLUSTER_HOSTS_H_
#define HFLOW_NET_CLUSTER_HOSTS_H_

#include <vector>

#include "hflow/cluster.h"
#include "hflow/status.h"
#include "net/address.h"
#include "net/credentials.h"
#include "net/protocol.h"

namespace hflow::net {

// The credentials the cluster config's "credentials" field names.
// kInvalidArgument when the cluster has remote nodes and none are given.
Status LoadClusterCredentials(const ClusterConfig& cluster, Credentials* out);

// The address of a remote node, or kInvalidArgument naming the field to
// write.
Status NodeAddress(const ClusterConfig& cluster, const ClusterNode& node,
                   HostAddress* out);

struct ProbeOptions {
  int32_t timeout_ms = 5000;                     // connect and each call
  uint32_t protocol_version = kProtocolVersion;  // tests only
};

struct HostProbe {
  int32_t node_id = 0;
  HostAddress address;  // empty host when the config has none
  Status status;        // what is wrong with this host, naming it
  HelloInfo info;       // valid when status is OK
  double hello_ms = 0;  // the Hello call's round trip
};

// One probe per remote node, in config order, all at once, with the
// credentials LoadClusterCredentials gave. Returns OK when every host
// answered and matches the config; else the first host's failure (each
// probe has its own).
Status ProbeHosts(const ClusterConfig& cluster, const Credentials& creds,
                  const ProbeOptions& options, std::vector<HostProbe>* out);

}  // namespace hflow::net

#endif  // HFLOW_NET_CLUSTER_HOSTS_H_
