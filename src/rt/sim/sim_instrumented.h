// SimRuntime::Instrumented: the wrapper every sim operation runs through.
// Uninstrumented, it costs one relaxed atomic load; instrumented, it counts
// the call, fires injected faults before the operation has any effect (so a
// failed call leaves nothing bound or allocated), sleeps the modelled latency
// and records the call.
//
// Thread-safety: as SimRuntime.
#ifndef HFLOW_RT_SIM_SIM_INSTRUMENTED_H_
#define HFLOW_RT_SIM_SIM_INSTRUMENTED_H_

#include "rt/sim/sim_internal.h"

namespace hflow {
namespace rt {

template <typename Body>
Status SimRuntime::Instrumented(Op op, int32_t device, Body&& body) {
  bool implicit = false;
  if (!instrumented_.load(std::memory_order_relaxed)) return body(&implicit);
  SimContext* entry = BoundContext();
  const bool checking =
      ctxcheck_.load(std::memory_order_relaxed) != ctxcheck::Mode::kOff;
  if (checking) ctxcheck::PendingNote() = ctxcheck::Note{};
  Status s =
      faulting_.load(std::memory_order_relaxed) ? MaybeFault(op) : Status::OK();
  if (s.ok()) s = body(&implicit);
  if (record_calls_.load(std::memory_order_relaxed)) {
    Record(op, device, entry, implicit, s);
  }
  if (checking) CtxCheckEpilogue(op, device, entry, s);
  return s;
}

}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_SIM_SIM_INSTRUMENTED_H_
