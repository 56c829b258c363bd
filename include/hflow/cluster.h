// Cluster configuration: the nodes (hosts) and accelerator devices hflow may
// use, read from GE's numa_config subset, from the compact form
// {"devices": [2, 3, 4, 5]}, or from a device list such as "2,3,4,5"
// (docs/formats.md, "Cluster config"). Parsing validates everything and names
// the offending field.
//
// Errors: the parse functions return kInvalidArgument naming the source and
// field (unknown fields are ignored); LoadClusterConfigFile kNotFound for
// a file it cannot read. On an error *out is unspecified.
//
// Thread-safety: plain values; the parse functions are reentrant.
#ifndef HFLOW_CLUSTER_H_
#define HFLOW_CLUSTER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hflow/status.h"

namespace hflow {

// Device memory a simulated device gets when the config does not say.
inline constexpr uint64_t kDefaultDeviceMemoryBytes = 16ull << 30;  // 16 GiB
// The message pool hflow reserves on each device a graph uses, and the
// largest message (tensor bytes plus alignment slack) it may hold: the
// defaults of Options::mbuf_pool_bytes and Options::max_message_bytes.
inline constexpr uint64_t kDefaultMbufPoolBytes = 256ull << 20;   // 256 MiB
inline constexpr uint64_t kDefaultMaxMessageBytes = 64ull << 20;  // 64 MiB

struct DeviceDesc {
  int32_t device_id = 0;  // as in item_list[].device_id
  int32_t item_id = 0;    // GE's item id (defaults to the position)
  uint64_t memory_bytes = kDefaultDeviceMemoryBytes;
};

struct ClusterNode {
  int32_t node_id = 0;
  bool is_local = false;
  std::vector<DeviceDesc> devices;
  // Where the node's hflowd listens (GE's ipaddr and port); a node other
  // than the local one is reached there. Empty / 0 when the file has none.
  std::string ipaddr;
  int32_t port = 0;

  // The node's device ids, in config order.
  std::vector<int32_t> DeviceIds() const;
};

// The files of a multi-host cluster's credentials (hflow's "credentials"
// field; paths relative to the cluster file are made absolute): a shared
// token, and/or mutual TLS (CA, this side's certificate and key).
struct ClusterCredentials {
  std::string token_file;
  std::string tls_ca;
  std::string tls_cert;
  std::string tls_key;
};

struct ClusterConfig {
  std::vector<ClusterNode> nodes;
  // The runtime's default device (the implicit-binding quirk). Unset means
  // "device 0 if the local node has it, none otherwise".
  std::optional<int32_t> default_device;
  // The device runtime the file asks for ("sim" or "cuda", hflow's
  // "backend" field); unset: the program's choice (Options::backend).
  std::optional<std::string> backend;
  ClusterCredentials credentials;
  std::string source;  // file name or "--devices" (for messages)

  // The local node (exactly one after a successful parse).
  const ClusterNode& LocalNode() const;
  // Device ids of the local node, in config order.
  std::vector<int32_t> LocalDeviceIds() const;
  bool HasLocalDevice(int32_t device_id) const;
  // The resolved default device: explicit, else 0 when present, else none.
  std::optional<int32_t> ResolvedDefaultDevice() const;
  // The nodes other than the local one (hosts reached through hflowd).
  std::vector<const ClusterNode*> RemoteNodes() const;
};

// Parses JSON text in either form. `source` names the text in messages
// (usually the file name). Unknown fields are errors naming the key.
Status ParseClusterConfig(std::string_view json_text, std::string_view source,
                          ClusterConfig* out);

// Reads and parses a file; a missing or unreadable file is kNotFound naming
// the path.
Status LoadClusterConfigFile(const std::string& path, ClusterConfig* out);

// Parses "2,3,4,5" or ranges "2~5" (and mixes: "0,3~4,7") into a one-node
// local cluster.
Status ParseDeviceList(std::string_view list, ClusterConfig* out);

// "2,3,4,5": device ids as ParseDeviceList reads them (for messages).
std::string FormatDeviceList(const std::vector<int32_t>& ids);

// Four simulated devices 0,1,2,3 (the default without any config).
ClusterConfig DefaultClusterConfig();

// A one-node local cluster of the given devices.
ClusterConfig MakeLocalCluster(
    const std::vector<int32_t>& device_ids,
    uint64_t memory_bytes = kDefaultDeviceMemoryBytes);

// Parses memory sizes such as "32GB", "[DDR:32GB]", "512MiB", "1024".
Status ParseMemorySize(std::string_view text, uint64_t* bytes);

}  // namespace hflow

#endif  // HFLOW_CLUSTER_H_
