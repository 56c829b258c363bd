// The process-wide state behind hflow::Initialize/Finalize: the device
// runtime, the device registry, the exchange service, the options, and the
// live sessions (so Finalize can remove their graphs); and the keep for graphs
// abandoned with a UDF thread still in them (Note [Abandoning a stuck graph] in
// exec/graph_runner.cc).
//
// Thread-safety: Get() returns a shared snapshot; Initialize/Finalize take
// the environment lock and must not race with graph operations.
#ifndef HFLOW_SESSION_ENVIRONMENT_H_
#define HFLOW_SESSION_ENVIRONMENT_H_

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "hflow/device_runtime.h"
#include "hflow/session.h"
#include "rt/device_binding.h"
#include "rt/foreign_counters.h"
#include "services/exchange_service.h"
#include "session/host_memory.h"

namespace hflow {
namespace deploy {
class Deployment;
}
namespace exec {
class GraphRunner;
}
namespace session {

struct Environment {
  Options options;
  std::shared_ptr<rt::DeviceRuntime> runtime;
  // The session's one device registry (Note [Where hflow binds a device] in
  // rt/device_binding.h): the exchange service, the deployments, their
  // pools and the feed/fetch paths all bind through it. Shared with the
  // service's memory groups, which messages may keep alive.
  std::shared_ptr<rt::DeviceContexts> contexts;
  std::unique_ptr<services::ExchangeService> svc;
  // The worker processes' runtime counters (contexts created, implicit
  // bindings), summed into the device reports with the host's own.
  std::shared_ptr<rt::ForeignCounters> worker_counters =
      std::make_shared<rt::ForeignCounters>();
  // Host memory registered for zero-copy feeds (RegisterHostMemory).
  std::unique_ptr<HostMemory> host_memory;
  // A graph of this environment was abandoned: its stuck thread may still
  // use svc and runtime, so Finalize leaves them to the keep.
  std::atomic<bool> abandoned{false};

  // The most pool memory in use at once on `device` by graphs already
  // removed (DeviceReport::peak_mem_bytes once their groups are gone).
  void RecordPeakInUse(int32_t device, uint64_t bytes) {
    std::lock_guard<std::mutex> lock(peak_mu);
    uint64_t& p = peak_in_use[device];
    if (bytes > p) p = bytes;
  }
  uint64_t PeakInUse(int32_t device) const {
    std::lock_guard<std::mutex> lock(peak_mu);
    auto it = peak_in_use.find(device);
    return it == peak_in_use.end() ? 0 : it->second;
  }
  mutable std::mutex peak_mu;
  std::map<int32_t, uint64_t> peak_in_use;  // guarded by peak_mu
};

// Keeps a graph's runner and deployment (either may be null), and `env`
// with its exchange service and runtime, for the rest of the process: a
// thread that never returned may still use them. Never freed.
void KeepForever(std::shared_ptr<Environment> env,
                 std::unique_ptr<exec::GraphRunner> runner,
                 std::unique_ptr<deploy::Deployment> deployment);

// The current environment, or nullptr (with a status saying why).
Status GetEnvironment(std::shared_ptr<Environment>* out);

// A row per device of env's cluster with the runtime's counters (contexts,
// implicit bindings: the host's and its workers') and the peak pool memory in
// use of graphs already removed; submodels and queues zero (live graphs add
// theirs).
std::vector<DeviceReport> RuntimeReports(const Environment& env);

// Sessions register so Finalize can tear their graphs down.
void RegisterSession(Session* s);
void UnregisterSession(Session* s);

}  // namespace session
}  // namespace hflow

#endif  // HFLOW_SESSION_ENVIRONMENT_H_
