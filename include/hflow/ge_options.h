// GE's configuration inputs in hflow's terms, for programs and layers that
// speak GE: its `ge.*` option maps (GEInitialize's, Session's and
// AddGraph's) applied to hflow::Options and GeGraphOptions, and the
// RESOURCE_CONFIG_PATH environment variable that names the cluster config
// file. docs/user_guide.md ("GE options") has the table of every key.
//
// Errors: kInvalidArgument naming the key (or the variable) and the value;
// a cluster file that cannot be read is kNotFound naming the variable and
// the file. On an error the outputs are unspecified.
//
// Thread-safety: reentrant; ClusterConfigFromEnvironment reads the
// process environment, which must not change meanwhile (setenv).
#ifndef HFLOW_GE_OPTIONS_H_
#define HFLOW_GE_OPTIONS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hflow/cluster.h"
#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow {

// The environment variable GE reads its resource (cluster) config from.
inline constexpr const char* kResourceConfigPathEnv = "RESOURCE_CONFIG_PATH";

// The cluster named by $RESOURCE_CONFIG_PATH. Unset: *found = false, OK,
// *out untouched. Set: the file is loaded into *out and *found = true; a
// set but empty variable, a missing file or a bad one is an error naming
// the variable and the file. `found` may be null.
Status ClusterConfigFromEnvironment(ClusterConfig* out, bool* found);

// One GE logical device "node:device" (ge.exec.logicalDeviceId).
struct GeLogicalDevice {
  int32_t node_id = 0;
  int32_t device_id = 0;
};

// What GE's per-graph options say, for the layer that adds the graph
// (AddGraph's options in GE; global options of the same keys are defaults
// for every graph).
struct GeGraphOptions {
  // ge.experiment.data_flow_deploy_info_path: the deploy info file
  // (Session::AddGraphFile's deploy_file); empty: none.
  std::string deploy_info_path;
  // ge.exec.logicalDeviceClusterDeployMode: "SINGLE", "MULTI" or "" (not
  // given). With "SINGLE", GE deploys the graph onto
  // ge.exec.logicalDeviceId's devices; the layer that adds the graph places
  // every node without a placement there. Otherwise hflow's round-robin
  // over every local device.
  std::string deploy_mode;
  std::vector<GeLogicalDevice> logical_devices;
  // ge.graph_key: the key of GE's compile cache (hflow keeps none).
  std::string graph_key;
};

// Applies GE's global options (GEInitialize's or a Session's) to *options.
// As in GE, $RESOURCE_CONFIG_PATH, when set, names the cluster
// (options->cluster; ge.resourceConfigPath only without it). Keys hflow
// maps change *options (or *graph_defaults, for keys that are
// per-graph in hflow); keys hflow knows but ignores on purpose are accepted
// and described in *notes ("<key>: <why>"); any other key is
// kInvalidArgument naming it (with the nearest known key as "did you
// mean"). `notes` and `graph_defaults` may be null; a per-graph key with a
// null `graph_defaults` is kInvalidArgument saying where to pass it.
Status ApplyGeOptions(const std::map<std::string, std::string>& ge_options,
                      Options* options, std::vector<std::string>* notes,
                      GeGraphOptions* graph_defaults = nullptr);

// As ApplyGeOptions, for AddGraph's options: only per-graph keys change
// *out (which may hold the global defaults already); global-only keys are
// kInvalidArgument naming the key and saying to pass it to Initialize.
Status ApplyGeGraphOptions(const std::map<std::string, std::string>& ge_options,
                           GeGraphOptions* out,
                           std::vector<std::string>* notes);

}  // namespace hflow

#endif  // HFLOW_GE_OPTIONS_H_
