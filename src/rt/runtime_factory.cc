// rt::InitializeRuntime: picks and builds the process-wide device runtime.
// SameRuntime: whether two RuntimeOptions make interchangeable runtimes.
// Thread-safety: as InstallRuntime (call at start-up); SameRuntime is
// reentrant.
#include <algorithm>
#include <vector>

#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#ifdef HFLOW_HAVE_CUDA
#include "rt/cuda/cuda_runtime.h"
#endif

namespace hflow {
namespace rt {

std::string ResolvedBackend(const RuntimeOptions& options) {
  if (!options.backend.empty()) return options.backend;
  return options.cluster.backend.value_or("sim");
}

Status InitializeRuntime(const RuntimeOptions& options,
                         std::shared_ptr<DeviceRuntime>* out) {
  std::shared_ptr<DeviceRuntime> runtime;
  const std::string backend = ResolvedBackend(options);
  if (backend == "sim") {
    SimOptions sim;
    sim.cluster = options.cluster;
    sim.default_device = options.default_device;
    sim.record_calls = options.record_calls;
    if (!options.ctxcheck.empty()) {
      ctxcheck::Mode mode;
      if (!ctxcheck::ParseModeName(options.ctxcheck, &mode)) {
        return Status::InvalidArgument(
            "ctxcheck mode '" + options.ctxcheck +
            "' is unknown; use off, report or strict (or leave it empty for "
            "$HFLOW_CTXCHECK)");
      }
      sim.ctxcheck = mode;
    }
    std::shared_ptr<SimRuntime> s;
    HFLOW_RETURN_IF_ERROR(SimRuntime::Create(std::move(sim), &s));
    runtime = std::move(s);
  } else if (backend == "cuda") {
#ifdef HFLOW_HAVE_CUDA
    if (!options.ctxcheck.empty() && options.ctxcheck != "off") {
      return Status::NotSupported(
          "ctxcheck mode '" + options.ctxcheck +
          "' needs the 'sim' backend; the 'cuda' backend runs unchecked");
    }
    HFLOW_RETURN_IF_ERROR(
        MakeCudaRuntime(options.cluster, options.default_device, &runtime));
#else
    return Status::NotSupported(
        "device runtime 'cuda': this build has no CUDA backend (no cuda.h "
        "was found at build time); rebuild where the CUDA toolkit is "
        "installed or use 'sim'");
#endif
  } else {
    return Status::InvalidArgument("device runtime '" + backend +
                                   "' is unknown; use 'sim' or 'cuda'");
  }
  internal::InstallMadeRuntime(runtime, options);
  if (out != nullptr) *out = runtime;
  return Status::OK();
}

namespace {
// The devices a sim made from `cluster` has: the local node's (or the only
// node's), by id.
std::vector<DeviceDesc> RuntimeDevices(const ClusterConfig& cluster) {
  std::vector<DeviceDesc> devices;
  for (const ClusterNode& node : cluster.nodes) {
    if (node.is_local || cluster.nodes.size() == 1) {
      devices = node.devices;
      break;
    }
  }
  std::sort(devices.begin(), devices.end(),
            [](const DeviceDesc& a, const DeviceDesc& b) {
              return a.device_id < b.device_id;
            });
  return devices;
}

// The default device a runtime made from `o` has (SimRuntime's rule).
std::optional<int32_t> ResolvedDefault(const RuntimeOptions& o) {
  if (o.default_device) {
    if (*o.default_device < 0) return std::nullopt;
    return o.default_device;
  }
  return o.cluster.ResolvedDefaultDevice();
}
}  // namespace

bool SameRuntime(const RuntimeOptions& a, const RuntimeOptions& b) {
  if (ResolvedBackend(a) != ResolvedBackend(b) ||
      ResolvedDefault(a) != ResolvedDefault(b)) {
    return false;
  }
  std::vector<DeviceDesc> da = RuntimeDevices(a.cluster);
  std::vector<DeviceDesc> db = RuntimeDevices(b.cluster);
  return std::equal(da.begin(), da.end(), db.begin(), db.end(),
                    [](const DeviceDesc& x, const DeviceDesc& y) {
                      return x.device_id == y.device_id &&
                             x.memory_bytes == y.memory_bytes;
                    });
}

}  // namespace rt
}  // namespace hflow
