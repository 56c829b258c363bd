// Shared command-line options that choose the cluster: `--cluster FILE` (a
// numa_config or compact JSON file) or `--devices LIST` ("2,3,4,5", "2~5"),
// mutually exclusive; neither means the file $RESOURCE_CONFIG_PATH names
// (as in GE), else the default four devices 0,1,2,3.
// Every subcommand that needs a cluster (devices, run, validate) uses these
// so that the options and their messages are the same everywhere.
//
// Thread-safety: none needed; used while building and running the CLI on the
// main thread.
#ifndef HFLOW_TOOLS_CLUSTER_OPTIONS_H_
#define HFLOW_TOOLS_CLUSTER_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <string>

#include "hflow/cluster.h"
#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow::tools {

struct ClusterArgs {
  std::string cluster_file;  // --cluster FILE; empty when not given
  std::string devices;       // --devices LIST; empty when not given
  // --mbuf-pool-bytes SIZE, --max-message-bytes SIZE ("512MB", "1GiB",
  // "1048576"); empty when not given.
  std::string mbuf_pool;
  std::string max_message;
  // --queue-depth N: Options::queue_depth, the depth of queues no flow
  // attribute sets; 0 when not given.
  int64_t queue_depth = 0;
};

// Adds --cluster and --devices to `cmd`, storing into `*args`, which must
// outlive parsing. Empty values are refused at parse time (exit 2), because
// an empty string here would otherwise silently select the default cluster.
void AddClusterOptions(CLI::App* cmd, ClusterArgs* args);

// The cluster the arguments select: the file, else the list, else
// $RESOURCE_CONFIG_PATH's file, else DefaultClusterConfig(). Errors name
// the file or "--devices" (or the variable) and the field.
hflow::Status ResolveCluster(const ClusterArgs& args,
                             hflow::ClusterConfig* out);

// Sets Options::mbuf_pool_bytes, max_message_bytes and queue_depth from the
// flags that were given (others keep their defaults). Errors name the flag.
hflow::Status ApplyMemoryOptions(const ClusterArgs& args, hflow::Options* out);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_CLUSTER_OPTIONS_H_
