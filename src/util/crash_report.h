// Crash report: what a thread is running in user (UDF) code, and the signal
// handlers that print it when the process dies of SIGSEGV, SIGBUS, SIGFPE,
// SIGILL or SIGABRT. Threads that run UDF code call EnterUdf before each
// Init or Proc and LeaveUdf after; the handler (installed by
// Options::crash_report) writes one line naming the node, function,
// replica, device and transaction of the crashing thread, then lets the
// signal kill the process with its usual status (Note [Crash report] in
// crash_report.cc).
//
// Thread-safety: EnterUdf/LeaveUdf act on the calling thread's record only;
// Install/Uninstall must not race with each other (hflow::Initialize and
// Finalize call them). The handler is async-signal-safe.
#ifndef HFLOW_UTIL_CRASH_REPORT_H_
#define HFLOW_UTIL_CRASH_REPORT_H_

#include <cstdint>

#include "hflow/status.h"

namespace hflow {
namespace util {

// A UDF function of one deployed instance, as the crash report names it.
// Plain data, built once per instance; the strings belong to the instance,
// which outlives every call it makes.
struct UdfSite {
  const char* node = "";
  const char* function = "";
  int32_t replica = 0;
  int32_t device = -1;
};

enum class UdfPhase : uint32_t { kNone = 0, kInit = 1, kProc = 2, kReset = 3 };

// Records that the calling thread now runs `site` (in `phase`, processing
// transaction `trans` for kProc); LeaveUdf clears it. `site` must stay
// valid until LeaveUdf.
void EnterUdf(const UdfSite* site, UdfPhase phase, uint64_t trans);
void LeaveUdf();

// Installs the handlers (saving the previous ones); idempotent.
Status InstallCrashReport();
// Restores the handlers Install saved; a no-op when not installed.
void UninstallCrashReport();
bool CrashReportInstalled();

// The line the handler writes for `sig` on the calling thread (without the
// newline), into `buf` of `size` bytes; returns its length. For tests; the
// handler uses the same code.
size_t FormatCrashLine(int sig, char* buf, size_t size);

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_CRASH_REPORT_H_
