// Progress of `hflow run` on stderr: what it is doing before the first
// result (building UDFs, deploying), then results fetched, rate and ETA.
// On a terminal one line is redrawn in place (\r) a few times a second;
// otherwise (a log file, a pipe) a plain line is written every few seconds,
// so short runs stay quiet and logs stay readable.
//
// Thread-safety: not thread-safe; the fetch loop's thread owns it.
#ifndef HFLOW_TOOLS_RUN_PROGRESS_H_
#define HFLOW_TOOLS_RUN_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace hflow::tools {

class RunProgress {
 public:
  // `total` results are expected (-1: unknown, as for a batching graph);
  // `redraw`: stderr is a terminal.
  RunProgress(std::ostream* err, bool redraw, int64_t total);

  // One line saying what comes next ("deploying ..."), on its own line.
  void Say(const std::string& what);
  // Starts the clock for the rate (when feeding starts).
  void Start();
  // Reports `fetched` results when the last report is old enough.
  void Update(int64_t fetched);
  // Ends a redrawn line so the summary starts on a fresh one.
  void Finish();

  // The text of one report (exposed for tests): "fetched 40/100, 20.0
  // msgs/s, ETA 3 s".
  static std::string Text(int64_t fetched, int64_t total, double seconds);

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream* err_;
  const bool redraw_;
  const int64_t total_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point next_ = Clock::now();
  bool drawn_ = false;  // a redrawn line is on the screen
};

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RUN_PROGRESS_H_
