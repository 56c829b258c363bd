// GraphState's feed side: FeedData (all inputs or the ones its indexes
// name), FeedMessages, FeedRawData and the end-of-stream-only feed, all
// turned into "parts" (one message for one input) and routed as one
// transaction (see graph_state.h; the batch feed is in
// graph_state_batch.cc).
//
// Thread-safety: as documented in graph_state.h (feed_mu_ orders feeders,
// so a transaction's parts are never interleaved with another's).
#include <array>
#include <chrono>
#include <cstring>
#include <optional>

#include "flow_func/mbuf_msg.h"
#include "session/graph_state.h"

namespace hflow {
using session::FeedPart;

Status GraphState::EnsureBuilt() {
  if (built_.load(std::memory_order_acquire)) return Status::OK();
  Status s = Build();
  return s.ok() ? s : s.WithContext("building on first feed: ");
}

Status GraphState::Select(const char* call, const char* side,
                          const std::vector<uint32_t>* indexes, size_t count,
                          std::vector<uint32_t>* out) const {
  out->clear();
  if (indexes == nullptr || indexes->empty()) {
    for (uint32_t k = 0; k < count; ++k) out->push_back(k);
    return Status::OK();
  }
  std::vector<bool> seen(count);
  for (uint32_t k : *indexes) {
    if (k >= count) {
      return Status::InvalidArgument(
          Where() + call + ": index " + std::to_string(k) +
          " is out of range; the graph has " + std::to_string(count) + " " +
          side + "s" +
          (count == 0 ? std::string()
                      : " (0.." + std::to_string(count - 1) + ")"));
    }
    if (seen[k]) {
      return Status::InvalidArgument(Where() + call + ": " + side + " index " +
                                     std::to_string(k) +
                                     " is given twice; name each once");
    }
    seen[k] = true;
  }
  *out = *indexes;
  return Status::OK();
}

Status GraphState::CheckCount(const char* call, const char* what,
                              const std::vector<uint32_t>* indexes,
                              size_t given) const {
  if (indexes != nullptr && !indexes->empty()) {
    if (indexes->size() == given) return Status::OK();
    return Status::InvalidArgument(Where() + call + " got " +
                                   std::to_string(indexes->size()) +
                                   " indexes for " + std::to_string(given) +
                                   " " + what + "; give one index per item");
  }
  if (given == def_.inputs.size()) return Status::OK();
  std::string names;
  for (const auto& n : def_.inputs) names += (names.empty() ? "" : ", ") + n;
  return Status::InvalidArgument(
      Where() + call + " got " + std::to_string(given) + " " + what + " for " +
      std::to_string(def_.inputs.size()) + " inputs (" + names +
      "); give one per input, or indexes naming the inputs fed");
}

int32_t GraphState::InputDevice(size_t k, uint64_t trans) const {
  return input_routes_[k] != nullptr && !input_routes_[k]->empty()
             ? router_->FirstDeviceOf(*input_routes_[k], trans)
             : input_devices_[k];
}

// A transaction's inputs made on one device hold their blocks until all of
// them are in, so together they must fit in what a feed may use of that
// device's pool: the pool less the reserve a feed leaves free (Note
// [Waiting for memory] in services/memory_group.cc). More could never fit,
// and would wait forever with a timeout of -1: it is refused at once.
Status GraphState::CheckFeedFits(const FeedPart* parts, size_t n,
                                 uint64_t trans) const {
  const uint64_t pool = env_->options.mbuf_pool_bytes;
  const uint64_t reserve = deployment_->FeedWait(-1).keep_free;
  const uint64_t room = pool > reserve ? pool - reserve : 0;
  for (size_t i = 0; i < n; ++i) {
    if (input_devices_[parts[i].input] < 0) continue;
    const int32_t d = InputDevice(parts[i].input, trans);
    uint64_t sum = 0;
    for (size_t j = 0; j < n; ++j) {
      const uint32_t k = parts[j].input;
      // A zero-copy view takes nothing from the pool.
      if (input_devices_[k] >= 0 && InputDevice(k, trans) == d &&
          parts[j].zero_copy == nullptr) {
        sum += session::PayloadBytes(parts[j]);
      }
    }
    if (sum > room) {
      return Status::InvalidArgument(
          Where() + "FeedData: transaction " + std::to_string(trans) +
          "'s inputs on device " + std::to_string(d) + " need " +
          std::to_string(sum) +
          " bytes together, more than a feed may use "
          "of its message pool (" +
          std::to_string(room) + " of " + std::to_string(pool) +
          " bytes; two largest messages stay free for "
          "the nodes): raise Options::mbuf_pool_bytes (--mbuf-pool-bytes)");
    }
  }
  return Status::OK();
}

Status GraphState::MakeInputMbuf(const FeedPart& part, int32_t timeout_ms,
                                 uint64_t trans, services::MbufPtr* out) {
  const uint32_t k = part.input;
  if (input_devices_[k] < 0) return Status::OK();  // an unused input
  // Note [Feed onto the replica]
  // An input consumed by a replicated node used to be made on the first
  // replica's device and copied to the others' (3 of 4 messages with four
  // replicas): an allocation, a device-to-device copy and a release more
  // per message. The transaction id decides the replica before the message
  // exists, so it is made on that replica's device, as a real host would
  // DMA straight to the device that consumes it. Bound here, so the
  // allocation and the write below make no switch of their own.
  const int32_t device = InputDevice(k, trans);
  rt::ScopedDevice bound(env_->contexts.get(), device);
  HFLOW_RETURN_IF_ERROR(bound.status());
  services::ExchangeService* svc = env_->svc.get();
  services::MemoryGroup* g = deployment_->Group(device);
  // A full pool is waited out (Note [Waiting for memory] in
  // services/memory_group.cc): kTimeout when it stays full, and nothing
  // was fed.
  const services::AllocWait wait = deployment_->FeedWait(timeout_ms);
  const uint64_t bytes = session::PayloadBytes(part);
  Status s;
  if (part.zero_copy != nullptr) {  // Note [Releasing a fed view]
    s = svc->BuildHostMbuf(device, part.view->data, bytes, *part.zero_copy,
                           out);
  } else if (g != nullptr) {
    s = svc->AllocMbuf(*g, "deployer", bytes, out, wait);
  } else {
    s = svc->AllocMbuf(device, deployment_->GroupName(), "deployer", bytes, out,
                       wait);
  }
  if (s.ok()) s = session::WritePart(svc, part, trans, *out);
  if (!s.ok()) {
    return s.WithContext(Where() + "FeedData: input " + std::to_string(k) +
                         " ('" + def_.inputs[k] + "'): ");
  }
  return Status::OK();
}

Status GraphState::CheckUsable() const {
  if (removed_) return Status::NotFound(Where() + "was removed");
  if (!deployment_) {
    return Status::FailedPrecondition(
        Where() + "not built; call BuildGraph, or feed it first");
  }
  return Status::OK();
}

Status GraphState::CheckInput(uint32_t k, const Tensor& t) const {
  Status s = session::CheckTensor(t, env_->options.max_message_bytes);
  if (s.ok()) return s;
  return s.WithContext(Where() + "input " + std::to_string(k) + " ('" +
                       def_.inputs[k] + "'): ");
}

Status GraphState::CheckUserData(const FlowInfo& info) const {
  if (info.user_data.size() <= services::kMaxUserData) return Status::OK();
  return Status::InvalidArgument(Where() + "user data over 64 bytes");
}

// FeedData's and FeedDataBatch's check of every input, on the hot path:
// no vector and no string unless something is wrong.
Status GraphState::CheckFeed(const std::vector<Tensor>& inputs,
                             const FlowInfo& info) const {
  HFLOW_RETURN_IF_ERROR(
      CheckCount("FeedData", "tensors", nullptr, inputs.size()));
  HFLOW_RETURN_IF_ERROR(CheckUserData(info));
  for (uint32_t k = 0; k < inputs.size(); ++k) {
    HFLOW_RETURN_IF_ERROR(CheckInput(k, inputs[k]));
  }
  return Status::OK();
}

Status GraphState::TensorParts(const std::vector<uint32_t>& sel,
                               const std::vector<Tensor>& inputs,
                               const FlowInfo& info,
                               std::vector<FeedPart>* parts) const {
  HFLOW_RETURN_IF_ERROR(CheckUserData(info));
  parts->clear();
  for (size_t i = 0; i < inputs.size(); ++i) {
    HFLOW_RETURN_IF_ERROR(CheckInput(sel[i], inputs[i]));
    parts->push_back(FeedPart{sel[i], &inputs[i], nullptr, &info});
  }
  return Status::OK();
}

// Bound once per call, the service calls find their device bound (usually
// all inputs live on one device); the caller's binding comes back when the
// call returns.
void GraphState::BindFeed(std::optional<rt::ScopedDevice>* bound) {
  for (int32_t d : input_devices_) {
    if (d >= 0) {
      bound->emplace(env_->contexts.get(), d);
      return;
    }
  }
}

Status GraphState::Feed(const std::vector<uint32_t>* indexes,
                        const std::vector<Tensor>& inputs, const FlowInfo& info,
                        int32_t timeout_ms) {
  HFLOW_RETURN_IF_ERROR(EnsureBuilt());
  if (inputs.empty() && (indexes == nullptr || indexes->empty())) {
    return FeedEos(info, timeout_ms);
  }
  if (indexes == nullptr || indexes->empty()) {
    // The common case: every input, no index vector, no part vector.
    std::shared_lock<std::shared_mutex> life(life_mu_);
    HFLOW_RETURN_IF_ERROR(CheckUsable());
    HFLOW_RETURN_IF_ERROR(CheckFeed(inputs, info));
    // All inputs of one transaction are routed together, so concurrent
    // feeders never interleave their inputs.
    std::lock_guard<std::mutex> lock(feed_mu_);
    std::optional<rt::ScopedDevice> bound;
    BindFeed(&bound);
    return FeedLocked(inputs, info, timeout_ms);
  }
  HFLOW_RETURN_IF_ERROR(
      CheckCount("FeedData", "tensors", indexes, inputs.size()));
  std::vector<uint32_t> sel;
  HFLOW_RETURN_IF_ERROR(
      Select("FeedData", "input", indexes, def_.inputs.size(), &sel));
  std::vector<FeedPart> parts;
  HFLOW_RETURN_IF_ERROR(TensorParts(sel, inputs, info, &parts));
  return FeedPartsCall(parts, info.transaction_id, timeout_ms);
}

Status GraphState::FeedEos(const FlowInfo& info, int32_t timeout_ms) {
  if ((info.flags & kFlowFlagEos) == 0) {
    return Status::InvalidArgument(
        Where() +
        "FeedData got no tensors; a feed without data is an end-of-stream "
        "marker: set kFlowFlagEos in FlowInfo::flags (or feed one tensor "
        "per input)");
  }
  HFLOW_RETURN_IF_ERROR(CheckUserData(info));
  Message empty;
  empty.empty = true;
  empty.info = info;
  std::vector<FeedPart> parts;
  for (uint32_t k = 0; k < def_.inputs.size(); ++k) {
    parts.push_back(FeedPart{k, nullptr, &empty, nullptr});
  }
  return FeedPartsCall(parts, info.transaction_id, timeout_ms);
}

Status GraphState::FeedMessages(const std::vector<uint32_t>& indexes,
                                const std::vector<Message>& inputs,
                                int32_t timeout_ms) {
  HFLOW_RETURN_IF_ERROR(EnsureBuilt());
  if (!inputs.empty() || !indexes.empty()) {
    HFLOW_RETURN_IF_ERROR(
        CheckCount("FeedMessages", "messages", &indexes, inputs.size()));
  }
  std::vector<uint32_t> sel;
  HFLOW_RETURN_IF_ERROR(
      Select("FeedMessages", "input", &indexes, def_.inputs.size(), &sel));
  if (inputs.empty()) {
    return Status::InvalidArgument(Where() +
                                   "FeedMessages got no messages; feed at "
                                   "least one (an empty one for EOS only)");
  }
  uint64_t trans = 0;
  std::vector<FeedPart> parts;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const uint32_t k = sel[i];
    const Message& m = inputs[i];
    HFLOW_RETURN_IF_ERROR(session::CheckMessage(
        m, env_->options.max_message_bytes,
        Where() + "FeedMessages: input " + std::to_string(k) + " ('" +
            def_.inputs[k] + "'): "));
    const uint64_t t = m.info.transaction_id;
    if (t != 0 && trans != 0 && t != trans) {
      return Status::InvalidArgument(
          Where() + "FeedMessages: the messages carry transaction ids " +
          std::to_string(trans) + " and " + std::to_string(t) +
          "; one call feeds one transaction (give them one id, or 0)");
    }
    if (t != 0) trans = t;
    parts.push_back(FeedPart{k, nullptr, &m, nullptr});
  }
  return FeedPartsCall(parts, trans, timeout_ms);
}

Status GraphState::FeedRaw(const std::vector<RawData>& pieces, uint32_t index,
                           const FlowInfo& info, int32_t timeout_ms) {
  HFLOW_RETURN_IF_ERROR(EnsureBuilt());
  if (pieces.empty()) return FeedEos(info, timeout_ms);
  std::vector<uint32_t> sel;
  const std::vector<uint32_t> one{index};
  HFLOW_RETURN_IF_ERROR(
      Select("FeedRawData", "input", &one, def_.inputs.size(), &sel));
  Message m;
  m.msg_type = kMsgTypeRawData;
  m.info = info;
  size_t total = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].data == nullptr && pieces[i].len > 0) {
      return Status::InvalidArgument(
          Where() + "FeedRawData: piece " + std::to_string(i) + " has " +
          std::to_string(pieces[i].len) + " bytes at a null address");
    }
    total += pieces[i].len;
  }
  m.raw.resize(total);
  size_t at = 0;
  for (const RawData& p : pieces) {
    if (p.len > 0) std::memcpy(m.raw.data() + at, p.data, p.len);
    at += p.len;
  }
  HFLOW_RETURN_IF_ERROR(session::CheckMessage(
      m, env_->options.max_message_bytes,
      Where() + "FeedRawData: input " + std::to_string(index) + " ('" +
          def_.inputs[index] + "'): "));
  return FeedPartsCall({FeedPart{index, nullptr, &m, nullptr}},
                       info.transaction_id, timeout_ms);
}

Status GraphState::FeedPartsCall(const std::vector<FeedPart>& parts,
                                 uint64_t trans, int32_t timeout_ms) {
  std::shared_lock<std::shared_mutex> life(life_mu_);
  HFLOW_RETURN_IF_ERROR(CheckUsable());
  std::lock_guard<std::mutex> lock(feed_mu_);
  std::optional<rt::ScopedDevice> bound;
  BindFeed(&bound);
  if (trans == 0) trans = next_trans_.fetch_add(1);
  return FeedParts(parts.data(), parts.size(), trans, timeout_ms);
}

Status GraphState::FeedLocked(const std::vector<Tensor>& inputs,
                              const FlowInfo& info, int32_t timeout_ms) {
  const uint64_t trans =
      info.transaction_id != 0 ? info.transaction_id : next_trans_.fetch_add(1);
  // Most graphs have a few inputs: their parts live on the stack.
  std::array<FeedPart, 4> few;
  std::vector<FeedPart> many;
  FeedPart* parts = few.data();
  if (inputs.size() > few.size()) {
    many.resize(inputs.size());
    parts = many.data();
  }
  for (uint32_t k = 0; k < inputs.size(); ++k) {
    parts[k] = FeedPart{k, &inputs[k], nullptr, &info};
  }
  return FeedParts(parts, inputs.size(), trans, timeout_ms);
}

Status GraphState::FeedParts(const FeedPart* parts, size_t n, uint64_t trans,
                             int32_t timeout_ms) {
  const auto t0 = timeout_ms > 0 ? Clock::now() : Clock::time_point{};
  if (n > 1) HFLOW_RETURN_IF_ERROR(CheckFeedFits(parts, n, trans));
  MbufSlots slots(n);
  services::MbufPtr* mbufs = slots.data();
  size_t targets = 0;
  for (size_t i = 0; i < n; ++i) {
    HFLOW_RETURN_IF_ERROR(
        MakeInputMbuf(parts[i], Remaining(timeout_ms, t0), trans, &mbufs[i]));
    const auto* routes = input_routes_[parts[i].input];
    targets += routes == nullptr ? 0 : routes->size();
  }
  timeout_ms = Remaining(timeout_ms, t0);
  if (targets > 1) return FeedWhole(parts, mbufs, n, trans, timeout_ms);
  // At most one queue to fill (inputs nothing consumes are skipped).
  for (size_t i = 0; i < n; ++i) {
    const auto* routes = input_routes_[parts[i].input];
    if (!mbufs[i] || routes == nullptr) continue;
    Status s = router_->RouteTo(*routes, mbufs[i], timeout_ms);
    if (!s.ok()) return s.WithContext(Where() + "FeedData: ");
  }
  return Status::OK();
}

// Note [A transaction goes in whole]
// A transaction that reaches some of its queues but not others breaks the
// graph for good: a node pairing its inputs waits for the missing one while
// it sets aside every later message of the others, and graph outputs
// fetched together pair one transaction's output with the next one's (more
// so when the caller feeds the transaction again). So a feed with several
// target queues (several inputs, or one input for several nodes) first
// makes every copy across devices, then waits until every target queue has
// room, and only then puts the messages in: a timeout or a full memory
// group leaves nothing behind, and the caller may feed again. The room
// stays because only this feeder adds to these queues: feed_mu_ orders
// feeders, validation makes every graph output a node output (so graph
// inputs feed node-input queues only), executors deliver node outputs only,
// and a fetch's PutBack and DeliverException touch output queues only.
// Every target must have room at once, so a graph whose node drains one
// input only once another input got the same transaction (a batching input
// next to a plain one) needs queues deep enough for that. An enqueue that
// still fails part way (a queue closed by a lost device, a runtime error)
// fails the graph as a whole (Note [Failing a graph] in deployer.cc).
Status GraphState::FeedWhole(const FeedPart* parts, services::MbufPtr* mbufs,
                             size_t n, uint64_t trans, int32_t timeout_ms) {
  const auto t0 = timeout_ms > 0 ? Clock::now() : Clock::time_point{};
  exec::Router::Prepared sends;
  for (size_t i = 0; i < n; ++i) {
    const auto* routes = input_routes_[parts[i].input];
    if (!mbufs[i] || routes == nullptr) continue;
    Status s =
        router_->Prepare(*routes, mbufs[i], &sends, Remaining(timeout_ms, t0));
    if (!s.ok()) return s.WithContext(Where() + "FeedData: ");
  }
  for (const auto& [qi, m] : sends) {
    Status s = deployment_->queue(qi)->WaitForRoom(Remaining(timeout_ms, t0));
    if (!s.ok()) return s.WithContext(Where() + "FeedData: ");
  }
  for (size_t i = 0; i < sends.size(); ++i) {
    Status s = router_->Deliver(sends[i].first, sends[i].second,
                                Remaining(timeout_ms, t0));
    if (s.ok()) continue;
    if (i == 0) return s.WithContext(Where() + "FeedData: ");
    s = s.WithContext(Where() + "FeedData: transaction " +
                      std::to_string(trans) +
                      " went in part way, so the graph fails: ");
    deployment_->Fail(s);
    return s;
  }
  return Status::OK();
}

}  // namespace hflow
