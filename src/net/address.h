// Host addresses of the multi-host control plane: "ADDR:PORT" as hflowd's
// --listen and a cluster node's ipaddr/port name them. IPv4 addresses and
// host names as written; IPv6 in brackets ("[::1]:7000").
//
// Thread-safety: plain values; the functions are reentrant.
#ifndef HFLOW_NET_ADDRESS_H_
#define HFLOW_NET_ADDRESS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "hflow/status.h"

namespace hflow::net {

struct HostAddress {
  std::string host;   // "127.0.0.2", "node1.example", "::1" (no brackets)
  uint16_t port = 0;  // 0 only for a listen address: the system picks one

  // "127.0.0.2:7000", "[::1]:7000": what gRPC and messages take.
  std::string ToString() const;
};

// Parses "ADDR:PORT". `allow_any_port` admits port 0 (hflowd --listen).
// Errors (kInvalidArgument) say what was expected; `what` names the
// argument ("--listen", "cluster.json: ...ipaddr").
Status ParseHostAddress(std::string_view text, bool allow_any_port,
                        std::string_view what, HostAddress* out);

// An address from a cluster node's separate fields.
Status MakeHostAddress(std::string_view host, int64_t port,
                       std::string_view what, HostAddress* out);

}  // namespace hflow::net

#endif  // HFLOW_NET_ADDRESS_H_
