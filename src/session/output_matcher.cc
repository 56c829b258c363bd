// OutputMatcher (see output_matcher.h).
// Thread-safety: none (the owner serialises calls).
#include "session/output_matcher.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace hflow {
namespace session {
namespace {

using Clock = std::chrono::steady_clock;

int32_t Remaining(int32_t timeout_ms, Clock::time_point t0) {
  if (timeout_ms <= 0) return timeout_ms;
  auto spent =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0)
          .count();
  return spent >= timeout_ms ? 0 : static_cast<int32_t>(timeout_ms - spent);
}

// Pairing key: the transaction and, for the cells of a balanced
// transaction, the data label (GE's aligner keys by both).
OutputMatcher::PairKey TransOf(const services::MbufPtr& m) {
  return {m->head().trans_id, m->head().data_label};
}

std::string KeyText(const OutputMatcher::PairKey& k) {
  return "transaction " + std::to_string(k.first) +
         (k.second == 0 ? "" : " cell " + std::to_string(k.second));
}

}  // namespace

// Note [Pairing outputs]
// FetchData returns one message per graph output, and they must belong to
// one transaction: taking the head of every output queue pairs transaction
// 128's output 0 with 129's output 1 as soon as one output's node is
// replicated (its replicas finish out of order) or two output nodes run at
// different speeds. So messages are matched by transaction id: a message
// taken from a queue is held until every other output has one of the same
// transaction, and the oldest complete transaction (in the order output 0
// received them) is returned. In the common case every queue's head is the
// same transaction and nothing waits in the holding area longer than one
// call. Waiting is on one queue at a time: the first output that lacks the
// oldest transaction held for output 0 (never a poll); before each wait,
// one message per non-empty queue moves over, so a transaction completed
// by another queue is not stuck behind that wait.
//
// Held messages are out of their queues, so they do not hold back their
// producers; the hold is bounded per output (hold_limit, a few queue
// depths) so that a graph whose outputs do not carry the same transactions
// (a node that emits on one output only) fails the fetch with an error
// saying so instead of growing without bound. Nothing is lost on a timeout
// or an error: held messages stay for the next call, and a fetch whose
// outputs could not be read gives them back (PutBack) to come out first.
OutputMatcher::OutputMatcher(services::ExchangeService* svc,
                             std::vector<services::DeviceQueue*> queues,
                             std::vector<std::string> names,
                             std::vector<size_t> hold_limit, AlignLimits align)
    : svc_(svc),
      queues_(std::move(queues)),
      names_(std::move(names)),
      limit_(std::move(hold_limit)),
      align_(align),
      held_(queues_.size()) {
  for (uint32_t k = 0; k < queues_.size(); ++k) all_.push_back(k);
}

// Note [Fetching some outputs]
// A fetch may name some outputs (GE's indexed FetchDataFlowGraph); they are
// paired among themselves only, and the others are left alone: their queues
// are not drained into the holding area, so a multi-function node whose
// functions feed different outputs (transaction 1 on output 0, transaction
// 2 on output 1) is fetched one output at a time, each from its own queue,
// and messages of an output nobody fetches just wait in their queue (back-
// pressuring their producer) instead of filling the hold. What an earlier
// fetch of other outputs holds stays held for the next fetch naming them.
Status OutputMatcher::Take(const Selection& sel, services::MbufPtr* got,
                           int32_t timeout_ms) {
  const size_t n = sel.size();
  if (n == 1 && held_[sel[0]].empty() && !raised_) {
    return svc_->Dequeue(*queues_[sel[0]], &got[0], timeout_ms);
  }
  const auto t0 = timeout_ms > 0 ? Clock::now() : Clock::time_point{};
  for (;;) {
    if (FindComplete(sel, got)) return Status::OK();
    if (DrainReady(sel)) continue;
    int32_t wait = Remaining(timeout_ms, t0);
    bool capped = false;  // woken early to expire a transaction
    if (align_.on()) {
      Status s;
      const int r = TakeUnaligned(sel, got, &s);
      if (r == 2) return s;
      if (r == 1) continue;
      const int32_t expiry = UntilExpiry(sel);
      if (expiry >= 0 && (wait < 0 || expiry < wait)) {
        wait = expiry;
        capped = true;
      }
    } else {
      for (uint32_t k : sel) {
        if (held_[k].size() >= limit_[k]) return HoldLimitError(sel, k);
      }
    }
    const uint32_t k = NextToWait(sel);
    services::MbufPtr m;
    Status s = svc_->Dequeue(*queues_[k], &m, wait);
    if (s.IsTimeout() && capped) continue;
    HFLOW_RETURN_IF_ERROR(s);
    Hold(k, std::move(m));
  }
}

// Note [Dropping a raised transaction]
// With exception catch, a UDF's RaiseException(code, t) puts one exception
// message (ret code = code, transaction t) on every graph output, and GE
// then drops what it holds of t and ignores t's later data: the fetch of t
// returns the exception and nothing else. The matcher does the same: a
// message of a raised transaction that is not its exception message is
// dropped when taken from its queue, and when the exception message comes,
// what is held of t already goes. So t's exception messages pair with one
// another, and no message of t is left to pair with a later one. Data of t
// fetched before the exception was raised has been returned already.
void OutputMatcher::Hold(uint32_t k, services::MbufPtr m) {
  int32_t code = 0;
  // Raised is per transaction: every cell of it goes (the exception's
  // messages carry no data label).
  const uint64_t trans = m->head().trans_id;
  if (raised_ && raised_(trans, &code)) {
    if (m->head().ret_code != code) {
      ++dropped_raised_;
      return;  // released here
    }
    DropRaised(trans, code);
  }
  if (align_.on()) first_seen_.emplace(TransOf(m), Clock::now());
  held_[k].push_back(std::move(m));
}

void OutputMatcher::DropRaised(uint64_t t, int32_t code) {
  std::vector<PairKey> gone;
  for (auto& h : held_) {
    for (auto it = h.begin(); it != h.end();) {
      const services::MbufHead& head = (*it)->head();
      if (head.trans_id == t && head.ret_code != code) {
        gone.push_back(TransOf(*it));
        it = h.erase(it);
        ++dropped_raised_;
      } else {
        ++it;
      }
    }
  }
  for (const PairKey& k : gone) ForgetIfGone(k);
}

bool OutputMatcher::HeldIn(const Selection& sel, const PairKey& t) const {
  for (uint32_t k : sel) {
    for (const auto& m : held_[k]) {
      if (TransOf(m) == t) return true;
    }
  }
  return false;
}

void OutputMatcher::ForgetIfGone(const PairKey& t) {
  if (align_.on() && !HeldIn(all_, t)) first_seen_.erase(t);
}

// Note [Aligning with limits]
// GE's input alignment bounds what pairing may wait for: at most
// max_cache incomplete transactions are held, each for at most timeout_ms
// from its first message. Past either limit the oldest incomplete
// transaction of the outputs fetched goes: dropped with dropout (its later
// messages, if any, start a new wait), or returned as it is with
// kNotAligned, the outputs it lacks empty. Limits are checked before every
// wait, and a wait ends early when the oldest transaction's time is up, so
// a fetch with a long timeout still returns an expired transaction on time.
// Without alignment, pairing waits as long as the fetch does, within the
// hold limit.
int OutputMatcher::TakeUnaligned(const Selection& sel, services::MbufPtr* got,
                                 Status* status) {
  std::vector<std::pair<Clock::time_point, PairKey>> waiting;
  for (const auto& [t, at] : first_seen_) {
    if (HeldIn(sel, t)) waiting.push_back({at, t});
  }
  if (waiting.empty()) return 0;
  std::sort(waiting.begin(), waiting.end());
  const Clock::time_point at = waiting.front().first;
  const PairKey victim = waiting.front().second;
  std::string why;
  if (align_.timeout_ms >= 0 &&
      Clock::now() - at >= std::chrono::milliseconds(align_.timeout_ms)) {
    why =
        "did not come on every output fetched within the alignment "
        "timeout of " +
        std::to_string(align_.timeout_ms) + " ms";
  } else if (waiting.size() > align_.max_cache) {
    why = "is the oldest of " + std::to_string(waiting.size()) +
          " incomplete transactions, more than the alignment cache of " +
          std::to_string(align_.max_cache);
  } else {
    return 0;
  }
  std::string missing;
  for (size_t j = 0; j < sel.size(); ++j) {
    auto& h = held_[sel[j]];
    auto it = std::find_if(h.begin(), h.end(), [&](const services::MbufPtr& m) {
      return TransOf(m) == victim;
    });
    if (it == h.end()) {
      missing += (missing.empty() ? "" : ", ") + names_[sel[j]];
      continue;
    }
    got[j] = std::move(*it);
    h.erase(it);
  }
  ForgetIfGone(victim);
  if (align_.dropout) {
    for (size_t j = 0; j < sel.size(); ++j) got[j].reset();
    return 1;
  }
  *status =
      Status::NotAligned(KeyText(victim) + " " + why + "; missing: " + missing);
  return 2;
}

int32_t OutputMatcher::UntilExpiry(const Selection& sel) const {
  if (align_.timeout_ms < 0) return -1;
  std::optional<Clock::time_point> oldest;
  for (const auto& [t, at] : first_seen_) {
    if ((!oldest || at < *oldest) && HeldIn(sel, t)) oldest = at;
  }
  if (!oldest) return -1;
  const auto left =
      *oldest + std::chrono::milliseconds(align_.timeout_ms) - Clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
  return ms <= 0 ? 0 : static_cast<int32_t>(ms + 1);
}

bool OutputMatcher::TakeReady(const Selection& sel, services::MbufPtr* got) {
  for (;;) {
    if (FindComplete(sel, got)) return true;
    if (!DrainReady(sel)) return false;
  }
}

bool OutputMatcher::FindComplete(const Selection& sel, services::MbufPtr* got) {
  const size_t n = sel.size();
  auto& first = held_[sel[0]];
  for (size_t i = 0; i < first.size(); ++i) {
    const PairKey t = TransOf(first[i]);
    bool all = true;
    for (size_t j = 1; j < n && all; ++j) {
      all = false;
      for (const auto& m : held_[sel[j]]) {
        if (TransOf(m) == t) {
          all = true;
          break;
        }
      }
    }
    if (!all) continue;
    got[0] = std::move(first[i]);
    first.erase(first.begin() + static_cast<std::ptrdiff_t>(i));
    for (size_t j = 1; j < n; ++j) {
      auto& h = held_[sel[j]];
      for (auto it = h.begin(); it != h.end(); ++it) {
        if (TransOf(*it) == t) {
          got[j] = std::move(*it);
          h.erase(it);
          break;
        }
      }
    }
    ForgetIfGone(t);
    return true;
  }
  return false;
}

bool OutputMatcher::DrainReady(const Selection& sel) {
  bool moved = false;
  for (uint32_t k : sel) {
    if (queues_[k]->Size() == 0 || held_[k].size() >= limit_[k]) continue;
    services::MbufPtr m;
    // A failed take leaves the queue to the wait, which reports it.
    if (!svc_->Dequeue(*queues_[k], &m, 0).ok()) continue;
    Hold(k, std::move(m));
    moved = true;
  }
  return moved;
}

uint32_t OutputMatcher::NextToWait(const Selection& sel) const {
  const auto& first = held_[sel[0]];
  if (first.empty()) return sel[0];
  const PairKey t = TransOf(first.front());
  for (size_t j = 1; j < sel.size(); ++j) {
    bool has = false;
    for (const auto& m : held_[sel[j]]) has |= TransOf(m) == t;
    if (!has) return sel[j];
  }
  return sel[0];  // not reached: that transaction would be complete
}

Status OutputMatcher::HoldLimitError(const Selection& sel, uint32_t k) const {
  const uint32_t waiting_on = NextToWait(sel);
  const auto& first = held_[sel[0]];
  std::string oldest = first.empty()
                           ? "a message on output " + std::to_string(sel[0])
                           : KeyText(TransOf(first.front()));
  return Status::ResourceExhausted(
      "output " + std::to_string(k) + " ('" + names_[k] + "') holds " +
      std::to_string(held_[k].size()) +
      " messages whose transactions have not come on every other output "
      "fetched with it (waiting for " +
      oldest + " on output " + std::to_string(waiting_on) +
      "); a fetch returns one message per output of one transaction, so "
      "outputs fetched together must carry the same transactions (fetch "
      "the outputs of a node that emits on one output at a time with "
      "indexes)");
}

void OutputMatcher::PutBack(const Selection& sel, services::MbufPtr* got,
                            size_t sets) {
  const size_t n = sel.size();
  for (size_t s = sets; s-- > 0;) {
    for (size_t j = 0; j < n; ++j) {
      services::MbufPtr& m = got[s * n + j];
      if (!m) continue;
      if (align_.on()) first_seen_.emplace(TransOf(m), Clock::now());
      held_[sel[j]].push_front(std::move(m));
    }
  }
}

size_t OutputMatcher::held() const {
  size_t total = 0;
  for (const auto& h : held_) total += h.size();
  return total;
}

void OutputMatcher::Clear() {
  for (auto& h : held_) h.clear();
  first_seen_.clear();
}

}  // namespace session
}  // namespace hflow
