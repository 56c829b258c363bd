// hflow_chain_instructions: the deterministic half of row
// chain4_one_device_64B (docs/performance.md, "Instructions per message").
// Streams N 64 B messages through a chain of four pass-through stages,
// either hflow's (x ─[id]─[id]─[id]─[id]─ out on one device, one executor
// thread) or oneTBB's (four serial queueing function_nodes, the caller and
// one worker thread), after a warm-up of kWarmup messages, and exits.
// scripts/bench_instructions runs it under callgrind for two values of N:
// the difference of the totals over the difference of N is the marginal
// instructions per message, start-up and teardown cancelling out.
//
// Usage: hflow_chain_instructions hflow|hflow-ctxcheck|tbb MESSAGES
//
// Thread-safety: single-threaded driver; the chain runs on its runtime's
// threads.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "chain4.h"
#include "hflow/hflow.h"

namespace {

constexpr int kWarmup = 256;

// `ctxcheck`: the chain with hflow ctxcheck on (report mode; the chain is
// clean, so this is the cost of checking, not of reporting).
int RunHflow(int n, const char* ctxcheck) {
  hflow::Status st = hflow::bench::InitializeOneDevice(ctxcheck);
  {
    hflow::Session s;
    if (st.ok()) st = hflow::bench::AddChain(s);
    if (st.ok()) st = hflow::bench::StreamChain(s, 1, kWarmup);
    if (st.ok()) st = hflow::bench::StreamChain(s, 1, n);
  }
  (void)hflow::Finalize();
  if (!st.ok()) {
    std::fprintf(stderr, "hflow_chain_instructions: %s\n",
                 st.ToString().c_str());
    return 1;
  }
  return 0;
}

#ifdef HFLOW_HAVE_TBB
int RunTbb(int n) {
  hflow::bench::TbbChain4 chain;
  chain.Stream(kWarmup);
  chain.Stream(n);
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const int n = argc == 3 ? std::atoi(argv[2]) : 0;
  const std::string which = argc == 3 ? argv[1] : "";
  if (n <= 0 ||
      (which != "hflow" && which != "hflow-ctxcheck" && which != "tbb")) {
    std::fprintf(stderr,
                 "usage: hflow_chain_instructions hflow|hflow-ctxcheck|tbb "
                 "MESSAGES (> 0)\n");
    return 2;
  }
  if (which == "hflow") return RunHflow(n, "off");
  if (which == "hflow-ctxcheck") return RunHflow(n, "report");
#ifdef HFLOW_HAVE_TBB
  return RunTbb(n);
#else
  std::fprintf(stderr,
               "hflow_chain_instructions: built without oneTBB; only "
               "'hflow' is available\n");
  return 3;
#endif
}
