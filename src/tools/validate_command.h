// `hflow validate GRAPH [--cluster FILE | --devices LIST] [--deploy FILE]
// [--dot FILE] [--timeout MS] [--no-init]`: checks what `hflow run` would:
// the graph file, built-in arity, its compile configs (building and loading
// UDFs), the cluster, the placement and each device's memory, prints the
// plan, then deploys the graph on the simulated cluster so that every
// instance's Init runs (bounded by --timeout; --no-init skips it). Exit 0
// when all passes, 2 when a check of the files fails, 1 when an Init fails
// or hangs; the message names the file, field, node or device.
//
// Thread-safety: runs on the CLI's main thread.
#ifndef HFLOW_TOOLS_VALIDATE_COMMAND_H_
#define HFLOW_TOOLS_VALIDATE_COMMAND_H_

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "tools/cluster_options.h"

namespace hflow::tools {

struct ValidateArgs {
  std::string graph;
  ClusterArgs cluster;
  std::string deploy;
  std::string dot;
  int32_t timeout_ms = 10000;  // --timeout MS for each Init (-1: forever)
  bool no_init = false;        // --no-init
};

void AddValidateCommand(CLI::App* app);
int RunValidate(const ValidateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_VALIDATE_COMMAND_H_
