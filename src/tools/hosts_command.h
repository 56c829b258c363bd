// `hflow hosts [--cluster FILE] [--json] [--timeout-ms N]`: checks a
// multi-host cluster before a graph needs it. Every other host's hflowd is
// contacted in parallel with the cluster's credentials and checked against
// the config (protocol, node id, devices); each host is shown as local, ok
// (with its Hello round trip) or failed with the reason
// (docs/user_guide.md, "Running across hosts").
//
// Exit status: 0 every host answers and matches; 1 some host failed; 2 the
// cluster or its credentials are wrong.
//
// Thread-safety: main thread only (the probe makes its own threads).
#ifndef HFLOW_TOOLS_HOSTS_COMMAND_H_
#define HFLOW_TOOLS_HOSTS_COMMAND_H_

#include <CLI/CLI.hpp>
#include <ostream>

#include "tools/cluster_options.h"

namespace hflow::tools {

void AddHostsCommand(CLI::App* app);

// The command's work, writing to the given streams (tests call it). JSON:
// {"source", "hosts": [{"node_id", "local", "address", "ok", "error",
// "hello_ms", "hostname", "pid", "backend", "release", "devices": [ids],
// "labels": [...]}]}.
int RunHosts(const ClusterArgs& args, bool json, int32_t timeout_ms,
             std::ostream& out, std::ostream& err);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_HOSTS_COMMAND_H_
