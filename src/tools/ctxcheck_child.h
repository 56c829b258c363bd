// Runs the program `hflow ctxcheck` checks: posix_spawnp in a process group
// of its own (so that a timeout or an interrupt reaches every process it
// started, hflow-worker children included), with extra environment
// variables, a deadline, and SIGINT/SIGTERM forwarded to the group.
//
// Thread-safety: main thread only (installs signal handlers while the
// child runs).
#ifndef HFLOW_TOOLS_CTXCHECK_CHILD_H_
#define HFLOW_TOOLS_CTXCHECK_CHILD_H_

#include <map>
#include <string>
#include <vector>

namespace hflow::tools {

struct ChildResult {
  bool started = false;  // false: not found or not executable (error says)
  int spawn_errno = 0;   // why it did not start
  bool exited = false;   // exit_code is valid
  int exit_code = 0;
  int signal = 0;            // the signal that ended it (0: none)
  bool timed_out = false;    // killed at the deadline
  bool interrupted = false;  // ctxcheck itself got SIGINT or SIGTERM
  double seconds = 0;
};

// Runs argv[0] (looked up on PATH) with `argv`, the environment plus `env`
// (replacing variables of the same names), at most `timeout_s` seconds
// (0: no limit; at the deadline the group gets SIGTERM, and SIGKILL two
// seconds later).
ChildResult RunChild(const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& env,
                     double timeout_s);

// "exit 3", "signal SIGSEGV", "timed out after 10 s", ... for messages.
std::string DescribeChild(const ChildResult& r, double timeout_s);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_CTXCHECK_CHILD_H_
