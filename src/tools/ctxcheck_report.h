// `hflow ctxcheck`'s report: the JSON lines every process of the checked
// run appended (rt/ctxcheck: `process`, `finding` and `count` lines) merged
// into one finding per site, with counts summed over processes and the
// user's frames given file and line (DwarfLines); then written as text, as
// a JSON report (schema 1) and as SARIF 2.1.0 (ctxcheck_sarif.cc).
//
// Thread-safety: none needed (the command's main thread).
#ifndef HFLOW_TOOLS_CTXCHECK_REPORT_H_
#define HFLOW_TOOLS_CTXCHECK_REPORT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "tools/ctxcheck_child.h"

namespace hflow::tools {

// `hflow ctxcheck`'s exit statuses (docs/ctxcheck.md).
enum CtxCheckExit : int {
  kCtxClean = 0,          // the program ran and nothing was found
  kCtxFindings = 1,       // findings (whatever the program's status)
  kCtxUsage = 2,          // bad arguments
  kCtxProgramFailed = 3,  // no findings, but the program failed
  kCtxNoHflow = 4,        // the program never ran hflow's checked runtime
  kCtxTimeout = 124,      // the program ran past --timeout
  kCtxOwnFailure = 125,   // ctxcheck itself could not work
  kCtxCannotExecute = 126,
  kCtxNotFound = 127,
};

struct MergedFinding {
  nlohmann::json first;  // the site's first finding line, frames symbolized
  uint64_t count = 0;    // hits, summed over processes
  std::set<int64_t> pids;
  std::set<int32_t> devices;
};

struct CtxCheckReport {
  std::vector<std::string> command;  // the program and its arguments
  std::string mode;                  // "report" or "strict"
  std::vector<int32_t> devices;      // the cluster's local devices
  std::string cluster_source;        // where the cluster came from
  double timeout_s = 0;
  ChildResult child;
  std::vector<nlohmann::json> processes;  // their `process` lines
  std::vector<MergedFinding> findings;    // in order of first hit
  std::vector<std::string> warnings;      // lines that could not be read
  int exit_code = kCtxClean;
};

// Reads and merges `path`'s lines into `report` (a missing file is no
// line). A malformed line is a warning, never an error: a process killed
// mid-write leaves a partial last line.
Status ReadFindings(const std::string& path, CtxCheckReport* report);

// Adds file and line to every user frame of every finding, and sets each
// finding's "location" to the first user frame (else the first frame).
void SymbolizeFindings(CtxCheckReport* report);

// The exit status the report's outcome calls for.
int ExitCodeOf(const CtxCheckReport& report);

// The report as text: one block per finding and a summary line.
std::string ReportText(const CtxCheckReport& report);

// The JSON report: {"schema": 1, "tool", "command", "mode", "devices",
// "program": {...}, "processes", "summary": {...}, "findings": [...],
// "exit_code"}.
nlohmann::json ReportJson(const CtxCheckReport& report);

// The SARIF 2.1.0 log (ctxcheck_sarif.cc).
nlohmann::json SarifJson(const CtxCheckReport& report);

// Writes `j` to `path` whole or not at all (a temporary file renamed), so
// a reader never sees half a report. Errors name the path.
Status WriteJsonFile(const std::string& path, const nlohmann::json& j);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_CTXCHECK_REPORT_H_
