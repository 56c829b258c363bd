// OutputMatcher: takes one message per graph output *of one transaction*
// for FetchData. A graph's outputs may come from different nodes, and a
// replicated node returns its messages in the order its replicas finish, so
// the heads of the output queues need not belong to the same transaction.
// The matcher pairs them by transaction id (and data label: the cells of
// a balanced transaction pair cell by cell), holding back messages that came
// early until their partners arrive (Note [Pairing outputs] in the .cc).
//
// Thread-safety: none; the owner serialises every call (GraphState's
// fetch_mu_). The queues must outlive it.
#ifndef HFLOW_SESSION_OUTPUT_MATCHER_H_
#define HFLOW_SESSION_OUTPUT_MATCHER_H_

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hflow/status.h"
#include "services/exchange_service.h"

namespace hflow {
namespace session {

// Input alignment (FlowGraph::SetInputsAlignAttrs; Note [Aligning with
// limits] in the .cc). max_cache 0: off (pairing waits as long as the
// fetch, bounded by the hold limit).
struct AlignLimits {
  uint32_t max_cache = 0;
  int32_t timeout_ms = -1;  // -1: no timeout
  bool dropout = false;
  bool on() const { return max_cache > 0; }
};

class OutputMatcher {
 public:
  // `names[k]` says what output k is ("node:i") in error messages;
  // `hold_limit[k]` bounds the messages held back for output k.
  OutputMatcher(services::ExchangeService* svc,
                std::vector<services::DeviceQueue*> queues,
                std::vector<std::string> names, std::vector<size_t> hold_limit,
                AlignLimits align = {});

  size_t outputs() const { return queues_.size(); }
  // What messages pair by: (transaction id, data label).
  using PairKey = std::pair<uint64_t, uint32_t>;

  // Output indexes, in the order a fetch returns them (each at most once).
  using Selection = std::vector<uint32_t>;
  // Every output, in order.
  const Selection& all() const { return all_; }

  // Fills got[0..sel.size()) (all empty) with one transaction's messages of
  // the outputs `sel` names, waiting up to `timeout_ms` (-1 forever, 0
  // try). On failure got is left empty and every message taken is kept
  // for the next call. Other outputs are not touched (Note [Fetching some
  // outputs]). With alignment on, kNotAligned returns a transaction past a
  // limit with the messages it has (the others null).
  Status Take(const Selection& sel, services::MbufPtr* got, int32_t timeout_ms);
  Status Take(services::MbufPtr* got, int32_t timeout_ms) {
    return Take(all_, got, timeout_ms);
  }
  // A whole transaction of `sel` that is ready now (held or queued),
  // without waiting; false when there is none (or a queue failed: the next
  // Take reports it).
  bool TakeReady(const Selection& sel, services::MbufPtr* got);
  bool TakeReady(services::MbufPtr* got) { return TakeReady(all_, got); }
  // Gives back `sets` transactions of `sel` taken in order
  // (got[0..sets*sel.size())), so they come out again first, in order.
  void PutBack(const Selection& sel, services::MbufPtr* got, size_t sets);
  void PutBack(services::MbufPtr* got, size_t sets) {
    PutBack(all_, got, sets);
  }
  // Exception catch (Note [Dropping a raised transaction] in the .cc):
  // `raised(t, &code)` says whether transaction t was raised, with which
  // exception code. Its messages other than the exception's are dropped.
  // Called with no lock of the matcher's owner held, from fetch threads.
  using RaisedFn = std::function<bool(uint64_t trans, int32_t* code)>;
  void SetRaised(RaisedFn raised) { raised_ = std::move(raised); }
  bool drops_raised() const { return static_cast<bool>(raised_); }
  // Messages dropped because their transaction was raised.
  uint64_t dropped_raised() const { return dropped_raised_; }

  // Messages held back at the moment (all outputs).
  size_t held() const;
  // Drops everything held (the graph is going away).
  void Clear();

 private:
  // Moves the oldest complete transaction of `sel` held into got.
  bool FindComplete(const Selection& sel, services::MbufPtr* got);
  // Moves what the queues of `sel` hold now into held_ (within the
  // limits); true when anything moved.
  bool DrainReady(const Selection& sel);
  // The output to wait on next: the first of `sel` that lacks the oldest
  // held transaction of sel[0] (or sel[0] itself when it holds nothing).
  uint32_t NextToWait(const Selection& sel) const;
  Status HoldLimitError(const Selection& sel, uint32_t k) const;
  // Holds `m`, taken from output k's queue (or drops it: a raised
  // transaction's data).
  void Hold(uint32_t k, services::MbufPtr m);
  // Drops every held message of raised transaction t but its exception's.
  void DropRaised(uint64_t t, int32_t code);
  // Forgets when transaction t arrived once no message of it is held.
  void ForgetIfGone(const PairKey& t);
  bool HeldIn(const Selection& sel, const PairKey& t) const;
  // Alignment: the oldest incomplete transaction of `sel` past a limit is
  // dropped (1) or moved into got with *s = kNotAligned (2); 0: none is.
  int TakeUnaligned(const Selection& sel, services::MbufPtr* got, Status* s);
  // Alignment: ms until the oldest incomplete transaction of `sel` times
  // out (0: already; -1: none will).
  int32_t UntilExpiry(const Selection& sel) const;

  services::ExchangeService* const svc_;
  const std::vector<services::DeviceQueue*> queues_;
  const std::vector<std::string> names_;
  const std::vector<size_t> limit_;
  Selection all_;
  const AlignLimits align_;
  // With alignment on: when the first message of each held transaction
  // arrived.
  std::map<PairKey, std::chrono::steady_clock::time_point> first_seen_;
  // Per output, messages taken from its queue and not yet returned, in the
  // order they arrived.
  std::vector<std::deque<services::MbufPtr>> held_;
  RaisedFn raised_;
  uint64_t dropped_raised_ = 0;
};

}  // namespace session
}  // namespace hflow

#endif  // HFLOW_SESSION_OUTPUT_MATCHER_H_
