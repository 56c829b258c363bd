// HostInstance: a UDF instance that runs in the hflowd of another host
// (Note [Instances on other hosts] in deploy/remote_hosts.cc). The driver's
// executor calls it like any instance; each call goes to the daemon as a
// worker-protocol message with its input messages' data, and the reply's
// outputs are delivered here through the instance's output function, its
// raises through the graph's exception channel.
//
// Thread-safety: as flow_func::Instance (the executor serializes Init,
// Proc and ResetState); InCall and Cancel from any thread.
#ifndef HFLOW_HOSTS_HOST_INSTANCE_H_
#define HFLOW_HOSTS_HOST_INSTANCE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "deploy/remote_hosts.h"
#include "flow_func/instance.h"
#include "net/host_client.h"
#include "worker/proto/worker.pb.h"

namespace hflow::hosts {

// One daemon as a deployment's session sees it.
struct HostLink {
  int32_t node = 0;
  std::shared_ptr<net::HostClient> client;
  std::string session;
  // Fails the deployment (RemoteHostsOptions::on_lost).
  std::function<void(const Status&)> on_lost;
  // The deployment is going whole (RemoteHosts::Closing): the session's
  // end unloads its instances, which skip their own Unload.
  std::atomic<bool> closing{false};
};

class HostInstance final : public flow_func::Instance {
 public:
  HostInstance(std::shared_ptr<HostLink> link, uint64_t id,
               deploy::RemoteInstanceSpec spec);
  ~HostInstance() override;  // unloads it there (user destructors run)

  Status Init(const rt::ScopedDevice& bound) override;
  // Init in halves, for several instances of a host in one call
  // (Hosts::InitAll): the Load that makes it there, and the daemon's
  // answer to it (`sent`: whether the call carried it); in between, the
  // instance is in Init (InCall).
  Status MakeLoad(worker::v1::HostMessage* m);
  Status Loaded(const Status& sent, const std::string& reply);
  const HostLink& link() const { return *link_; }
  int32_t init_timeout_ms() const { return spec_.init_timeout_ms; }
  int32_t Proc(const rt::ScopedDevice& bound, size_t index,
               const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
               uint64_t trans = 0) override;
  // Up to kMaxBatch calls in one round trip (Note [Batched calls to a
  // host] in host_instance.cc).
  size_t BatchLimit() const override { return kMaxBatch; }
  void ProcBatch(const rt::ScopedDevice& bound, size_t index,
                 std::vector<flow_func::ProcCall>* calls,
                 const flow_func::DeliverScope& scope) override;
  int32_t ProcQueues(const rt::ScopedDevice& bound, size_t index,
                     const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>&
                         queues) override;
  Status ResetState(const rt::ScopedDevice& bound, bool* recreated) override;
  bool InCall(std::string* what) const override;
  const std::vector<flow_func::FuncDesc>& funcs() const override {
    return spec_.funcs;
  }
  // It reads every input into its call, from any device.
  bool CopiesInputs() const override { return true; }

 private:
  static constexpr size_t kMaxBatch = 16;

  // "node 'n' (replica r) on cluster node h device d".
  std::string What() const;
  // Sends `request` (a serialized HostMessage) and its payloads; the
  // reply parsed into `reply` (a serialized WorkerMessage's fields).
  Status Send(std::string request, std::vector<std::string> payloads,
              int32_t timeout_ms, std::string* reply,
              std::vector<std::string>* reply_payloads);
  // A Done reply's status.
  Status Done(const std::string& reply) const;
  // The Proc of function `index` on `inputs` into `p`, their data
  // appended to `payloads`.
  void AddProc(size_t index,
               const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
               uint64_t trans, worker::v1::Proc* p,
               std::vector<std::string>* payloads) const;
  // A failed call: the graph fails, naming host, node and transaction.
  void Lost(const Status& s, uint64_t trans) const;
  // A ProcDone's raises and outputs delivered; the UDF's code.
  int32_t Deliver(const std::string& reply,
                  const std::vector<std::string>& payloads);

  std::shared_ptr<HostLink> link_;
  const uint64_t id_;
  deploy::RemoteInstanceSpec spec_;
  bool loaded_ = false;
  std::atomic<int> phase_{0};  // 0 idle, 1 Init, 2 Proc, 3 Reset
};

}  // namespace hflow::hosts

#endif  // HFLOW_HOSTS_HOST_INSTANCE_H_
