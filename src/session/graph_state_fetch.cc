// GraphState's fetch side: FetchData's and FetchViews' path (one
// transaction's outputs, paired by OutputMatcher, read into the caller's
// tensors or views) and what a
// failed result says (see graph_state.h; the batch fetch is in
// graph_state_batch.cc).
//
// Thread-safety: as documented in graph_state.h (fetch_mu_ serialises
// fetchers).
#include <optional>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "session/graph_state.h"
#include "session/host_message.h"

namespace hflow {

template <typename Out, typename Read>
Status GraphState::FetchWith(const std::vector<uint32_t>* indexes,
                             std::vector<Out>* outputs, FlowInfo* info,
                             int32_t timeout_ms, Read read) {
  std::shared_lock<std::shared_mutex> life(life_mu_);
  HFLOW_RETURN_IF_ERROR(CheckUsable());
  std::vector<uint32_t> picked;
  const std::vector<uint32_t>* sel = &matcher_->all();
  if (indexes != nullptr && !indexes->empty()) {
    HFLOW_RETURN_IF_ERROR(
        Select("FetchData", "output", indexes, def_.outputs.size(), &picked));
    sel = &picked;
  }
  // One message per output of one transaction, taken together.
  std::lock_guard<std::mutex> lock(fetch_mu_);
  std::optional<rt::ScopedDevice> bound;
  BindFetch(&bound);
  MbufSlots slots(sel->size());
  services::MbufPtr* got = slots.data();
  Status taken = TakeOutputs(*sel, got, timeout_ms);
  if (!taken.ok() && taken.code() != StatusCode::kNotAligned) return taken;
  Status s = ReadOutputsWith(*sel, got, outputs, info, read);
  if (!s.ok()) matcher_->PutBack(*sel, got, 1);
  return s.ok() ? taken : s;
}

Status GraphState::Fetch(const std::vector<uint32_t>* indexes,
                         std::vector<Tensor>* outputs, FlowInfo* info,
                         int32_t timeout_ms) {
  return FetchWith(indexes, outputs, info, timeout_ms, session::ReadTensor);
}

Status GraphState::FetchViews(std::vector<TensorView>* outputs, FlowInfo* info,
                              int32_t timeout_ms) {
  return FetchWith(nullptr, outputs, info, timeout_ms, session::ReadView);
}

Status GraphState::FetchMessages(const std::vector<uint32_t>& indexes,
                                 std::vector<Message>* outputs,
                                 int32_t timeout_ms) {
  std::shared_lock<std::shared_mutex> life(life_mu_);
  HFLOW_RETURN_IF_ERROR(CheckUsable());
  std::vector<uint32_t> sel;
  HFLOW_RETURN_IF_ERROR(
      Select("FetchMessages", "output", &indexes, def_.outputs.size(), &sel));
  std::lock_guard<std::mutex> lock(fetch_mu_);
  std::optional<rt::ScopedDevice> bound;
  BindFetch(&bound);
  std::vector<services::MbufPtr> got(sel.size());
  Status taken = TakeOutputs(sel, got.data(), timeout_ms);
  if (!taken.ok() && taken.code() != StatusCode::kNotAligned) return taken;
  outputs->resize(sel.size());
  for (size_t j = 0; j < sel.size(); ++j) {
    Message& out = (*outputs)[j];
    if (!got[j]) {  // not aligned: this output did not come
      out = Message{};
      out.empty = true;
      continue;
    }
    Status s = session::ReadMessage(env_->svc.get(), got[j], &out);
    if (!s.ok()) {
      matcher_->PutBack(sel, got.data(), 1);  // nothing lost
      outputs->clear();
      return s.WithContext(Where() + "FetchMessages: reading output " +
                           std::to_string(sel[j]) + ": ");
    }
    if (out.info.ret_code != 0) {
      out.info.error_node = ErrorNodeOf(got[j]->head(), sel[j]);
      out.info.raised_exception =
          IsRaised(got[j]->head().trans_id, out.info.ret_code);
    }
  }
  return taken;
}

bool GraphState::IsRaised(uint64_t trans, int32_t code) {
  std::lock_guard<std::mutex> lock(exc_mu_);
  auto it = raised_.find(trans);
  return it != raised_.end() && it->second == code;
}

void GraphState::BindFetch(std::optional<rt::ScopedDevice>* bound) {
  if (!output_queues_.empty()) {
    bound->emplace(env_->contexts.get(), output_queues_[0]->device());
  }
}

void GraphState::PutBack(services::MbufPtr* got, size_t transactions) {
  matcher_->PutBack(got, transactions);
}

Status GraphState::TakeOutputs(const std::vector<uint32_t>& sel,
                               services::MbufPtr* got, int32_t timeout_ms) {
  Status s = matcher_->Take(sel, got, timeout_ms);
  return s.ok() ? s : s.WithContext(Where() + "FetchData: ");
}

// The node that failed: the one the error message names, or else (a UDF
// that set a ret code on its own output) the node producing output k.
std::string GraphState::ErrorNodeOf(const services::MbufHead& h,
                                    size_t k) const {
  const auto& nodes = deployment_->plan().graph.nodes;
  if (h.error_node > 0 && h.error_node <= nodes.size()) {
    return nodes[h.error_node - 1].name;
  }
  return def_.outputs[k].op;
}

template <typename Out, typename Read>
Status GraphState::ReadOutputsWith(const std::vector<uint32_t>& sel,
                                   services::MbufPtr* got,
                                   std::vector<Out>* outputs, FlowInfo* info,
                                   Read read) {
  const size_t n = sel.size();
  // The first output there is (all are, unless the set is not aligned).
  size_t first = 0;
  while (first + 1 < n && !got[first]) ++first;
  session::ReadFlowInfo(got[first]->head(), info);
  info->ret_code = 0;
  info->error_node.clear();
  info->raised_exception = false;
  outputs->resize(n);
  for (size_t j = 0; j < n; ++j) {
    if (!got[j]) {  // not aligned: this output did not come
      (*outputs)[j] = Out{};
      (*outputs)[j].shape = {0};
      continue;
    }
    const services::MbufHead& h = got[j]->head();
    info->flags |= h.flags;  // an EOS on any output ends the transaction
    if (h.ret_code != 0 && info->ret_code == 0) {
      info->ret_code = h.ret_code;
      info->error_node = ErrorNodeOf(h, sel[j]);
      info->raised_exception = IsRaised(h.trans_id, h.ret_code);
    }
    Status s = read(env_->svc.get(), got[j], &(*outputs)[j]);
    if (!s.ok()) {
      // The outputs could not be read: the caller puts them back, so the
      // error loses no transaction and a later fetch can take them again.
      outputs->clear();
      *info = FlowInfo{};
      return s.WithContext(Where() + "FetchData: reading output " +
                           std::to_string(sel[j]) + ": ");
    }
  }
  return Status::OK();
}

Status GraphState::ReadOutputs(const std::vector<uint32_t>& sel,
                               services::MbufPtr* got,
                               std::vector<Tensor>* outputs, FlowInfo* info) {
  return ReadOutputsWith(sel, got, outputs, info, session::ReadTensor);
}

}  // namespace hflow
