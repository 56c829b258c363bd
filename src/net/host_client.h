// The driver's handle on one host's hflowd: a gRPC channel with the
// cluster's credentials, the control calls, and HostWatch, which says when
// the host is lost (its heartbeat stream broken or overdue).
//
// Errors name the daemon ("hflowd at 127.0.0.2:7000 (node 1)") and say
// what to do: kNotFound when nothing answers there, kPermissionDenied for
// refused credentials, kFailedPrecondition for another protocol version,
// kTimeout for a call past its deadline.
//
// Thread-safety: a HostClient may be used from several threads at once
// (gRPC channels and stubs are); a HostWatch reports from its own thread.
#ifndef HFLOW_NET_HOST_CLIENT_H_
#define HFLOW_NET_HOST_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hflow/session.h"
#include "hflow/status.h"
#include "net/address.h"
#include "net/credentials.h"
#include "net/protocol.h"

namespace hflow::net {

struct ClientOptions {
  Credentials credentials;
  int32_t connect_timeout_ms = 5000;
  int32_t call_timeout_ms = 5000;
  std::string name;                              // "node 1", added to messages
  uint32_t protocol_version = kProtocolVersion;  // tests only
};

class HostWatch;

class HostClient {
 public:
  // Connects (waiting up to connect_timeout_ms for the channel, TLS
  // handshake included); calls nothing yet.
  static Status Connect(const HostAddress& address, const ClientOptions& o,
                        std::unique_ptr<HostClient>* out);
  ~HostClient();

  Status Hello(const HelloQuery& query, HelloInfo* out);
  Status Heartbeat(uint64_t* sequence);
  Status DeviceReports(std::vector<DeviceReport>* out);

  // Opens a heartbeat stream (a beat every interval_ms, 10 ms to 10 s);
  // `on_lost` is called once, from the watch's thread, when the stream ends
  // or no beat came for lost_after_ms (at least two intervals), with
  // kDeviceLost naming the host and why. Not called after the watch is
  // destroyed; it may destroy the watch itself, but must not wait for a
  // lock held by a thread destroying it.
  // `session` (non-empty): the stream keeps that session's instances on
  // the daemon, which unloads them when it ends.
  std::unique_ptr<HostWatch> Watch(uint32_t interval_ms, uint32_t lost_after_ms,
                                   std::function<void(const Status&)> on_lost,
                                   const std::string& session = "");

  // One call of an instance the daemon hosts (moves from `call`);
  // `timeout_ms` < 0: no deadline (a UDF's Proc may take any time; a
  // stopped or dead daemon still ends it, through the connection's
  // keepalive), 0: ClientOptions::call_timeout_ms. The daemon's refusal
  // comes back with its own code, named by Where().
  Status Call(InstanceCall* call, InstanceReply* reply, int32_t timeout_ms);

  // "hflowd at 127.0.0.2:7000 (node 1)".
  const std::string& Where() const;
  // The connection is up now (not idle, failed or connecting): a caller
  // may reuse it for a new deployment instead of connecting again.
  bool Ready() const;

  struct Impl;

 private:
  explicit HostClient(std::unique_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

class HostWatch {
 public:
  ~HostWatch();  // cancels the stream and joins its threads
  uint64_t beats() const;

  struct Impl;
  explicit HostWatch(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hflow::net

#endif  // HFLOW_NET_HOST_CLIENT_H_
