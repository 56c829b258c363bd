// GraphState: one graph of a session: its definition, and once built, its
// deployment and runner; feed/fetch on it. Internal to the session layer.
//
// Thread-safety: Feed and Fetch may run concurrently from many threads
// (feeds of one transaction are routed atomically under feed_mu_); Build,
// Reset and Remove exclude them (life_mu_) and each other (control_mu_).
#ifndef HFLOW_SESSION_GRAPH_STATE_H_
#define HFLOW_SESSION_GRAPH_STATE_H_

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "deploy/deployer.h"
#include "deploy/graph_def.h"
#include "exec/graph_runner.h"
#include "exec/router.h"
#include "hflow/session.h"
#include "session/environment.h"
#include "session/host_message.h"
#include "session/output_matcher.h"

namespace hflow {

// `n` mbuf slots for one transaction's inputs or outputs; one (the common
// case) needs no heap allocation.
class MbufSlots {
 public:
  explicit MbufSlots(size_t n) : many_(n > 1 ? n : 0) {}
  services::MbufPtr* data() { return many_.empty() ? &one_ : many_.data(); }

 private:
  services::MbufPtr one_;
  std::vector<services::MbufPtr> many_;
};

class GraphState {
 public:
  using Clock = std::chrono::steady_clock;

  GraphState(uint32_t id, deploy::GraphDef def, std::string deploy_file,
             std::shared_ptr<session::Environment> env);
  ~GraphState();

  Status Build();
  // Builds the graph unless it is built (FeedData builds on first use, as
  // GE does).
  Status EnsureBuilt();
  // FeedData; `indexes` null or empty: every input in order.
  Status Feed(const std::vector<uint32_t>* indexes,
              const std::vector<Tensor>& inputs, const FlowInfo& info,
              int32_t timeout_ms);
  Status FeedMessages(const std::vector<uint32_t>& indexes,
                      const std::vector<Message>& inputs, int32_t timeout_ms);
  Status FeedRaw(const std::vector<RawData>& parts, uint32_t index,
                 const FlowInfo& info, int32_t timeout_ms);
  // FetchData; `indexes` null or empty: every output in order.
  Status Fetch(const std::vector<uint32_t>* indexes,
               std::vector<Tensor>* outputs, FlowInfo* info,
               int32_t timeout_ms);
  Status FetchMessages(const std::vector<uint32_t>& indexes,
                       std::vector<Message>* outputs, int32_t timeout_ms);
  // Session::FeedViews (graph_state_views.cc) and FetchViews.
  Status FeedViews(const std::vector<TensorView>& inputs, const FlowInfo& info,
                   int32_t timeout_ms);
  Status FetchViews(std::vector<TensorView>* outputs, FlowInfo* info,
                    int32_t timeout_ms);
  // Session::FeedDataBatch / FetchDataBatch (graph_state_batch.cc).
  Status FeedBatch(const std::vector<std::vector<Tensor>>& batch,
                   const std::vector<FlowInfo>& infos, int32_t timeout_ms,
                   size_t* fed);
  Status FetchBatch(size_t max, std::vector<std::vector<Tensor>>* outputs,
                    std::vector<FlowInfo>* infos, int32_t timeout_ms);
  Status Remove();
  // Session::ResetGraph (Note [Resetting a graph] in deploy/
  // deployment_reset.cc).
  Status Reset();
  Status Reports(std::vector<DeviceReport>* out);
  // Adds this graph's submodels and queues to rows (one per device).
  void CountDeployment(std::vector<DeviceReport>* rows);
  bool built() const { return deployment_ != nullptr; }

 private:
  std::string Where() const;
  // What is left at this moment of a timeout that started at `t0`.
  static int32_t Remaining(int32_t timeout_ms, Clock::time_point t0);
  Status CheckUsable() const;  // removed, or not built
  // The inputs or outputs (`side`) a call names: `indexes` null or empty
  // means all `count` in order; each must be in range and named once.
  Status Select(const char* call, const char* side,
                const std::vector<uint32_t>* indexes, size_t count,
                std::vector<uint32_t>* out) const;
  // Whether a feed of `given` items (`what`) comes with as many indexes,
  // or, without indexes, one per graph input.
  Status CheckCount(const char* call, const char* what,
                    const std::vector<uint32_t>* indexes, size_t given) const;
  // FeedData's tensors (`sel` says each one's input) as parts, checked.
  Status TensorParts(const std::vector<uint32_t>& sel,
                     const std::vector<Tensor>& inputs, const FlowInfo& info,
                     std::vector<session::FeedPart>* parts) const;
  // An end-of-stream-only feed: an empty message with `info` per input.
  Status FeedEos(const FlowInfo& info, int32_t timeout_ms);
  Status CheckFeed(const std::vector<Tensor>& inputs,
                   const FlowInfo& info) const;
  // Input k's tensor (errors name the input), and the info's user data.
  Status CheckInput(uint32_t k, const Tensor& t) const;
  Status CheckUserData(const FlowInfo& info) const;
  void BindFeed(std::optional<rt::ScopedDevice>* bound);
  void BindFetch(std::optional<rt::ScopedDevice>* bound);
  // Routes one transaction of every input (FeedData, FeedDataBatch);
  // feed_mu_ held.
  Status FeedLocked(const std::vector<Tensor>& inputs, const FlowInfo& info,
                    int32_t timeout_ms);
  // Routes one transaction made of `parts` (each naming its input), whole
  // or not at all; feed_mu_ held.
  Status FeedParts(const session::FeedPart* parts, size_t n, uint64_t trans,
                   int32_t timeout_ms);
  // Takes the life lock, checks, binds and feeds `parts` as one
  // transaction (`trans` 0: the next id).
  Status FeedPartsCall(const std::vector<session::FeedPart>& parts,
                       uint64_t trans, int32_t timeout_ms);
  // FeedParts for a transaction with several target queues: all of them
  // or none (Note [A transaction goes in whole]).
  Status FeedWhole(const session::FeedPart* parts, services::MbufPtr* mbufs,
                   size_t n, uint64_t trans, int32_t timeout_ms);
  // One message per output `sel` names, of one transaction, into
  // got[0..sel.size()), which must be empty (waiting up to the timeout),
  // or none: nothing taken is lost on failure (Note [Pairing outputs] in
  // output_matcher.cc). fetch_mu_ held.
  Status TakeOutputs(const std::vector<uint32_t>& sel, services::MbufPtr* got,
                     int32_t timeout_ms);
  Status TakeOutputs(services::MbufPtr* got, int32_t timeout_ms) {
    return TakeOutputs(matcher_->all(), got, timeout_ms);
  }
  // Converts one transaction's outputs of `sel` (the caller puts them back
  // when this fails).
  Status ReadOutputs(const std::vector<uint32_t>& sel, services::MbufPtr* got,
                     std::vector<Tensor>* outputs, FlowInfo* info);
  Status ReadOutputs(services::MbufPtr* got, std::vector<Tensor>* outputs,
                     FlowInfo* info) {
    return ReadOutputs(matcher_->all(), got, outputs, info);
  }
  // ReadOutputs over the output type (Tensor, TensorView): `read` turns one
  // message into one output (graph_state_fetch.cc).
  template <typename Out, typename Read>
  Status ReadOutputsWith(const std::vector<uint32_t>& sel,
                         services::MbufPtr* got, std::vector<Out>* outputs,
                         FlowInfo* info, Read read);
  // FetchData and FetchViews: take one transaction and read it.
  template <typename Out, typename Read>
  Status FetchWith(const std::vector<uint32_t>* indexes,
                   std::vector<Out>* outputs, FlowInfo* info,
                   int32_t timeout_ms, Read read);
  // Returns `transactions` sets of outputs, taken in order, so they come
  // out again first, in the same order.
  void PutBack(services::MbufPtr* got, size_t transactions);
  std::string ErrorNodeOf(const services::MbufHead& h, size_t k) const;
  // Whether transaction `trans` ended with exception `code` raised (the
  // raised_ record), so a fetch can tell it from a UDF's error code.
  bool IsRaised(uint64_t trans, int32_t code);
  // The device input k's message of transaction `trans` is made on.
  int32_t InputDevice(size_t k, uint64_t trans) const;
  // Whether a transaction's inputs can ever fit in their devices' pools.
  Status CheckFeedFits(const session::FeedPart* parts, size_t n,
                       uint64_t trans) const;
  // Waits up to `timeout_ms` for pool memory.
  Status MakeInputMbuf(const session::FeedPart& part, int32_t timeout_ms,
                       uint64_t trans, services::MbufPtr* out);
  void DeliverException(const std::string& node, int32_t code, uint64_t ctx);

  const uint32_t id_;
  deploy::GraphDef def_;
  const std::string deploy_file_;
  std::shared_ptr<session::Environment> env_;
  // Feed and Fetch hold it shared for their whole call; Build and Remove
  // exclusively, so a graph is never undeployed under a running feed or
  // fetch (Remove first closes the queues to wake them).
  std::shared_mutex life_mu_;
  // Serialises Build, Reset and Remove (taken before life_mu_): each stops
  // or replaces the runner.
  std::mutex control_mu_;
  std::unique_ptr<deploy::Deployment> deployment_;
  // Routes the deployment's messages (feeds and UDF outputs); the
  // deployment keeps it too (DeployOptions::outputs).
  std::shared_ptr<exec::Router> router_;
  std::unique_ptr<exec::GraphRunner> runner_;
  // Per graph input, resolved at Build: its routes (null: unused) and the
  // device its mbufs are made on; per graph output, its queue.
  std::vector<const exec::Router::RouteTargets*> input_routes_;
  std::vector<int32_t> input_devices_;
  std::vector<services::DeviceQueue*> output_queues_;
  // Pairs the outputs by transaction id; guarded by fetch_mu_.
  std::unique_ptr<session::OutputMatcher> matcher_;
  std::mutex feed_mu_;
  std::mutex fetch_mu_;
  std::atomic<uint64_t> next_trans_{1};
  std::atomic<bool> removed_{false};
  // Set by Build once deployed (read without life_mu_ by EnsureBuilt).
  std::atomic<bool> built_{false};
  // Exceptions raised by UDFs (exception catch), delivered by Fetch.
  std::mutex exc_mu_;
  std::pair<int32_t, uint64_t> last_exception_{0, 0};
  // With exception catch: the transactions raised (their codes), the last
  // kRaisedKept of them, oldest first in raised_order_ (Note [Dropping a
  // raised transaction] in output_matcher.cc). Guarded by exc_mu_.
  static constexpr size_t kRaisedKept = 1024;
  std::map<uint64_t, int32_t> raised_;
  std::deque<uint64_t> raised_order_;
  bool has_exception_ = false;
  // How the UDFs' exception callbacks reach this graph (set by Build,
  // cleared by Remove).
  struct Callbacks {
    std::mutex mu;
    GraphState* owner = nullptr;
  };
  std::shared_ptr<Callbacks> callbacks_;
};

}  // namespace hflow

#endif  // HFLOW_SESSION_GRAPH_STATE_H_
