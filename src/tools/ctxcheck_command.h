// `hflow ctxcheck [--devices LIST | --cluster FILE] [--strict]
// [--json FILE] [--sarif FILE] [--timeout S] [--quiet] -- PROGRAM [ARGS...]`:
// runs a program built against hflow's SDK (a GE or ACL C++ program, an
// hflow program, `python3 script.py` with the dataflow package) on the
// simulated runtime with hflow ctxcheck on in every process it starts, then
// reports each distinct finding once with its count, thread and source
// line (docs/ctxcheck.md).
//
// Thread-safety: main thread only.
#ifndef HFLOW_TOOLS_CTXCHECK_COMMAND_H_
#define HFLOW_TOOLS_CTXCHECK_COMMAND_H_

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "tools/cluster_options.h"

namespace hflow::tools {

struct CtxCheckArgs {
  ClusterArgs cluster;
  bool strict = false;
  std::string json_file;
  std::string sarif_file;
  double timeout_s = 0;  // 0: none
  bool quiet = false;    // the summary line only
  std::vector<std::string> program;
};

// The device set a check runs on when neither --devices nor --cluster is
// given and $RESOURCE_CONFIG_PATH is unset: one without device 0, whose
// default context would hide an unbound call on real hardware.
inline constexpr const char* kCtxCheckDefaultDevices = "2,3,4,5";

void AddCtxCheckCommand(CLI::App* app);

// Runs the check; returns the exit status (tools/ctxcheck_report.h,
// CtxCheckExit), having written the report to `err` (and the files).
int RunCtxCheck(const CtxCheckArgs& args, std::ostream& err);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_CTXCHECK_COMMAND_H_
