// UserCall: hflow ctxcheck's context-leak check around a call from hflow
// into user code (a UDF's creator, Init, Proc, stream Proc,
// ResetFlowFuncState or destructor). A UDF may switch its thread's device
// (aclrtSetDevice, aclrtSetCurrentContext) as long as it puts the caller's
// context back before it returns; one that does not leaves hflow's
// executor thread on the wrong device, which hflow corrects (Reassert) and
// a GE runtime may not. UserCall compares the thread's context at entry
// and at exit and reports a difference as a `context_leak` finding naming
// the UDF, with the stack of the call that bound the context left behind
// (NoteSwitch, from the runtime's ctxcheck epilogue).
//
// Off (no runtime with ctxcheck on), a UserCall costs one relaxed load.
//
// Thread-safety: a UserCall belongs to the thread that made it; scopes nest
// (a thread-local stack).
#ifndef HFLOW_RT_CTXCHECK_USER_CALL_H_
#define HFLOW_RT_CTXCHECK_USER_CALL_H_

#include <cstddef>
#include <cstdint>

#include "hflow/device_runtime.h"
#include "rt/ctxcheck.h"
#include "util/crash_report.h"

namespace hflow {
namespace rt {
namespace ctxcheck {

class UserCall {
 public:
  // `runtime` is the one the thread is bound on (null: the installed one);
  // `site` names the UDF and `phase` the call ("Proc"); both must outlive
  // the scope.
  UserCall(DeviceRuntime* runtime, const util::UdfSite* site,
           const char* phase) {
    if (Active()) Begin(runtime, site, phase);
  }
  ~UserCall() {
    if (runtime_ != nullptr) End();
  }
  UserCall(const UserCall&) = delete;
  UserCall& operator=(const UserCall&) = delete;

 private:
  friend void NoteSwitch(Op op, int32_t device, Context* bound);

  void Begin(DeviceRuntime* runtime, const util::UdfSite* site,
             const char* phase);
  void End();

  // Plain members only, set by Begin (runtime_ says whether it ran): off,
  // a scope is one store and a branch on entry and a branch on exit
  // (callgrind: 12,813 -> 12,858 instructions per message of the
  // four-stage chain, Note [ctxcheck costs nothing when off]). The
  // switches seen inside live in a thread-local list, from first_switch_
  // on (ctxcheck_user_call.cc).
  DeviceRuntime* runtime_ = nullptr;
  Context* entered_;
  const util::UdfSite* site_;
  const char* phase_;
  UserCall* outer_;
  size_t first_switch_;
};

// Called by the runtime, with ctxcheck on, after a call (`op` on `device`)
// that left the thread bound to `bound`, another context than it found:
// remembers where, for the innermost UserCall of this thread, if any.
void NoteSwitch(Op op, int32_t device, Context* bound);

}  // namespace ctxcheck
}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_CTXCHECK_USER_CALL_H_
