// The entry of a worker process, for the programs that become one:
// hflow-worker's main and a Python worker (dataflow._worker, through the
// dataflow._core extension). A header of its own, free of the control
// protocol, so that those programs need not see it.
//
// Thread-safety: ServeWorker owns the process it runs in; a loader is
// called on the worker's slot threads, once per payload, one at a time.
#ifndef HFLOW_WORKER_SERVE_H_
#define HFLOW_WORKER_SERVE_H_

#include <functional>
#include <string>

#include "hflow/status.h"

namespace hflow {
namespace worker {

// Registers, in this process, a function the host program registered
// itself, from its recipe's payload (flow_func::RemoteRecipe): a Python
// worker's.
using PayloadLoader = std::function<Status(const std::string& payload)>;

// A worker process's life once its arguments are read: dies with
// `parent_pid` (parent-death signal; returns 1 at once if that parent is
// gone already), keeps the control socket from programs a UDF starts, and
// serves it until the host stops it (the process then ends with _exit).
// `loader` may be null: functions with a payload are refused.
int ServeWorker(int control_fd, long parent_pid, int heartbeat_ms,
                PayloadLoader loader);

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_SERVE_H_
