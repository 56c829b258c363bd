// The end-of-run summary and --stats of `hflow run` (see run_report.h).
//
// Thread-safety: pure functions.
#include "tools/run_report.h"

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tools/ret_codes.h"

namespace hflow::tools {

Status WriteStats(const std::string& path, const RunResult& r,
                  bool context_unchanged) {
  using Json = nlohmann::ordered_json;
  Json devices = Json::array();
  for (const DeviceReport& d : r.devices) {
    devices.push_back({{"id", d.id},
                       {"node", d.node},
                       {"contexts_created", d.contexts_created},
                       {"implicit_bindings", d.implicit_bindings},
                       {"submodels", d.submodels},
                       {"queues", d.queues},
                       {"peak_mem_bytes", d.peak_mem_bytes},
                       {"dropped_msgs", d.dropped_msgs}});
  }
  Json doc = {{"graph", r.graph},
              {"fed", r.fed},
              {"fetched", r.fetched},
              {"failed", r.failed()},
              {"wall_s", r.wall_s},
              {"msgs_per_s", r.wall_s > 0 ? double(r.fetched) / r.wall_s : 0.0},
              {"devices", std::move(devices)},
              {"caller_context_unchanged", context_unchanged}};
  std::ofstream file(path);
  file << doc.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  file.close();
  if (!file) return Status::NotFound(path + ": cannot write the --stats file");
  return Status::OK();
}

void PrintSummary(const RunResult& r, std::ostream& err) {
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.3f s, %.1f msgs/s", r.wall_s,
                r.wall_s > 0 ? double(r.fetched) / r.wall_s : 0.0);
  err << "hflow run: " << r.graph << ": " << r.ok << "/" << r.repeat
      << " transactions ok (fed " << r.fed << ", fetched " << r.fetched
      << ", failed " << r.failed() << ") in " << rate << "\n";
  if (r.first_failed_code != 0) {
    err << "hflow run: first failure: transaction " << r.first_failed_trans
        << " came back with ret code " << r.first_failed_code << " ("
        << RetCodeName(r.first_failed_code) << ")";
    if (!r.first_failed_node.empty()) {
      err << " from node '" << r.first_failed_node << "'";
    }
    err << "\n";
  }
}

}  // namespace hflow::tools
