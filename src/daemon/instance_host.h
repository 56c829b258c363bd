// InstanceHost: the UDF instances hflowd runs for drivers. A driver's
// deployer places a node on a device of this host; its instance is loaded
// here (the UDF library from the path the driver names, which must exist
// on this host too), and each of its calls arrives as an rpc Call carrying
// a worker-protocol message (Load, Proc, Reset, Unload) and the data parts
// of the call's messages. The driver keeps the queues and the routing; a
// Proc's outputs go back in its reply.
//
// Every handler binds the instance's device at its entry, on the gRPC
// thread that runs it, and restores that thread's binding on the way out
// (invariant: bind at one obvious point), so a UDF's Init, Proc, reset and
// destructors always run bound, on whatever devices the daemon serves.
//
// Instances belong to a session (the driver's deployment): EndSession
// unloads every one of it, which the server calls when the session's
// Watch stream ends, so a driver that dies leaves nothing behind.
//
// Thread-safety: any method from any thread. One instance's calls are
// serialized by its own mutex (the driver serializes them anyway); the
// table of instances has a mutex of its own, never held over user code.
#ifndef HFLOW_DAEMON_INSTANCE_HOST_H_
#define HFLOW_DAEMON_INSTANCE_HOST_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hflow/status.h"
#include "net/protocol.h"
#include "rt/device_binding.h"

namespace hflow::worker::v1 {
class Batch;
class Done;
class HostMessage;
class Load;
class Proc;
class WorkerMessage;
}  // namespace hflow::worker::v1

namespace hflow::daemon {

class InstanceHost {
 public:
  // Serves `devices` of `runtime` (the daemon's); `log` takes one line.
  InstanceHost(std::shared_ptr<rt::DeviceRuntime> runtime,
               std::vector<int32_t> devices,
               std::function<void(const std::string&)> log);
  ~InstanceHost();  // unloads every instance still loaded

  // One call (net::DaemonHandler::Call): moves from `call`.
  Status Call(net::InstanceCall* call, net::InstanceReply* reply);
  // Unloads the session's instances (their destructors run bound).
  void EndSession(const std::string& session);
  // Instances loaded now (all sessions).
  size_t Loaded() const;

  struct Hosted;

 private:
  using Key = std::pair<std::string, uint64_t>;  // session, instance
  std::shared_ptr<Hosted> Find(const Key& key) const;
  // One instance in the making (instance_load.cc).
  struct Loading {
    Key key;
    std::shared_ptr<Hosted> h;
  };
  Status Load(const Key& key, const worker::v1::HostMessage& m,
              net::InstanceReply* reply);
  // A Batch of Loads, side by side (Note [Loads side by side]).
  Status LoadBatch(const std::string& session, const worker::v1::Batch& batch,
                   net::InstanceReply* reply);
  Status BeginLoad(const Key& key, const worker::v1::Load& load, Loading* out);
  // Waits for the load `BeginLoad` started: its result in `done`; an
  // error only for a load that succeeded but cannot stay (session ended,
  // loaded twice), unloaded again.
  Status EndLoad(Loading* loading, worker::v1::Done* done);
  // Unloads `hs` side by side (Note [Unloading side by side]).
  void Unload(std::vector<std::shared_ptr<Hosted>> hs);
  // Runs `procs` on `h` (its call_mu held) in order, each input from
  // `call`'s payloads, each reply (a ProcDone) into `outs`, their outputs'
  // data into `reply`'s payloads (instance_proc.cc).
  Status Procs(Hosted* h, const std::vector<const worker::v1::Proc*>& procs,
               net::InstanceCall* call, net::InstanceReply* reply,
               std::vector<worker::v1::WorkerMessage>* outs);
  std::string Devices() const;

  const std::function<void(const std::string&)> log_;
  const std::vector<int32_t> devices_;
  rt::DeviceContexts contexts_;
  // Sessions that ended, the most recent kEndedKept (a driver never
  // reuses a session's name): a Load for one is refused.
  static constexpr size_t kEndedKept = 4096;
  // Loads in one Batch started at once (Note [Loads side by side]).
  static constexpr int kLoadsAtOnce = 64;
  // A load of `session` ended (EndLoad, or BeginLoad failing late).
  void LoadEnded(const std::string& session);
  mutable std::mutex mu_;
  std::condition_variable loads_done_;
  std::map<std::string, int> loading_;  // under mu_: loads in progress
  std::map<Key, std::shared_ptr<Hosted>> hosted_;
  std::set<std::string> ended_;          // under mu_
  std::deque<std::string> ended_order_;  // under mu_, oldest first
};

}  // namespace hflow::daemon

#endif  // HFLOW_DAEMON_INSTANCE_HOST_H_
