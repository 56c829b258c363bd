// ContextGuard: saves the calling thread's exact current context on entry and
// restores it on every exit path (return, early error, exception). Every
// hflow public entry point opens with one (invariant 2, "transparent API").
//
// Note [Guard restores handles, not devices]: the guard saves the context
// *handle*, which may be none, a user-created context, or a context of a
// device hflow never uses, and restores it with SetCurrentContext. It never
// calls SetDevice (which would create a default context, take a reference,
// or bind device 0 when the caller had nothing; as PyTorch
// #91122, DALI #829). When nothing changed, exit costs one context read.
//
// Errors: none; construction and destruction never fail or throw (a
// restore that cannot bind the saved context leaves the thread unbound).
//
// Thread-safety: a guard belongs to the thread that created it.
#ifndef HFLOW_CONTEXT_GUARD_H_
#define HFLOW_CONTEXT_GUARD_H_

#include "hflow/rt.h"

namespace hflow {

class ContextGuard {
 public:
  ContextGuard() noexcept : ContextGuard(rt::CurrentRuntime()) {}
  // Guards the binding of a given runtime (hflow's internals hold theirs).
  explicit ContextGuard(rt::DeviceRuntime* runtime) noexcept
      : rt_(runtime),
        saved_(rt_ != nullptr ? rt_->CurrentContextFast() : nullptr) {}
  ~ContextGuard() {
    if (rt_ != nullptr && rt_->CurrentContextFast() != saved_) Restore();
  }
  ContextGuard(const ContextGuard&) = delete;
  ContextGuard& operator=(const ContextGuard&) = delete;

  // The context the caller had on entry (nullptr: none).
  rt::Context* saved() const noexcept { return saved_; }

 private:
  // Out of line: the rare path. If the saved context died meanwhile (the
  // caller's own doing), the thread is left unbound rather than on a context
  // it never had.
  void Restore() noexcept;

  rt::DeviceRuntime* rt_;
  rt::Context* saved_;
};

}  // namespace hflow

#endif  // HFLOW_CONTEXT_GUARD_H_
