// What `hflow run` reports at the end: the summary on stderr and the
// --stats JSON file.
//
// Thread-safety: pure functions over a finished RunResult.
#ifndef HFLOW_TOOLS_RUN_REPORT_H_
#define HFLOW_TOOLS_RUN_REPORT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "hflow/session.h"
#include "hflow/status.h"

namespace hflow::tools {

// What a run produced, for the summary and --stats.
struct RunResult {
  std::string graph;
  // The graph batches (CountBatch/TimeBatch): fewer results than feeds.
  bool aggregates = false;
  bool built = false;      // the graph was deployed and feeding started
  bool run_error = false;  // fetching failed (reported when it happened)
  int64_t repeat = 0;
  int64_t fed = 0;
  int64_t fetched = 0;
  int64_t ok = 0;  // fetched with ret code 0
  uint64_t first_failed_trans = 0;
  int32_t first_failed_code = 0;
  std::string first_failed_node;
  double wall_s = 0;
  std::vector<DeviceReport> devices;

  int64_t failed() const { return aggregates ? fetched - ok : repeat - ok; }
  // Every result carries ret code 0; a batching graph returns fewer results
  // than feeds, so there it is every result that came back (at least one).
  bool all_ok() const {
    return aggregates ? fetched > 0 && ok == fetched : ok == repeat;
  }
};

Status WriteStats(const std::string& path, const RunResult& r,
                  bool context_unchanged);

// "hflow run: g: 3/3 transactions ok (fed 3, fetched 3, failed 0) in ..."
// and, after a failure, which transaction, code and node failed first.
void PrintSummary(const RunResult& r, std::ostream& err);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RUN_REPORT_H_
