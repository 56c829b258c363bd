// RemoteConfig: what a worker process needs from the deployer: the
// executable, the shared segment's size, the limits and timeouts it
// applies, and the runtime it builds (remote_instance.h). A header of its
// own so that the deployer's header need not see the control protocol.
//
// Thread-safety: a plain value.
#ifndef HFLOW_WORKER_REMOTE_CONFIG_H_
#define HFLOW_WORKER_REMOTE_CONFIG_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "rt/device_binding.h"
#include "rt/foreign_counters.h"

namespace hflow {
namespace worker {

struct RemoteConfig {
  std::string binary;  // hflow-worker (FindWorkerBinary)
  // Another program to start instead (argv before hflow-worker's flags):
  // a Python UDF's interpreter (flow_func::RemoteRecipe); empty: binary.
  std::vector<std::string> launcher;
  uint64_t segment_bytes = 512ull << 20;  // half the host's, half the worker's
  uint64_t max_message_bytes = 64ull << 20;
  int32_t alloc_timeout_ms = 10000;
  int32_t init_timeout_ms = -1;
  int32_t stop_timeout_ms = 10000;
  std::vector<int32_t> runtime_devices;  // the host runtime's local devices
  int32_t default_device = -1;           // -1: none
  std::string ctxcheck = "off";          // the host runtime's ctxcheck mode
  // The host's registry (owns its runtime): the segment is registered
  // host memory of that runtime while any message over it lives, so
  // the host's device copies (fetches, copies to other devices) read it.
  std::shared_ptr<rt::DeviceContexts> contexts;
  // Where the workers' runtime counters are summed for the host's device
  // reports (null: nowhere).
  std::shared_ptr<rt::ForeignCounters> counters;
  // Times a dead worker is started again before a death fails the graph
  // (Options::max_worker_restarts under RestartPolicy::kRestart; 0: the
  // first death does).
  int32_t max_restarts = 0;
  // A worker silent this long is killed as hung (WorkerSpec); 0: never.
  int32_t heartbeat_ms = 1000;
  // Told once when a worker dies on its own (not at Stop or Cancel) with
  // no restart left; the status names the worker, the cause and the call.
  std::function<void(const Status&)> on_death;
};

// The hflow-worker executable: $HFLOW_WORKER if set, else bin/hflow-worker
// beside the lib folder libhflow.so was loaded from (the build tree's and
// the install's layout); kNotFound naming the place tried otherwise.
Status FindWorkerBinary(std::string* path);

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_REMOTE_CONFIG_H_
