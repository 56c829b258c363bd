// ContextGuard's slow path (see hflow/context_guard.h).
// Thread-safety: acts on the calling thread's binding only.
#include "hflow/context_guard.h"

namespace hflow {

void ContextGuard::Restore() noexcept {
  if (!rt_->SetCurrentContext(saved_).ok()) {
    (void)rt_->SetCurrentContext(nullptr);
  }
}

}  // namespace hflow
