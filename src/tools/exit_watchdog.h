// A last resort for `hflow run` and `hflow validate`: when a step that must
// end in bounded time (tearing a graph down after a timeout) has not ended
// by its deadline, the watchdog flushes stdout, says on stderr what was
// stuck and ends the process with std::_Exit(1). The results already
// printed are on stdout (they are flushed per line); nothing else runs:
// a UDF thread that never returns cannot be joined, and running static
// destructors under it could crash or hang.
//
// Thread-safety: Arm/Disarm from one thread (the command's); the watchdog
// thread only waits and, at a deadline, exits.
#ifndef HFLOW_TOOLS_EXIT_WATCHDOG_H_
#define HFLOW_TOOLS_EXIT_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace hflow::tools {

// Flushes stdout and stderr (C and C++ streams) and ends the process with
// `code` without running destructors or atexit handlers.
[[noreturn]] void FlushAndExit(int code);

class ExitWatchdog {
 public:
  ExitWatchdog();
  ~ExitWatchdog();  // stops the thread (never exits the process)
  ExitWatchdog(const ExitWatchdog&) = delete;
  ExitWatchdog& operator=(const ExitWatchdog&) = delete;

  // Exits with status 1 after writing "<message>" to stderr unless Disarm
  // comes within `ms`. Re-arming replaces the deadline.
  void Arm(int64_t ms, const std::string& message);
  void Disarm();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;  // guarded by mu_
  bool quit_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::string message_;
  std::thread thread_;
};

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_EXIT_WATCHDOG_H_
