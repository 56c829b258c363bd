// What hflowd serves: its identity (node, devices, backend), the device
// reports of the hflow runtime it initialized over its devices, and the
// instances it hosts for drivers (InstanceHost). The
// gRPC side (net::DaemonServer) calls it; it never sees gRPC.
//
// Thread-safety: Hello and DeviceReports may run concurrently on gRPC's
// threads; the identity is immutable after construction, logging is
// serialized by the log function.
#ifndef HFLOW_DAEMON_DAEMON_SERVICE_H_
#define HFLOW_DAEMON_DAEMON_SERVICE_H_

#include <functional>
#include <string>

#include "daemon/instance_host.h"
#include "net/daemon_server.h"

namespace hflow::daemon {

class DaemonService final : public net::DaemonHandler {
 public:
  // `identity` is what Hello answers (the protocol version is the
  // server's); `log` takes one line at a time.
  // `instances` (may be null: none hosted) serves the instance calls.
  DaemonService(net::HelloInfo identity,
                std::function<void(const std::string&)> log,
                InstanceHost* instances = nullptr);

  net::HelloInfo Hello(const net::HelloQuery& query,
                       const std::string& peer) override;
  Status DeviceReports(std::vector<DeviceReport>* out) override;
  Status Call(net::InstanceCall* call, net::InstanceReply* reply) override;
  void SessionEnded(const std::string& session) override;

 private:
  const net::HelloInfo identity_;
  const std::function<void(const std::string&)> log_;
  InstanceHost* const instances_;
};

}  // namespace hflow::daemon

#endif  // HFLOW_DAEMON_DAEMON_SERVICE_H_
