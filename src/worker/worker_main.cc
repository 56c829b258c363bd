// hflow-worker: the process hflow's deployer starts to run UDF instances
// outside the host (docs/architecture.md, "Worker processes"). Arguments:
//   --control-fd=N   the inherited end of the control socket pair
//   --parent-pid=P   the host; the worker dies with it
//   --heartbeat-ms=H the host kills a worker silent for H ms; it beats
//                    every H/5 ms (0, the default: no beats)
// It is not meant to be started by hand: without a host on the control
// socket it exits at once.
//
// Thread-safety: single-threaded until WorkerServer::Run starts its
// executor thread.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "worker/worker_server.h"

namespace {

bool Flag(const char* arg, const char* name, long* value) {
  const size_t n = std::strlen(name);
  if (std::strncmp(arg, name, n) != 0 || arg[n] != '=') return false;
  char* end = nullptr;
  *value = std::strtol(arg + n + 1, &end, 10);
  return end != arg + n + 1 && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
  long fd = -1;
  long parent = -1;
  long heartbeat = 0;
  for (int i = 1; i < argc; ++i) {
    if (!Flag(argv[i], "--control-fd", &fd) &&
        !Flag(argv[i], "--parent-pid", &parent) &&
        !Flag(argv[i], "--heartbeat-ms", &heartbeat)) {
      std::fprintf(stderr,
                   "hflow-worker: unknown argument '%s'; hflow starts this "
                   "program itself (--control-fd=N --parent-pid=P)\n",
                   argv[i]);
      return 2;
    }
  }
  if (fd < 0 || parent <= 0) {
    std::fprintf(stderr,
                 "hflow-worker: needs --control-fd and --parent-pid; hflow "
                 "starts this program itself\n");
    return 2;
  }
  // Die with the host, even when it is killed with SIGKILL; a host that
  // died before this line is seen as a new parent.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != static_cast<pid_t>(parent)) return 1;
  // Programs a UDF starts must not hold the control socket open: the host
  // sees this worker's death as the socket closing.
  fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
  hflow::worker::WorkerServer server(static_cast<int>(fd),
                                     static_cast<int>(heartbeat));
  return server.Run();
}
