// The process-wide state behind hflow::Initialize/Finalize: the device
// runtime, the exchange service, the options, and the live sessions (so
// Finalize can remove their graphs).
//
// Thread-safety: Get() returns a shared snapshot; Initialize/Finalize take
// the environment lock and must not race with graph operations.
#ifndef HFLOW_SESSION_ENVIRONMENT_H_
#define HFLOW_SESSION_ENVIRONMENT_H_

#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "hflow/device_runtime.h"
#include "hflow/session.h"
#include "services/exchange_service.h"

namespace hflow {
namespace session {

struct Environment {
  Options options;
  std::shared_ptr<rt::DeviceRuntime> runtime;
  std::unique_ptr<services::ExchangeService> svc;
};

// The current environment, or nullptr (with a status saying why).
Status GetEnvironment(std::shared_ptr<Environment>* out);

// A row per device of env's cluster with the runtime's counters (contexts,
// implicit bindings, peak memory); submodels and queues zero.
std::vector<DeviceReport> RuntimeReports(const Environment& env);

// Sessions register so Finalize can tear their graphs down.
void RegisterSession(Session* s);
void UnregisterSession(Session* s);

}  // namespace session
}  // namespace hflow

#endif  // HFLOW_SESSION_ENVIRONMENT_H_
