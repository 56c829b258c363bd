// `hflow run GRAPH [--cluster FILE | --devices LIST] [--deploy FILE]
// [--input NAME=VALUE]... [--repeat N] [--timeout MS] [--stats FILE]
// [--output FILE] [--output-npy DIR] [--fetch K,...]`: deploys the graph file
// on the simulated cluster, feeds the inputs N times (transaction ids 1..N),
// and prints one JSON line per fetched output message (result_printer.h), in
// transaction order. Progress and the summary go to `err`.
//
// Exit status: 0 when every transaction came back with ret code 0; 1 when
// the run failed (deployment, a UDF's ret code, a timeout, a write); 2 when
// the command line or a file it names is wrong (found before anything is
// deployed; usage errors exit 2 from the CLI parser too).
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
  int32_t timeout_ms = 10000;       // --timeout MS: every wait (-1: none)
  std::string stats;                // --stats FILE; empty: none
  std::string output;               // --output FILE; empty: stdout
  std::string output_npy;           // --output-npy DIR; empty: none
  // --fetch K,...: the outputs fetched, in this order (GE's indexed fetch);
  // empty: every output.
  std::vector<uint32_t> fetch;
  // --isolate: every UDF from a library runs in a worker process
  // (Options::udf_isolation).
  bool isolate = false;
  // --restart N: a worker that dies is started again up to N times per
  // instance (RestartPolicy::kRestart); 0: the run fails at the first.
  int32_t restart = 0;
};

// Registers the `run` subcommand and its callback on `app`.
void AddRunCommand(CLI::App* app);

// Runs the graph as described above; returns the exit status.
int RunRun(const RunArgs& args, std::ostream& out, std::ostream& err);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RUN_COMMAND_H_
