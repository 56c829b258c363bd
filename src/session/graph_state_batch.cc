// GraphState::FeedBatch / FetchBatch: many transactions per call (see
// Session::FeedDataBatch). They keep FeedData's and FetchData's guarantees
// (a transaction's inputs routed together, its outputs taken together,
// nothing lost on error) and pay the per-call costs once: lookup, life
// lock, feed/fetch lock and device binding, and on a single-output graph
// one queue lock for every transaction already waiting.
//
// Thread-safety: as Feed and Fetch (graph_state.h).
#include <algorithm>

#include "session/graph_state.h"

namespace hflow {
Status GraphState::FeedBatch(const std::vector<std::vector<Tensor>>& batch,
                             const std::vector<FlowInfo>& infos,
                             int32_t timeout_ms, size_t* fed) {
  *fed = 0;
  HFLOW_RETURN_IF_ERROR(EnsureBuilt());
  std::shared_lock<std::shared_mutex> life(life_mu_);
  HFLOW_RETURN_IF_ERROR(CheckUsable());
  if (!infos.empty() && infos.size() != batch.size()) {
    return Status::InvalidArgument(
        Where() + "FeedDataBatch got " + std::to_string(infos.size()) +
        " infos for " + std::to_string(batch.size()) +
        " transactions; pass none or one per transaction");
  }
  // Every transaction is checked before any is fed: bad input feeds nothing.
  static const FlowInfo kNoInfo;
  for (size_t i = 0; i < batch.size(); ++i) {
    Status s = CheckFeed(batch[i], infos.empty() ? kNoInfo : infos[i]);
    if (!s.ok()) {
      return s.WithContext("FeedDataBatch transaction " + std::to_string(i) +
                           ": ");
    }
  }
  std::lock_guard<std::mutex> lock(feed_mu_);
  std::optional<rt::ScopedDevice> bound;
  BindFeed(&bound);
  const auto t0 = timeout_ms > 0 ? Clock::now() : Clock::time_point{};
  for (size_t i = 0; i < batch.size(); ++i) {
    Status s = FeedLocked(batch[i], infos.empty() ? kNoInfo : infos[i],
                          Remaining(timeout_ms, t0));
    if (!s.ok()) {
      return s.WithContext("FeedDataBatch: " + std::to_string(i) + " of " +
                           std::to_string(batch.size()) +
                           " transactions fed: ");
    }
    ++*fed;
  }
  return Status::OK();
}

Status GraphState::FetchBatch(size_t max,
                              std::vector<std::vector<Tensor>>* outputs,
                              std::vector<FlowInfo>* infos,
                              int32_t timeout_ms) {
  if (max == 0) {
    return Status::InvalidArgument(Where() +
                                   "FetchDataBatch: max must be at least 1");
  }
  std::shared_lock<std::shared_mutex> life(life_mu_);
  HFLOW_RETURN_IF_ERROR(CheckUsable());
  std::lock_guard<std::mutex> lock(fetch_mu_);
  std::optional<rt::ScopedDevice> bound;
  BindFetch(&bound);
  const size_t n = output_queues_.size();
  // The first transaction is waited for; the rest are what is ready now.
  std::vector<services::MbufPtr> got(n);
  Status taken = TakeOutputs(got.data(), timeout_ms);
  if (taken.code() == StatusCode::kNotAligned) {
    // An unaligned transaction comes back alone, with its status.
    outputs->resize(1);
    infos->resize(1);
    Status s = ReadOutputs(got.data(), &(*outputs)[0], &(*infos)[0]);
    if (s.ok()) return taken;
    PutBack(got.data(), 1);
    outputs->clear();
    infos->clear();
    return s;
  }
  HFLOW_RETURN_IF_ERROR(taken);
  got.reserve(n * std::min(max, 1 + output_queues_[0]->Size()));
  // The bulk take skips the matcher: not with exception catch, whose
  // raised transactions the matcher drops.
  if (n == 1 && matcher_->held() == 0 && !matcher_->drops_raised()) {
    size_t taken = 0;  // a failed take takes nothing: the next call reports
    (void)env_->svc->DequeueUpTo(*output_queues_[0], max - 1, &got, &taken);
  } else {
    // Only this fetcher takes from these queues (fetch_mu_): whole
    // transactions that are ready now, paired as FetchData pairs them.
    std::vector<services::MbufPtr> next(n);
    while (got.size() / n < max && matcher_->TakeReady(next.data())) {
      for (auto& m : next) got.push_back(std::move(m));
    }
  }
  const size_t count = got.size() / n;
  outputs->resize(count);
  infos->resize(count);
  for (size_t t = 0; t < count; ++t) {
    Status s = ReadOutputs(&got[t * n], &(*outputs)[t], &(*infos)[t]);
    if (!s.ok()) {
      // This one and the rest go back in order; what was read is returned.
      PutBack(&got[t * n], count - t);
      outputs->resize(t);
      infos->resize(t);
      if (t == 0) return s;
      break;
    }
  }
  return Status::OK();
}

}  // namespace hflow
