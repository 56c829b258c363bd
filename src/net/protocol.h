// The multi-host control protocol in plain C++ (net/proto/hflowd.proto is
// its wire form; only net/*.cc see gRPC and the generated code): the
// version both sides must share, and what a Hello asks and answers.
//
// Thread-safety: plain values.
#ifndef HFLOW_NET_PROTOCOL_H_
#define HFLOW_NET_PROTOCOL_H_

#include <cstdint>
#include <string>
#include <vector>

namespace hflow::net {

// Raised on every incompatible change of hflowd.proto's meaning.
// 2: Call and sessions (WatchRequest.session); a version-1 daemon would
// answer a Call as an unknown method.
// 3: a Batch may hold Loads (one per instance, Load.hosted_instance),
// which the daemon loads side by side; a version-2 daemon refuses them.
inline constexpr uint32_t kProtocolVersion = 3;

// What the driver says of itself and of the node it expects.
struct HelloQuery {
  int32_t node_id = 0;
  std::vector<int32_t> devices;  // the cluster config's list for that node
  std::string driver;            // "host:pid"
};

// What a daemon says of itself.
struct HelloInfo {
  uint32_t protocol_version = kProtocolVersion;
  std::string hostname;
  int32_t pid = 0;
  std::string backend;
  std::vector<int32_t> devices;
  std::vector<std::string> labels;  // one per device
  int32_t node_id = -1;             // -1: not given (hflowd --node-id)
  std::string release;
  uint64_t started_unix_ms = 0;
};

// One call of an instance a daemon hosts for a driver (rpc Call): a
// serialized hflow.worker.v1.HostMessage and the data parts of its
// messages (Msg.offset indexes `payloads`). net carries them opaquely.
struct InstanceCall {
  std::string session;  // the driver's deployment ("host:pid:n")
  uint64_t instance = 0;
  std::string request;
  std::vector<std::string> payloads;
};
// The answer: a serialized hflow.worker.v1.WorkerMessage and its data;
// for a request that is a Batch, one WorkerMessage per message of it in
// `replies` (their Msg.offset index the one `payloads`).
struct InstanceReply {
  std::string reply;
  std::vector<std::string> replies;
  std::vector<std::string> payloads;
};

}  // namespace hflow::net

#endif  // HFLOW_NET_PROTOCOL_H_
