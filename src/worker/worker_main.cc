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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "worker/serve.h"

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
  return hflow::worker::ServeWorker(static_cast<int>(fd), parent,
                                    static_cast<int>(heartbeat), nullptr);
}
