// rt::InitializeRuntime: picks and builds the process-wide device runtime.
// Thread-safety: as InstallRuntime (call at start-up).
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"

namespace hflow {
namespace rt {

Status InitializeRuntime(const RuntimeOptions& options,
                         std::shared_ptr<DeviceRuntime>* out) {
  std::shared_ptr<DeviceRuntime> runtime;
  if (options.backend == "sim") {
    SimOptions sim;
    sim.cluster = options.cluster;
    sim.default_device = options.default_device;
    sim.record_calls = options.record_calls;
    std::shared_ptr<SimRuntime> s;
    HFLOW_RETURN_IF_ERROR(SimRuntime::Create(std::move(sim), &s));
    runtime = std::move(s);
  } else if (options.backend == "cuda") {
    return Status::NotSupported(
        "device runtime 'cuda': this build has no CUDA backend; rebuild with "
        "-DHFLOW_WITH_CUDA=ON or use 'sim'");
  } else {
    return Status::InvalidArgument("device runtime '" + options.backend +
                                   "' is unknown; use 'sim' or 'cuda'");
  }
  InstallRuntime(runtime);
  if (out != nullptr) *out = runtime;
  return Status::OK();
}

}  // namespace rt
}  // namespace hflow
