// GE's option keys and RESOURCE_CONFIG_PATH (see include/hflow/ge_options.h).
// Each key is one row of kKeys: where it may be given, and the function
// that applies it (or the reason hflow ignores it).
//
// Thread-safety: reentrant; kKeys is constant. getenv is read once per
// call.
#include "hflow/ge_options.h"

#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "hflow/context_guard.h"
#include "util/json_fields.h"

namespace hflow {
namespace {

// Where a key may be given.
enum class Scope {
  kGlobal,  // GEInitialize/Session options only: it changes Options
  kGraph,   // also AddGraph's: it changes GeGraphOptions
};

// What a row of kKeys is applied to.
struct Targets {
  Options* options;                 // null for AddGraph's options
  GeGraphOptions* graph;            // may be null for global options
  std::vector<std::string>* notes;  // may be null
};

using ApplyFn = Status (*)(const std::string& key, const std::string& value,
                           const Targets& t);

struct KeyRow {
  const char* key;
  Scope scope;
  ApplyFn apply;    // null: accepted and ignored, with `why` as the note
  const char* why;  // the note for an ignored key
};

Status Bad(const std::string& key, const std::string& value,
           const std::string& what) {
  return Status::InvalidArgument("GE option " + key + "=\"" + value +
                                 "\": " + what);
}

void Note(const Targets& t, const std::string& text) {
  if (t.notes != nullptr) t.notes->push_back(text);
}

// A decimal integer in [lo, hi], the whole string.
bool ParseInt(const std::string& text, int64_t lo, int64_t hi, int64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size() || v < lo || v > hi) {
    return false;
  }
  *out = v;
  return true;
}

Status ApplyDeviceId(const std::string& key, const std::string& value,
                     const Targets& t) {
  int64_t id = 0;
  if (!ParseInt(value, 0, INT32_MAX, &id)) {
    return Bad(key, value, "must be a device id (an integer >= 0)");
  }
  t.options->default_device = static_cast<int32_t>(id);
  return Status::OK();
}

// "10737418240" or "10737418240,2147483648:2097152": pools of bytes, all
// but the first with the largest block they serve.
Status ApplyMemMaxSize(const std::string& key, const std::string& value,
                       const Targets& t) {
  uint64_t total = 0;
  size_t pools = 0;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string::npos) comma = value.size();
    std::string pool = value.substr(start, comma - start);
    std::string size = pool.substr(0, pool.find(':'));
    int64_t bytes = 0;
    if (!ParseInt(size, 1, INT64_MAX, &bytes) ||
        (pools == 0 && size.size() != pool.size())) {
      return Bad(key, value,
                 "write pool sizes in bytes, e.g. \"10737418240\" or "
                 "\"10737418240,2147483648:2097152\" (the first pool takes "
                 "no block limit)");
    }
    total += static_cast<uint64_t>(bytes);
    ++pools;
    start = comma + 1;
  }
  t.options->mbuf_pool_bytes = total;
  if (pools > 1) {
    Note(t, key +
                ": hflow keeps one message pool per device; it gets the "
                "pools' total (" +
                std::to_string(total) +
                " bytes), the block tiers are not "
                "modelled");
  }
  return Status::OK();
}

Status ApplyResourceConfigPath(const std::string& key, const std::string& value,
                               const Targets& t) {
  // GE reads the variable first and the option only without it.
  if (std::getenv(kResourceConfigPathEnv) != nullptr) {
    Note(t, key + ": ignored, " + kResourceConfigPathEnv +
                " is set and wins, as in GE");
    return Status::OK();
  }
  if (value.empty()) return Bad(key, value, "name a cluster config file");
  return LoadClusterConfigFile(value, &t.options->cluster)
      .WithContext("GE option " + key + ": ");
}

Status ApplyDeployInfoPath(const std::string& key, const std::string& value,
                           const Targets& t) {
  if (value.empty()) return Bad(key, value, "name a deploy info JSON file");
  t.graph->deploy_info_path = value;
  return Status::OK();
}

Status ApplyDeployMode(const std::string& key, const std::string& value,
                       const Targets& t) {
  if (value != "SINGLE" && value != "MULTI") {
    return Bad(key, value, "must be SINGLE or MULTI");
  }
  t.graph->deploy_mode = value;
  return Status::OK();
}

// "[0:0]", "[0:0,0:1]" (GE's brackets optional, spaces ignored).
Status ApplyLogicalDeviceId(const std::string& key, const std::string& value,
                            const Targets& t) {
  std::string v;
  for (char c : value) {
    if (c != ' ') v += c;
  }
  if (!v.empty() && v.front() == '[') v.erase(0, 1);
  if (!v.empty() && v.back() == ']') v.pop_back();
  std::vector<GeLogicalDevice> devices;
  size_t start = 0;
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    std::string one = v.substr(start, comma - start);
    size_t colon = one.find(':');
    int64_t node = 0;
    int64_t dev = 0;
    if (colon == std::string::npos ||
        !ParseInt(one.substr(0, colon), 0, INT32_MAX, &node) ||
        !ParseInt(one.substr(colon + 1), 0, INT32_MAX, &dev)) {
      return Bad(key, value,
                 "write [node:device, ...] with the node's index in the "
                 "cluster config and the device id, e.g. \"[0:0]\"");
    }
    devices.push_back(
        GeLogicalDevice{static_cast<int32_t>(node), static_cast<int32_t>(dev)});
    start = comma + 1;
  }
  t.graph->logical_devices = std::move(devices);
  return Status::OK();
}

Status ApplyGraphKey(const std::string& key, const std::string& value,
                     const Targets& t) {
  t.graph->graph_key = value;
  Note(t, key +
              ": kept in GeGraphOptions::graph_key; hflow keeps no compile "
              "cache, so the graph is built again");
  return Status::OK();
}

Status ApplyGraphRunMode(const std::string& key, const std::string& value,
                         const Targets& t) {
  if (value != "0" && value != "1") {
    return Bad(key, value, "must be 0 (inference) or 1 (training)");
  }
  Note(t, key +
              ": ignored; it selects how GE runs compute graphs (0 "
              "inference, 1 training), and hflow runs dataflow graphs only");
  return Status::OK();
}

// hflow's own keys (Note [GE option keys]): the worker options, which GE
// has no keys for (its UDFs always run in executor processes), so that a
// GE program or the Python package can isolate its UDFs.
Status ApplyUdfIsolation(const std::string& key, const std::string& value,
                         const Targets& t) {
  if (value != "0" && value != "1") {
    return Bad(key, value, "must be 1 (UDFs in worker processes) or 0");
  }
  t.options->udf_isolation = value == "1";
  return Status::OK();
}

Status ApplyCtxCheck(const std::string& key, const std::string& value,
                     const Targets& t) {
  if (value != "report" && value != "strict" && value != "off") {
    return Bad(key, value,
               "must be report, strict or off (hflow ctxcheck's mode)");
  }
  t.options->ctxcheck = value;
  return Status::OK();
}

Status ApplyRestartPolicy(const std::string& key, const std::string& value,
                          const Targets& t) {
  if (value == "never") {
    t.options->restart_policy = RestartPolicy::kNever;
  } else if (value == "restart") {
    t.options->restart_policy = RestartPolicy::kRestart;
  } else {
    return Bad(key, value,
               "must be never (a dead worker fails its graph) or restart");
  }
  return Status::OK();
}

Status ApplyMaxWorkerRestarts(const std::string& key, const std::string& value,
                              const Targets& t) {
  int64_t n = 0;
  if (!ParseInt(value, 1, INT32_MAX, &n)) {
    return Bad(key, value, "must be an integer >= 1");
  }
  t.options->max_worker_restarts = static_cast<int32_t>(n);
  return Status::OK();
}

Status ApplyWorkerHeartbeat(const std::string& key, const std::string& value,
                            const Targets& t) {
  int64_t ms = 0;
  if (!ParseInt(value, 0, INT32_MAX, &ms) || (ms > 0 && ms < 50)) {
    return Bad(key, value, "must be 0 (off) or milliseconds >= 50");
  }
  t.options->worker_heartbeat_ms = static_cast<int32_t>(ms);
  return Status::OK();
}

constexpr const char* kComputeOnly =
    "ignored; an option of GE's compute-graph compiler or executor, and "
    "hflow runs no compute graphs";

// Note [GE option keys]
// The keys GE's dflow documentation, samples and sources use. GE merges
// GEInitialize's, a Session's and AddGraph's options into one context, so a
// key may be given at any level there; hflow splits them: keys that change
// the process (Options) are global, keys that describe a graph
// (GeGraphOptions) may be given globally as defaults or per graph. Keys
// that start with "hflow." are hflow's own, for options GE has no key for.
constexpr KeyRow kKeys[] = {
    {"ge.exec.deviceId", Scope::kGlobal, ApplyDeviceId, nullptr},
    {"ge.flowGraphMemMaxSize", Scope::kGlobal, ApplyMemMaxSize, nullptr},
    {"ge.resourceConfigPath", Scope::kGlobal, ApplyResourceConfigPath, nullptr},
    {"ge.graphRunMode", Scope::kGlobal, ApplyGraphRunMode, nullptr},
    {"ge.experiment.data_flow_deploy_info_path", Scope::kGraph,
     ApplyDeployInfoPath, nullptr},
    {"ge.exec.logicalDeviceClusterDeployMode", Scope::kGraph, ApplyDeployMode,
     nullptr},
    {"ge.exec.logicalDeviceId", Scope::kGraph, ApplyLogicalDeviceId, nullptr},
    {"ge.graph_key", Scope::kGraph, ApplyGraphKey, nullptr},
    {"hflow.udfIsolation", Scope::kGlobal, ApplyUdfIsolation, nullptr},
    {"hflow.restartPolicy", Scope::kGlobal, ApplyRestartPolicy, nullptr},
    {"hflow.ctxcheck", Scope::kGlobal, ApplyCtxCheck, nullptr},
    {"hflow.maxWorkerRestarts", Scope::kGlobal, ApplyMaxWorkerRestarts,
     nullptr},
    {"hflow.workerHeartbeatMs", Scope::kGlobal, ApplyWorkerHeartbeat, nullptr},
    {"ge.graph_compiler_cache_dir", Scope::kGlobal, nullptr,
     "ignored; hflow keeps no compile cache (UDF builds are incremental in "
     "$HFLOW_UDF_BUILD_DIR)"},
    {"ge.runFlag", Scope::kGraph, nullptr,
     "ignored; GE compiles without running for \"0\", hflow builds the "
     "graph on BuildGraph or the first feed either way"},
    {"ge.socVersion", Scope::kGlobal, nullptr,
     "ignored; the chip to compile for, and hflow's devices are simulated"},
    {"ge.experiment.memory_pool_threshold", Scope::kGlobal, nullptr,
     "ignored; GE's threshold for sending models through a memory pool"},
    {"ge.exec.precision_mode", Scope::kGlobal, nullptr, kComputeOnly},
    {"ge.exec.float_overflow_mode", Scope::kGlobal, nullptr, kComputeOnly},
    {"ge.exec.static_model_addr_fixed", Scope::kGlobal, nullptr, kComputeOnly},
    {"ge.exec.placement", Scope::kGraph, nullptr, kComputeOnly},
    {"ge.exec.isVarInitGraph", Scope::kGraph, nullptr, kComputeOnly},
    {"ge.exec.enableDump", Scope::kGlobal, nullptr, kComputeOnly},
    {"ge.exec.dumpPath", Scope::kGlobal, nullptr, kComputeOnly},
    {"ge.exec.dumpStep", Scope::kGlobal, nullptr, kComputeOnly},
    {"ge.exec.dumpMode", Scope::kGlobal, nullptr, kComputeOnly},
    {"ge.inputShape", Scope::kGraph, nullptr, kComputeOnly},
    {"ge.outputMaxSize", Scope::kGraph, nullptr, kComputeOnly},
    {"ge.externalWeightDir", Scope::kGraph, nullptr, kComputeOnly},
};

const KeyRow* FindKey(const std::string& key) {
  for (const KeyRow& r : kKeys) {
    if (key == r.key) return &r;
  }
  return nullptr;
}

Status Unknown(const std::string& key) {
  std::vector<std::string> known;
  for (const KeyRow& r : kKeys) known.emplace_back(r.key);
  std::string hint = util::NearestName(key, known);
  return Status::InvalidArgument(
      "GE option " + key + ": unknown" +
      (hint.empty() ? std::string(" (docs/user_guide.md, \"GE options\", "
                                  "lists the keys hflow knows)")
                    : "; did you mean " + hint + "?"));
}

Status ApplyAll(const std::map<std::string, std::string>& ge_options,
                const Targets& t) {
  for (const auto& [key, value] : ge_options) {
    const KeyRow* row = FindKey(key);
    if (row == nullptr) return Unknown(key);
    if (row->scope == Scope::kGlobal && t.options == nullptr) {
      return Status::InvalidArgument(
          "GE option " + key +
          ": applies to the whole process, not to one graph; give it to "
          "GEInitialize (ApplyGeOptions)");
    }
    if (row->scope == Scope::kGraph && t.graph == nullptr) {
      return Status::InvalidArgument(
          "GE option " + key +
          ": describes a graph; pass graph_defaults to ApplyGeOptions, or "
          "give it with the graph (ApplyGeGraphOptions)");
    }
    if (row->apply == nullptr) {
      Note(t, key + ": " + row->why);
      continue;
    }
    HFLOW_RETURN_IF_ERROR(row->apply(key, value, t));
  }
  return Status::OK();
}

}  // namespace

Status ClusterConfigFromEnvironment(ClusterConfig* out, bool* found) {
  ContextGuard guard;  // no device work here; the invariant all the same
  if (found != nullptr) *found = false;
  const char* path = std::getenv(kResourceConfigPathEnv);
  if (path == nullptr) return Status::OK();
  const std::string file(path);
  if (file.find_first_not_of(" \t") == std::string::npos) {
    return Status::InvalidArgument(
        std::string(kResourceConfigPathEnv) +
        " is set but empty; name a cluster config file or unset it");
  }
  HFLOW_RETURN_IF_ERROR(LoadClusterConfigFile(file, out).WithContext(
      std::string(kResourceConfigPathEnv) + "=" + file + ": "));
  if (found != nullptr) *found = true;
  return Status::OK();
}

Status ApplyGeOptions(const std::map<std::string, std::string>& ge_options,
                      Options* options, std::vector<std::string>* notes,
                      GeGraphOptions* graph_defaults) {
  ContextGuard guard;
  if (options == nullptr) {
    return Status::InvalidArgument("ApplyGeOptions: options is null");
  }
  bool found = false;
  HFLOW_RETURN_IF_ERROR(
      ClusterConfigFromEnvironment(&options->cluster, &found));
  if (found && notes != nullptr) {
    notes->push_back(std::string(kResourceConfigPathEnv) + ": the cluster is " +
                     std::getenv(kResourceConfigPathEnv));
  }
  return ApplyAll(ge_options, Targets{options, graph_defaults, notes});
}

Status ApplyGeGraphOptions(const std::map<std::string, std::string>& ge_options,
                           GeGraphOptions* out,
                           std::vector<std::string>* notes) {
  ContextGuard guard;
  if (out == nullptr) {
    return Status::InvalidArgument("ApplyGeGraphOptions: out is null");
  }
  return ApplyAll(ge_options, Targets{nullptr, out, notes});
}

}  // namespace hflow
