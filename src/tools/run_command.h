// `hflow run GRAPH [--cluster FILE | --devices LIST] [--deploy FILE]
// [--input NAME=VALUE]... [--repeat N] [--timeout MS] [--stats FILE]`
// (FORMATS.md "Command line"): deploys the graph file on the simulated
// cluster, feeds the inputs N times (transaction ids 1..N), and prints one
// JSON line per fetched output message to `out`, in transaction order.
// Progress and the summary go to `err`. Exit status 0 only when every
// transaction came back with ret code 0; 1 on any failure or error.
//
// Feeding runs on a helper thread while the calling thread fetches, so a
// run longer than the pipeline's queues are deep cannot deadlock.
//
// Thread-safety: RunRun is called on the CLI's main thread; it owns the
// process-wide hflow::Initialize/Finalize pair for its duration.
#ifndef HFLOW_TOOLS_RUN_COMMAND_H_
#define HFLOW_TOOLS_RUN_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tools/cluster_options.h"

namespace hflow::tools {

struct RunArgs {
  std::string graph;
  ClusterArgs cluster;
  std::string deploy;               // --deploy FILE; overrides the graph's
  std::vector<std::string> inputs;  // --input NAME=VALUE, as given
  int64_t repeat = 1;               // --repeat N (>= 1)
  int32_t timeout_ms = 10000;       // --timeout MS for each feed and fetch
  std::string stats;                // --stats FILE; empty: none
};

// Registers the `run` subcommand and its callback on `app`.
void AddRunCommand(CLI::App* app);

// Runs the graph as described above; returns the exit status.
int RunRun(const RunArgs& args, std::ostream& out, std::ostream& err);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RUN_COMMAND_H_
