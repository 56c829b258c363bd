// WorkerProcess: see worker_process.h.
//
// Thread-safety: see worker_process.h. mu_ guards the call slots, the
// start handshake and the death status; dead_ and planned_ are atomics
// read without it.
#include "worker/worker_process.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "util/thread_name.h"
#include "worker/remote_config.h"
#include "worker/wire.h"

extern char** environ;

namespace hflow {
namespace worker {

namespace {

// The descriptor the worker finds its control socket on.
constexpr int kControlFd = 3;
// A worker's output line longer than this is written in pieces.
constexpr size_t kMaxLine = 64 << 10;

std::string SignalText(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* desc = sigdescr_np(sig);
  return std::to_string(sig) + " (SIG" + (abbrev ? abbrev : "?") +
         (desc ? std::string(", ") + desc : std::string()) + ")";
}

}  // namespace

Status FindWorkerBinary(std::string* path) {
  if (const char* env = std::getenv("HFLOW_WORKER"); env && *env) {
    *path = env;
    return Status::OK();
  }
  Dl_info info{};
  std::string tried;
  if (dladdr(reinterpret_cast<void*>(&FindWorkerBinary), &info) != 0 &&
      info.dli_fname != nullptr) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path lib = fs::canonical(info.dli_fname, ec);
    if (!ec) {
      const fs::path bin =
          lib.parent_path().parent_path() / "bin" / "hflow-worker";
      if (access(bin.c_str(), X_OK) == 0) {
        *path = bin.string();
        return Status::OK();
      }
      tried = bin.string();
    }
  }
  return Status::NotFound(
      "the hflow-worker executable was not found (tried " +
      (tried.empty() ? std::string("nothing: libhflow's folder is unknown")
                     : tried) +
      "); install hflow whole, or point $HFLOW_WORKER at it");
}

Status WorkerProcess::Start(WorkerSpec spec,
                            std::shared_ptr<WorkerProcess>* out) {
  std::shared_ptr<WorkerProcess> w(new WorkerProcess(std::move(spec)));
  int child_fd = -1;
  HFLOW_RETURN_IF_ERROR(Channel::Pair(&w->channel_, &child_fd));
  // Never the worker's own number: a dup2 onto itself would keep
  // close-on-exec, and the worker would find nothing on it.
  if (child_fd <= kControlFd) {
    const int moved = fcntl(child_fd, F_DUPFD_CLOEXEC, kControlFd + 1);
    close(child_fd);
    if (moved < 0) {
      return Status::Internal("worker: fcntl: " +
                              std::string(std::strerror(errno)));
    }
    child_fd = moved;
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    close(child_fd);
    return Status::Internal("worker: pipe: " +
                            std::string(std::strerror(errno)));
  }
  w->supervisor_ = std::thread([raw = w.get(), child_fd, pipe_fds] {
    raw->Supervise(child_fd, pipe_fds[0], pipe_fds[1]);
  });
  std::unique_lock<std::mutex> l(w->mu_);
  const bool in_time =
      w->cv_.wait_for(l, std::chrono::milliseconds(w->spec_.start_timeout_ms),
                      [&] { return w->started_; });
  if (!in_time) {
    l.unlock();
    w->Kill();
    return Status::Timeout("worker for " + w->What() + ": no Hello within " +
                           std::to_string(w->spec_.start_timeout_ms) + " ms");
  }
  if (!w->start_status_.ok()) {
    Status s = w->start_status_;
    l.unlock();
    w->Kill();
    return s;
  }
  *out = std::move(w);
  return Status::OK();
}

Status WorkerProcess::Spawn(int child_fd, int out_child_fd) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, child_fd, kControlFd);
  posix_spawn_file_actions_adddup2(&fa, out_child_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, out_child_fd, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: a terminal's signals reach the host, which
  // ends its workers; and the whole group can be killed at once.
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none, dfl;
  sigemptyset(&none);
  sigemptyset(&dfl);
  sigaddset(&dfl, SIGPIPE);
  sigaddset(&dfl, SIGTERM);
  sigaddset(&dfl, SIGINT);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &dfl);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  const std::string parent = "--parent-pid=" + std::to_string(getpid());
  const std::string control = "--control-fd=" + std::to_string(kControlFd);
  const std::string beat =
      "--heartbeat-ms=" + std::to_string(std::max(0, spec_.heartbeat_ms));
  std::vector<std::string> args = spec_.launcher;
  if (args.empty()) args.push_back(spec_.binary);
  for (const std::string* a : {&control, &parent, &beat}) args.push_back(*a);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc =
      posix_spawn(&pid, args[0].c_str(), &fa, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Status::Internal("worker for " + What() + ": cannot start " +
                            args[0] + ": " + std::strerror(rc));
  }
  pid_.store(pid, std::memory_order_release);
  return Status::OK();
}

void WorkerProcess::Supervise(int child_fd, int out_fd, int out_child_fd) {
  util::SetCurrentThreadName("wk-" + spec_.tag);
  Status s = Spawn(child_fd, out_child_fd);
  close(child_fd);
  close(out_child_fd);
  if (!s.ok()) {
    close(out_fd);
    dead_.store(true, std::memory_order_release);
    std::lock_guard<std::mutex> l(mu_);
    started_ = true;
    start_status_ = death_ = s;
    cv_.notify_all();
    return;
  }
  bool out_open = true;
  bool beating = false;  // Hello came: silence counts from here
  auto heard = std::chrono::steady_clock::now();
  for (;;) {
    if (ring_) {  // parked only with the ring empty (ShmRing::Park)
      DrainRing(&heard);
      ring_->Park();
      if (!ring_->Empty()) {
        ring_->Unpark();
        continue;
      }
    }
    pollfd p[2] = {{channel_.fd(), POLLIN, 0}, {out_fd, POLLIN, 0}};
    const int n = poll(p, out_open ? 2 : 1, UntilSilence(beating, heard));
    if (ring_) ring_->Unpark();  // busy: no doorbell needed
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) continue;  // UntilSilence decides
    if (out_open && (p[1].revents & (POLLIN | POLLHUP)) != 0) {
      Forward(out_fd, false);
      if ((p[1].revents & POLLIN) == 0) out_open = false;  // hung up
    }
    if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    v1::WorkerMessage msg;
    // Readable: a blocking read returns at once (no second poll).
    if (!channel_.Recv(&msg, -1).ok()) break;  // closed: the worker is gone
    heard = std::chrono::steady_clock::now();
    beating = beating || msg.has_hello();
    if (msg.has_beat() || msg.has_doorbell()) continue;
    // A reply the ring had no room for comes after those it holds.
    if (ring_) DrainRing(&heard);
    OnMessage(std::move(msg));
  }
  // Every reply the worker put in the ring before it died is handed out
  // before the calls in flight fail (Note [Replies before the death]).
  if (ring_) DrainRing(&heard);
  {
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;  // Note [Replies before the death]
    cv_.notify_all();
    for (auto& [id, slot] : calls_) {
      if (slot->wake != nullptr) slot->wake->notify_one();
      WakeReader(slot->ring);
    }
  }
  Reap(planned_.load(std::memory_order_acquire));
  Forward(out_fd, true);  // what it wrote before it died
  close(out_fd);
}

void WorkerProcess::OnMessage(v1::WorkerMessage msg) {
  std::unique_lock<std::mutex> l(mu_);
  if (msg.has_hello()) {
    started_ = true;
    if (msg.hello().protocol_version() != kProtocolVersion) {
      start_status_ = Status::FailedPrecondition(
          "worker for " + What() + ": " +
          (spec_.launcher.empty() ? spec_.binary : spec_.launcher[0]) +
          " speaks protocol version " +
          std::to_string(msg.hello().protocol_version()) + ", this hflow " +
          std::to_string(kProtocolVersion) +
          "; use the hflow-worker of the same install");
    }
    cv_.notify_all();
    return;
  }
  for (const v1::DeviceCounters& c : msg.counters()) counters_[c.device()] = c;
  if (msg.has_emit()) {  // not a reply: the worker's own message
    l.unlock();
    OnEmit(std::move(msg));
    return;
  }
  auto it = calls_.find(msg.id());
  if (it == calls_.end()) return;  // a call that timed out
  Slot* slot = it->second;
  if (slot->answered != nullptr) (*slot->answered)(slot->index);
  slot->reply = std::move(msg);
  slot->done = true;
  calls_.erase(it);
  if (slot->wake == nullptr) {
    cv_.notify_all();
  } else if (--*slot->left == 0) {
    slot->wake->notify_one();
  }
  WakeReader(slot->ring);
}

// Posted by the owner (quick: this is the supervisor thread, which every
// reply passes); without an owner's handler the output is refused.
void WorkerProcess::OnEmit(v1::WorkerMessage msg) {
  if (spec_.on_emit) {
    spec_.on_emit(std::move(msg));
    return;
  }
  v1::HostMessage no;
  no.set_id(msg.id());
  no.mutable_emit_done()->set_rc(FlowFunc::FLOW_FUNC_FAILED);
  Send(no);
}

int WorkerProcess::UntilSilence(bool beating,
                                std::chrono::steady_clock::time_point heard) {
  if (spec_.heartbeat_ms <= 0 || !beating || silent_.load()) return -1;
  const auto quiet = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::steady_clock::now() - heard)
                         .count();
  if (quiet < spec_.heartbeat_ms) return int(spec_.heartbeat_ms - quiet);
  // Hung: the kill closes its socket, and the death is handled as any.
  silent_.store(true);
  Signal(SIGKILL);
  return -1;
}

void WorkerProcess::SetLabel(std::string what, std::string prefix) {
  std::lock_guard<std::mutex> l(label_mu_);
  what_ = std::move(what);
  prefix_ = std::move(prefix);
}

std::string WorkerProcess::What() const {
  std::lock_guard<std::mutex> l(label_mu_);
  return what_;
}

std::string WorkerProcess::Prefix() const {
  std::lock_guard<std::mutex> l(label_mu_);
  return prefix_;
}

std::map<int32_t, v1::DeviceCounters> WorkerProcess::counters() const {
  std::lock_guard<std::mutex> l(mu_);
  return counters_;
}

// Writes whole lines of the worker's output to stderr under its prefix.
void WorkerProcess::Forward(int out_fd, bool to_end) {
  const std::string prefix = Prefix();
  char buf[4096];
  for (;;) {
    if (to_end) {
      pollfd p{out_fd, POLLIN, 0};
      if (poll(&p, 1, 0) <= 0 || (p.revents & POLLIN) == 0) break;
    }
    const ssize_t n = read(out_fd, buf, sizeof(buf));
    if (n <= 0) break;
    partial_.append(buf, size_t(n));
    size_t start = 0;
    for (size_t nl; (nl = partial_.find('\n', start)) != std::string::npos;
         start = nl + 1) {
      const std::string line = prefix + partial_.substr(start, nl + 1 - start);
      (void)!write(STDERR_FILENO, line.data(), line.size());
    }
    partial_.erase(0, start);
    if (partial_.size() > kMaxLine) {  // output without newlines: cut it
      const std::string line = prefix + partial_ + "\n";
      (void)!write(STDERR_FILENO, line.data(), line.size());
      partial_.clear();
    }
    if (!to_end) break;  // one read per wake-up
  }
  if (to_end && !partial_.empty()) {
    const std::string line = prefix + partial_ + "\n";
    (void)!write(STDERR_FILENO, line.data(), line.size());
    partial_.clear();
  }
}

Status WorkerProcess::Describe(int st) const {
  const std::string who =
      "the worker process (pid " + std::to_string(pid()) + ") of " + What();
  if (silent_.load() && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL) {
    return Status::Internal(
        who + " stopped answering (nothing from it for " +
        std::to_string(spec_.heartbeat_ms) +
        " ms, Options::worker_heartbeat_ms) and was killed");
  }
  if (WIFSIGNALED(st)) {
    return Status::Internal(who + " was killed by signal " +
                            SignalText(WTERMSIG(st)));
  }
  if (WIFEXITED(st)) {
    return Status::Internal(who + " exited with code " +
                            std::to_string(WEXITSTATUS(st)));
  }
  return Status::Internal(who + " ended (wait status " + std::to_string(st) +
                          ")");
}

// The socket closed: the worker died, or is exiting after Stop. A worker
// that closed it but lingers is killed rather than waited on for ever.
void WorkerProcess::Reap(bool planned) {
  {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait_for(l, std::chrono::seconds(2), [&] { return draining_ == 0; });
  }
  const pid_t pid = this->pid();
  int st = 0;
  pid_t r = 0;
  for (int i = 0; i < 200 && r == 0; ++i) {
    r = waitpid(pid, &st, WNOHANG);
    if (r == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (r == 0) {
    Signal(SIGKILL);
    r = waitpid(pid, &st, 0);
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    reaped_ = true;  // the pid may be another process's from now on
  }
  Status death = r == pid ? Describe(st)
                          : Status::Internal("the worker process (pid " +
                                             std::to_string(pid) + ") of " +
                                             What() + " is gone");
  // The owner hears of the death before any waiting call returns, so
  // what it reports still sees the call in flight.
  if (spec_.on_end) spec_.on_end();
  if (!planned && !planned_.load() && spec_.on_death) spec_.on_death(death);
  std::lock_guard<std::mutex> l(mu_);
  death_ = death;
  dead_.store(true, std::memory_order_release);
  if (!started_) {
    started_ = true;
    start_status_ = death;
  }
  cv_.notify_all();
}

bool WorkerProcess::WaitDead(int timeout_ms) const {
  std::unique_lock<std::mutex> l(mu_);
  return cv_.wait_for(l, std::chrono::milliseconds(timeout_ms),
                      [&] { return dead_.load(std::memory_order_acquire); });
}

Status WorkerProcess::Stop(int timeout_ms) {
  if (dead_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> j(join_mu_);
    if (supervisor_.joinable()) supervisor_.join();
    return Status::OK();
  }
  planned_.store(true, std::memory_order_release);
  v1::HostMessage req;
  req.mutable_stop();
  v1::WorkerMessage reply;
  Status s = Call(&req, &reply, timeout_ms, "stopping " + What());
  if (s.ok() && reply.done().code() != 0) {
    s = Status(static_cast<StatusCode>(reply.done().code()),
               reply.done().message());
  }
  // The worker exits after its reply; wait for the supervisor to reap it.
  {
    std::unique_lock<std::mutex> l(mu_);
    if (!cv_.wait_for(
            l, std::chrono::milliseconds(timeout_ms < 0 ? 10000 : timeout_ms),
            [&] { return dead_.load(); })) {
      l.unlock();
      Kill();
    }
  }
  std::lock_guard<std::mutex> j(join_mu_);
  if (supervisor_.joinable()) supervisor_.join();
  return s;
}

// The worker's process group too: programs a UDF started die with it.
// Under mu_, and only before the reap: a reaped pid may be reused.
void WorkerProcess::Signal(int sig) {
  std::lock_guard<std::mutex> l(mu_);
  const pid_t p = pid();
  if (p <= 0 || reaped_) return;
  kill(-p, sig);
  kill(p, sig);
}

void WorkerProcess::Kill() {
  planned_.store(true, std::memory_order_release);
  Signal(SIGKILL);
  channel_.Shutdown();                      // the supervisor's poll returns
  std::lock_guard<std::mutex> j(join_mu_);  // Cancel and a timeout at once
  if (supervisor_.joinable() &&
      supervisor_.get_id() != std::this_thread::get_id()) {
    supervisor_.join();
  }
}

Status WorkerProcess::death() const {
  std::lock_guard<std::mutex> l(mu_);
  return death_;
}

WorkerProcess::~WorkerProcess() {
  Kill();
  if (supervisor_.joinable()) supervisor_.detach();  // only on itself
}

}  // namespace worker
}  // namespace hflow
