// hflow_chain_memory: the memory rows of the one-device chain
// (docs/performance.md, "Memory per message"), written as Google
// Benchmark-shaped JSON for scripts/bench_rows.py:
//   MEM_Chain4HflowAllocs / MEM_Chain4TbbAllocs  heap allocations (global
//       operator new calls, every thread) per message in steady state,
//       hflow's chain against oneTBB's (chain_instructions.cc's shapes);
//   MEM_Chain4RssAfter / MEM_Chain4RssBefore  resident set size after
//       `--messages` more messages against after the warm-up: growth in
//       steady state (the aim is none beyond noise).
//
// Usage: hflow_chain_memory --out FILE [--messages N]   (default 1000000)
//
// Thread-safety: single-threaded driver; the counter is atomic because the
// chain's threads allocate too.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "chain4.h"
#include "counting_new.h"
#include "hflow/hflow.h"

namespace {

constexpr int kWarmup = 10000;
constexpr int kCounted = 10000;

// Resident set size in KiB (/proc/self/statm's second field, in pages).
double RssKiB() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / 1024.0;
}

std::string Entry(const char* name, const char* field, double value) {
  return std::string("{\"name\": \"") + name + "\", \"run_name\": \"" + name +
         "\", \"run_type\": \"iteration\", \"" + field +
         "\": " + std::to_string(value) + "}";
}

#ifdef HFLOW_HAVE_TBB
double TbbAllocationsPerMessage() {
  hflow::bench::TbbChain4 chain;
  chain.Stream(kWarmup);
  const uint64_t before = hflow::counting_new::Allocations();
  chain.Stream(kCounted);
  return double(hflow::counting_new::Allocations() - before) / kCounted;
}
#endif

int Fail(const hflow::Status& st) {
  std::fprintf(stderr, "hflow_chain_memory: %s\n", st.ToString().c_str());
  (void)hflow::Finalize();
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_path;
  long messages = 1000000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--out") == 0) out_path = argv[i + 1];
    if (std::strcmp(argv[i], "--messages") == 0)
      messages = std::atol(argv[i + 1]);
  }
  if (out_path.empty() || messages <= 0) {
    std::fprintf(stderr,
                 "usage: hflow_chain_memory --out FILE [--messages N]\n");
    return 2;
  }
  std::vector<std::string> entries;
  hflow::Status st = hflow::bench::InitializeOneDevice();
  if (!st.ok()) return Fail(st);
  {
    hflow::Session s;
    st = hflow::bench::AddChain(s);
    if (st.ok()) st = hflow::bench::StreamChain(s, 1, kWarmup);
    const uint64_t before = hflow::counting_new::Allocations();
    if (st.ok()) st = hflow::bench::StreamChain(s, 1, kCounted);
    const double allocs =
        double(hflow::counting_new::Allocations() - before) / kCounted;
    const double rss_before = RssKiB();
    for (long done = 0; st.ok() && done < messages; done += kCounted) {
      st = hflow::bench::StreamChain(s, 1, kCounted);
    }
    if (!st.ok()) return Fail(st);
    entries.push_back(
        Entry("MEM_Chain4HflowAllocs", "allocations_per_msg", allocs));
    entries.push_back(Entry("MEM_Chain4RssBefore", "rss_kib", rss_before));
    entries.push_back(Entry("MEM_Chain4RssAfter", "rss_kib", RssKiB()));
  }
  (void)hflow::Finalize();
#ifdef HFLOW_HAVE_TBB
  entries.push_back(Entry("MEM_Chain4TbbAllocs", "allocations_per_msg",
                          TbbAllocationsPerMessage()));
#endif
  std::ofstream out(out_path);
  out << "{\"benchmarks\": [";
  for (size_t i = 0; i < entries.size(); ++i) {
    out << (i ? ",\n" : "\n") << entries[i];
  }
  out << "\n]}\n";
  for (const std::string& e : entries) std::fprintf(stderr, "%s\n", e.c_str());
  return out ? 0 : 1;
}
