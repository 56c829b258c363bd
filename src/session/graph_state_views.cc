// GraphState::FeedViews: the zero-copy feed. A view inside host memory
// registered with the runtime (session/host_memory.h) becomes its input's
// mbuf as it is (services' BuildHostMbuf); any other view is copied into
// the device pool as FeedData's tensors are. FetchViews is in
// graph_state_fetch.cc.
//
// Note [Releasing a fed view]
// The caller's release is the deleter of the view's keep. A zero-copy
// message holds one copy of it (with the registration, so the memory
// cannot be unregistered under it) inside its mbuf, and nothing else in
// hflow copies it: the release runs when the last reference to that mbuf
// goes, on whichever thread drops it (a node done with its input, a fetch,
// RemoveGraph dropping queued messages). A feed that fails or times out
// destroys the mbufs it made before returning, so hflow holds no copy by
// then; a copied view is never held past the call. Either way it runs
// exactly once, when the caller's own copies are gone too.
//
// Thread-safety: as documented in graph_state.h.
#include "session/graph_state.h"

namespace hflow {
using session::FeedPart;

namespace {
// What a zero-copy message holds. Members die in reverse order: the
// registration lets go first, so when the caller's release runs the
// memory is no longer in use and UnregisterHostMemory succeeds at once
// (and after Finalize the runtime unregisters it before the caller may
// free it).
struct ViewHold {
  std::shared_ptr<const void> keep;
  std::shared_ptr<const void> registration;
};
}  // namespace

Status GraphState::FeedViews(const std::vector<TensorView>& inputs,
                             const FlowInfo& info, int32_t timeout_ms) {
  HFLOW_RETURN_IF_ERROR(EnsureBuilt());
  if (inputs.empty()) return FeedEos(info, timeout_ms);
  HFLOW_RETURN_IF_ERROR(
      CheckCount("FeedViews", "views", nullptr, inputs.size()));
  HFLOW_RETURN_IF_ERROR(CheckUserData(info));
  std::vector<std::shared_ptr<const void>> holds(inputs.size());
  std::vector<FeedPart> parts(inputs.size());
  for (uint32_t k = 0; k < inputs.size(); ++k) {
    const TensorView& v = inputs[k];
    Status s = session::CheckView(v, env_->options.max_message_bytes);
    if (!s.ok()) {
      return s.WithContext(Where() + "FeedViews: input " + std::to_string(k) +
                           " ('" + def_.inputs[k] + "'): ");
    }
    parts[k] = FeedPart{k, nullptr, nullptr, &info, &v, nullptr};
    if (v.bytes == 0) continue;
    std::shared_ptr<const void> reg = env_->host_memory->Find(v.data, v.bytes);
    if (!reg) continue;  // not registered: copied
    holds[k] = std::make_shared<ViewHold>(ViewHold{v.keep, std::move(reg)});
    parts[k].zero_copy = &holds[k];
  }
  return FeedPartsCall(parts, info.transaction_id, timeout_ms);
}

}  // namespace hflow
