// hflowd's handler (daemon/daemon_service.h).
//
// Thread-safety: stateless beyond the immutable identity; DeviceReports is
// hflow's public call, which takes its own locks and restores the calling
// gRPC thread's context.
#include "daemon/daemon_service.h"

namespace hflow::daemon {
DaemonService::DaemonService(net::HelloInfo identity,
                             std::function<void(const std::string&)> log)
    : identity_(std::move(identity)), log_(std::move(log)) {}

net::HelloInfo DaemonService::Hello(const net::HelloQuery& query,
                                    const std::string& peer) {
  log_("hello from driver " + query.driver + " (" + peer + ") for node " +
       std::to_string(query.node_id) + ", devices " +
       FormatDeviceList(query.devices));
  return identity_;
}

Status DaemonService::DeviceReports(std::vector<DeviceReport>* out) {
  return hflow::DeviceReports(out);
}

}  // namespace hflow::daemon
