// hflow_soak's command line and process/device measurements.
//
// Thread-safety: ParseArgs runs once at start-up; RssBytes and SimUse may be
// called from any thread.
#ifndef HFLOW_TESTS_SOAK_SOAK_UTIL_H_
#define HFLOW_TESTS_SOAK_SOAK_UTIL_H_

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "util/sanitizers.h"

namespace hflow {
namespace soak {

struct Args {
  double seconds = 600;
  int threads = 6;
  int slots = 3;
  std::string json;
  // ASan keeps freed memory in quarantine (256 MiB by default) before
  // reusing it, so RSS climbs by that much in a healthy run there. TSan
  // maps shadow memory for every range a run touches, the simulated
  // devices' message pools (host memory, hundreds of MiB) included, so RSS
  // follows the pool blocks touched so far (169 -> 777 MiB in a 5 s run
  // measured), not leaks: there RSS is not checked, and leaks are
  // LeakSanitizer's (ASan) and the device-memory check's to find.
#if defined(HFLOW_TSAN)
  double rss_growth_mb = 1e9;
#elif defined(HFLOW_ASAN)
  double rss_growth_mb = 512;
#else
  double rss_growth_mb = 64;
#endif
  double dev_growth_mb = 16;
  double warmup_fraction = 0.2;  // of the run, capped at 60 s
  int64_t recycle_ms = 3000;     // at most one graph recycle this often
};

[[noreturn]] inline void Usage(const char* why) {
  std::fprintf(stderr,
               "hflow_soak: %s\nusage: hflow_soak [--minutes N | --seconds N] "
               "[--threads T] [--graphs G] [--json FILE] [--recycle-ms MS] "
               "[--rss-growth-mb M] [--device-growth-mb M]\n",
               why);
  std::exit(2);
}

inline Args ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + k).c_str());
    std::string v = argv[++i];
    char* end = nullptr;
    double d = std::strtod(v.c_str(), &end);
    bool num = end != v.c_str() && *end == '\0' && d >= 0;
    if (k == "--json") {
      a.json = v;
    } else if (!num) {
      Usage(("bad value '" + v + "' for " + k).c_str());
    } else if (k == "--minutes") {
      a.seconds = d * 60;
    } else if (k == "--seconds") {
      a.seconds = d;
    } else if (k == "--threads") {
      a.threads = std::max(1, int(d));
    } else if (k == "--graphs") {
      a.slots = std::max(1, int(d));
    } else if (k == "--recycle-ms") {
      a.recycle_ms = int64_t(d);
    } else if (k == "--rss-growth-mb") {
      a.rss_growth_mb = d;
    } else if (k == "--device-growth-mb") {
      a.dev_growth_mb = d;
    } else {
      Usage(("unknown option " + k).c_str());
    }
  }
  return a;
}

inline uint64_t RssBytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t pages = 0, rss = 0;
  f >> pages >> rss;
  return rss * uint64_t(sysconf(_SC_PAGESIZE));
}

struct DeviceUse {
  uint64_t mem = 0;
  uint64_t contexts = 0;
};
inline DeviceUse SimUse() {
  DeviceUse u;
  auto* sim = dynamic_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  if (sim == nullptr) return u;
  for (const rt::DeviceStats& s : sim->AllDeviceStats()) {
    u.mem += s.mem_used_bytes;
    u.contexts += s.contexts_alive;
  }
  return u;
}

}  // namespace soak
}  // namespace hflow

#endif  // HFLOW_TESTS_SOAK_SOAK_UTIL_H_
