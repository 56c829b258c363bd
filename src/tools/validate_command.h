// `hflow validate GRAPH [--cluster FILE | --devices LIST] [--deploy FILE]
// [--dot FILE]`: checks the graph file, its compile configs (building and
// loading UDFs), the cluster and the placement, then prints the plan; exit
// 1 with a clear message on the first error (FORMATS.md).
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
};

void AddValidateCommand(CLI::App* app);
int RunValidate(const ValidateArgs& args, std::ostream& out, std::ostream& err);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_VALIDATE_COMMAND_H_
