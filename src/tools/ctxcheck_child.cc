// RunChild (see ctxcheck_child.h).
// Thread-safety: main thread only; the signal handler only writes an
// atomic flag.
#include "tools/ctxcheck_child.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;

namespace hflow::tools {
namespace {

std::atomic<int> g_forward{0};  // a signal to pass on to the child's group

void OnSignal(int sig) { g_forward.store(sig); }

// The environment with `extra` set (replacing same-named variables).
std::vector<std::string> MergedEnv(
    const std::map<std::string, std::string>& extra) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    if (extra.count(name) == 0) out.push_back(std::move(kv));
  }
  for (const auto& [name, value] : extra) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (std::string& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void Sleep(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, nullptr);
}

}  // namespace

ChildResult RunChild(const std::vector<std::string>& argv,
                     const std::map<std::string, std::string>& env,
                     double timeout_s) {
  ChildResult r;
  std::vector<std::string> args = argv;
  std::vector<std::string> envs = MergedEnv(env);
  std::vector<char*> cargs = CStrings(args);
  std::vector<char*> cenv = CStrings(envs);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own group, whose id is its pid: a timeout kills everything it
  // started. The default signal dispositions, not ours.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = -1;
  int rc =
      posix_spawnp(&pid, cargs[0], nullptr, &attr, cargs.data(), cenv.data());
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.spawn_errno = rc;
    return r;
  }
  r.started = true;
  g_forward.store(0);
  struct sigaction sa = {}, old_int = {}, old_term = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
        .count();
  };
  int status = 0;
  double kill_at = -1;  // when SIGKILL follows a SIGTERM
  for (;;) {
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (int sig = g_forward.exchange(0); sig != 0) {
      r.interrupted = true;
      kill(-pid, sig);
      if (kill_at < 0) kill_at = elapsed() + 2;
    }
    if (timeout_s > 0 && !r.timed_out && elapsed() >= timeout_s) {
      r.timed_out = true;
      kill(-pid, SIGTERM);
      kill_at = elapsed() + 2;
    }
    if (kill_at >= 0 && elapsed() >= kill_at) kill(-pid, SIGKILL);
    Sleep(5);
  }
  // Whatever the program left running in its group goes with it.
  kill(-pid, SIGKILL);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  r.seconds = elapsed();
  if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

std::string DescribeChild(const ChildResult& r, double timeout_s) {
  if (!r.started)
    return std::string("did not start: ") + strerror(r.spawn_errno);
  char secs[32];
  snprintf(secs, sizeof(secs), "%g", timeout_s);
  if (r.timed_out) return std::string("timed out after ") + secs + " s";
  if (r.interrupted) return "interrupted";
  if (r.exited) return "exit " + std::to_string(r.exit_code);
  const char* abbrev = sigabbrev_np(r.signal);
  return std::string("signal ") + (abbrev != nullptr
                                       ? "SIG" + std::string(abbrev)
                                       : std::to_string(r.signal));
}

}  // namespace hflow::tools
