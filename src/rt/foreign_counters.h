// ForeignCounters: per-device counters kept by device runtimes in other
// processes (each hflow-worker makes its own), summed so that the host's
// device reports cover them: "no stray contexts" is checked across every
// process that ran a graph's UDFs, not only the host.
//
// A source is a live reading (a worker's latest report of its runtime's
// counters); Retire reads it one last time into the retired sum, so a
// worker that ended (stopped, died, replaced by a restart) still counts.
// Counters only grow: a reading is the source's total so far.
//
// Thread-safety: every method may be called from any thread. Sources are
// called under this object's lock, so they must not call back into it.
#ifndef HFLOW_RT_FOREIGN_COUNTERS_H_
#define HFLOW_RT_FOREIGN_COUNTERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace hflow {
namespace rt {

class ForeignCounters {
 public:
  struct Counts {
    uint64_t contexts_created = 0;
    uint64_t implicit_bindings = 0;
  };
  using PerDevice = std::map<int32_t, Counts>;
  using Source = std::function<PerDevice()>;

  // Adds a live source; returns its id for Retire.
  int Add(Source source);
  // Reads the source once more into the retired sum and drops it; an
  // unknown id does nothing.
  void Retire(int id);
  // The retired sum plus every live source's reading now.
  PerDevice Totals() const;

 private:
  static void AddTo(const PerDevice& from, PerDevice* to);

  mutable std::mutex mu_;
  int next_id_ = 1;
  std::map<int, Source> live_;
  PerDevice retired_;
};

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_FOREIGN_COUNTERS_H_
