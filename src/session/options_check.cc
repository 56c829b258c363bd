// Options checks: see options_check.h.
//
// Thread-safety: see options_check.h.
#include "session/options_check.h"

#include <utility>

#include "flow_func/lib/flow_func_internal.h"
#include "rt/ctxcheck.h"

namespace hflow {
namespace session {

namespace {

// "off" is one above ERROR: the loggers' "nothing enabled" level.
constexpr std::pair<const char*, int> kLevels[] = {
    {"debug", int(FlowFunc::FlowFuncLogLevel::DEBUG)},
    {"info", int(FlowFunc::FlowFuncLogLevel::INFO)},
    {"warn", int(FlowFunc::FlowFuncLogLevel::WARN)},
    {"error", int(FlowFunc::FlowFuncLogLevel::ERROR)},
    {"off", int(FlowFunc::FlowFuncLogLevel::ERROR) + 1}};

const int* LevelOf(const std::string& name) {
  for (const auto& [n, level] : kLevels) {
    if (name == n) return &level;
  }
  return nullptr;
}

}  // namespace

Status CheckOptions(const Options& options) {
  if (options.alloc_timeout_ms < 0) {
    return Status::InvalidArgument(
        "hflow::Initialize: alloc_timeout_ms is " +
        std::to_string(options.alloc_timeout_ms) +
        "; give 0 or more ms (an executor thread never waits forever for "
        "memory: it may be the one that would free it)");
  }
  rt::ctxcheck::Mode mode;
  if (!options.ctxcheck.empty() &&
      !rt::ctxcheck::ParseModeName(options.ctxcheck, &mode)) {
    return Status::InvalidArgument(
        "hflow::Initialize: Options::ctxcheck is '" + options.ctxcheck +
        "'; use report, strict or off (or leave it empty for "
        "$HFLOW_CTXCHECK)");
  }
  if (!options.udf_log_level.empty() &&
      LevelOf(options.udf_log_level) == nullptr) {
    return Status::InvalidArgument(
        "hflow::Initialize: udf_log_level '" + options.udf_log_level +
        "' is not one of debug, info, warn, error, off");
  }
  for (const auto& [name, value] :
       {std::pair<const char*, int32_t>{"init_timeout_ms",
                                        options.init_timeout_ms},
        {"stop_timeout_ms", options.stop_timeout_ms}}) {
    if (value < -1) {
      return Status::InvalidArgument(
          std::string("hflow::Initialize: Options::") + name + " is " +
          std::to_string(value) +
          "; give a number of milliseconds, or -1 to wait forever");
    }
  }
  if (options.restart_policy == RestartPolicy::kRestart &&
      options.max_worker_restarts < 1) {
    return Status::InvalidArgument(
        "hflow::Initialize: Options::max_worker_restarts is " +
        std::to_string(options.max_worker_restarts) +
        " with RestartPolicy::kRestart; give 1 or more (RestartPolicy::kNever "
        "restarts no worker)");
  }
  if (options.worker_heartbeat_ms != 0 && options.worker_heartbeat_ms < 50) {
    return Status::InvalidArgument(
        "hflow::Initialize: Options::worker_heartbeat_ms is " +
        std::to_string(options.worker_heartbeat_ms) +
        "; give 50 ms or more (a worker beats every fifth of it), or 0 for "
        "no heartbeat");
  }
  return Status::OK();
}

void ApplyUdfLogLevel(const std::string& level) {
  if (const int* l = LevelOf(level)) {
    FlowFunc::internal::SetLogLevel(
        static_cast<FlowFunc::FlowFuncLogLevel>(*l));
  }
}

}  // namespace session
}  // namespace hflow
