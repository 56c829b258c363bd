// hflowd's handler (daemon/daemon_service.h).
//
// Thread-safety: stateless beyond the immutable identity; DeviceReports is
// hflow's public call, which takes its own locks and restores the calling
// gRPC thread's context.
#include "daemon/daemon_service.h"

namespace hflow::daemon {
DaemonService::DaemonService(net::HelloInfo identity,
                             std::function<void(const std::string&)> log,
                             InstanceHost* instances)
    : identity_(std::move(identity)),
      log_(std::move(log)),
      instances_(instances) {}

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

Status DaemonService::Call(net::InstanceCall* call, net::InstanceReply* reply) {
  if (instances_ == nullptr) {
    return Status::NotSupported("this hflowd hosts no instances");
  }
  return instances_->Call(call, reply);
}

void DaemonService::SessionEnded(const std::string& session) {
  if (instances_ != nullptr) instances_->EndSession(session);
}

}  // namespace hflow::daemon
