// Crash report (see crash_report.h).
// Thread-safety: each thread's record is its own (thread-locals); the saved
// handlers are written by Install/Uninstall only, which callers serialise.
#include "util/crash_report.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "util/fast_tls.h"

namespace hflow {
namespace util {
namespace {

// Note [Crash report]
// A UDF that dereferences null or aborts takes the whole process with it
// (worker processes will isolate it later). What the user needs then is
// where it happened: the handler writes one line naming the node, function,
// replica, device and transaction the crashing thread was running. These
// signals are delivered to the thread that caused them (a fault, or raise
// and abort on that thread), so the thread's own record is the right one.
//
// The handler may run on a corrupt heap or with locks held, so it only
// reads plain thread-locals (initial-exec TLS: one load, no allocation),
// formats numbers by hand into a stack buffer and calls write(2). Then it
// restores the default action and raises the signal again: once the
// handler returns, the pending signal kills the process with the usual
// status (a shell sees 128 + signal, a parent WIFSIGNALED), and a core
// dump, if enabled, shows the original fault. A UDF that overflows its
// stack faults with no stack left, so threads that run UDFs get an
// alternate signal stack (made on their first UDF call while the report is
// installed, freed when the thread exits).
thread_local const UdfSite* t_site HFLOW_FAST_TLS = nullptr;
thread_local UdfPhase t_phase HFLOW_FAST_TLS = UdfPhase::kNone;
thread_local uint64_t t_trans HFLOW_FAST_TLS = 0;

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr size_t kNumSignals = sizeof(kSignals) / sizeof(kSignals[0]);
constexpr size_t kAltStackBytes = 64 * 1024;

std::atomic<bool> g_installed{false};
struct sigaction g_previous[kNumSignals];

// The calling thread's alternate signal stack, if hflow made it.
struct AltStack {
  void* mem = nullptr;
  ~AltStack() {
    if (mem == nullptr) return;
    stack_t off{};
    off.ss_flags = SS_DISABLE;
    sigaltstack(&off, nullptr);
    std::free(mem);
  }
};
thread_local AltStack t_alt_stack;
thread_local bool t_alt_checked = false;

void EnsureAltStack() {
  t_alt_checked = true;
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 ||
      (current.ss_flags & SS_DISABLE) == 0) {
    return;  // the thread has one already (perhaps the user's own)
  }
  void* mem = std::malloc(kAltStackBytes);
  if (mem == nullptr) return;
  stack_t st{};
  st.ss_sp = mem;
  st.ss_size = kAltStackBytes;
  if (sigaltstack(&st, nullptr) != 0) {
    std::free(mem);
    return;
  }
  t_alt_stack.mem = mem;
}

const char* SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    default:
      return "signal";
  }
}

// Appends to a fixed buffer, dropping what does not fit; no allocation.
class LineWriter {
 public:
  LineWriter(char* buf, size_t size) : buf_(buf), cap_(size) {}
  void Str(const char* s) {
    if (s == nullptr) s = "?";
    while (*s != '\0' && len_ + 1 < cap_) buf_[len_++] = *s++;
    if (cap_ > 0) buf_[len_] = '\0';
  }
  void Num(uint64_t v) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    char out[24];
    for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
    out[n] = '\0';
    Str(out);
  }
  void Int(int64_t v) {
    if (v < 0) {
      Str("-");
      Num(static_cast<uint64_t>(-(v + 1)) + 1);
    } else {
      Num(static_cast<uint64_t>(v));
    }
  }
  size_t size() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
};

void Handler(int sig, siginfo_t*, void*) {
  const int saved_errno = errno;
  char line[768];
  size_t n = FormatCrashLine(sig, line, sizeof(line) - 1);
  line[n++] = '\n';
  for (size_t off = 0; off < n;) {
    ssize_t w = write(STDERR_FILENO, line + off, n - off);
    if (w <= 0) break;
    off += static_cast<size_t>(w);
  }
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof(dfl));
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  errno = saved_errno;
  // Blocked while the handler runs: delivered, with the default action, as
  // soon as it returns (a fault that raises nothing faults again).
  raise(sig);
}

}  // namespace

void EnterUdf(const UdfSite* site, UdfPhase phase, uint64_t trans) {
  if (!t_alt_checked && g_installed.load(std::memory_order_relaxed)) {
    EnsureAltStack();
  }
  t_trans = trans;
  t_phase = phase;
  t_site = site;
}

void LeaveUdf() {
  t_site = nullptr;
  t_phase = UdfPhase::kNone;
  t_trans = 0;
}

size_t FormatCrashLine(int sig, char* buf, size_t size) {
  LineWriter w(buf, size);
  w.Str("hflow: crash: ");
  w.Str(SignalName(sig));
  const UdfSite* site = t_site;
  if (site != nullptr && t_phase != UdfPhase::kNone) {
    w.Str(" in node '");
    w.Str(site->node);
    w.Str("' function '");
    w.Str(site->function);
    w.Str("' (replica ");
    w.Int(site->replica);
    w.Str(") on device ");
    w.Int(site->device);
    if (t_phase == UdfPhase::kInit) {
      w.Str(" while running Init");
    } else if (t_phase == UdfPhase::kReset) {
      w.Str(" while running ResetFlowFuncState");
    } else {
      w.Str(" while processing transaction ");
      w.Num(t_trans);
    }
  } else {
    // prctl is a plain system call: safe here, unlike the C++ name cache.
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    w.Str(" outside UDF code (thread '");
    w.Str(name);
    w.Str("')");
  }
  return w.size();
}

Status InstallCrashReport() {
  if (g_installed.load()) return Status::OK();
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = Handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < kNumSignals; ++i) {
    if (sigaction(kSignals[i], &sa, &g_previous[i]) != 0) {
      for (size_t j = 0; j < i; ++j)
        sigaction(kSignals[j], &g_previous[j], nullptr);
      return Status::Internal(std::string("crash report: sigaction(") +
                              SignalName(kSignals[i]) +
                              ") failed: " + std::strerror(errno));
    }
  }
  g_installed.store(true);
  return Status::OK();
}

void UninstallCrashReport() {
  if (!g_installed.exchange(false)) return;
  for (size_t i = 0; i < kNumSignals; ++i) {
    sigaction(kSignals[i], &g_previous[i], nullptr);
  }
}

bool CrashReportInstalled() { return g_installed.load(); }

}  // namespace util
}  // namespace hflow
