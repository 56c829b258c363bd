// GraphState's fetch side: FetchData's path (one transaction's outputs,
// paired by OutputMatcher, read into the caller's tensors) and what a
// failed result says (see graph_state.h; the batch fetch is in
// graph_state_batch.cc).
//
// Thread-safety: as documented in graph_state.h (fetch_mu_ serialises
// fetchers).
#include <optional>

#include "flow_func/flow_func_defines.h"
#include "flow_func/mbuf_msg.h"
#include "session/graph_state.h"

namespace hflow {

// Fills `out`, reusing its buffers: a caller fetching in a loop with the
// same vector allocates nothing in the steady state.
Status GraphState::ToTensor(const services::MbufPtr& m, Tensor* out) {
  const services::MbufHead& h = m->head();
  out->shape = h.shape;
  out->dtype = static_cast<DataType>(h.dtype);
  int64_t n = flow_func::ElementCount(h.shape);
  size_t bytes = n < 0 ? 0 : size_t(n) * DataTypeSize(out->dtype);
  if (h.msg_type ==
      static_cast<uint16_t>(FlowFunc::MsgType::MSG_TYPE_RAW_MSG)) {
    out->dtype = DataType::kUint8;
    bytes = h.shape.empty() ? 0 : size_t(h.shape[0]);
  }
  out->data.resize(bytes);  // overwritten below
  if (bytes == 0) return Status::OK();
  return env_->svc->ReadMbuf(m, out->data.data(), bytes, h.data_offset);
}

Status GraphState::Fetch(std::vector<Tensor>* outputs, FlowInfo* info,
                         int32_t timeout_ms) {
  std::shared_lock<std::shared_mutex> life(life_mu_);
  HFLOW_RETURN_IF_ERROR(CheckUsable());
  // One message per output of one transaction, taken together.
  std::lock_guard<std::mutex> lock(fetch_mu_);
  std::optional<rt::ScopedDevice> bound;
  BindFetch(&bound);
  MbufSlots slots(def_.outputs.size());
  services::MbufPtr* got = slots.data();
  HFLOW_RETURN_IF_ERROR(TakeOutputs(got, timeout_ms));
  Status s = ReadOutputs(got, outputs, info);
  if (!s.ok()) PutBack(got, 1);
  return s;
}

void GraphState::PutBack(services::MbufPtr* got, size_t transactions) {
  matcher_->PutBack(got, transactions);
}

Status GraphState::TakeOutputs(services::MbufPtr* got, int32_t timeout_ms) {
  Status s = matcher_->Take(got, timeout_ms);
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

Status GraphState::ReadOutputs(services::MbufPtr* got,
                               std::vector<Tensor>* outputs, FlowInfo* info) {
  const size_t n = output_queues_.size();
  const services::MbufHead& h0 = got[0]->head();
  info->transaction_id = h0.trans_id;
  info->start_time = h0.start_time;
  info->end_time = h0.end_time;
  info->flags = h0.flags;
  info->user_data.assign(h0.user_data, h0.user_data + h0.user_data_len);
  info->ret_code = 0;
  info->error_node.clear();
  outputs->resize(n);
  for (size_t k = 0; k < n; ++k) {
    const services::MbufHead& h = got[k]->head();
    info->flags |= h.flags;  // an EOS on any output ends the transaction
    if (h.ret_code != 0) {
      if (info->ret_code == 0) {
        info->ret_code = h.ret_code;
        info->error_node = ErrorNodeOf(h, k);
      }
      (*outputs)[k] = Tensor{};
      continue;
    }
    Status s = ToTensor(got[k], &(*outputs)[k]);
    if (!s.ok()) {
      // The outputs could not be read: the caller puts them back, so the
      // error loses no transaction and a later fetch can take them again.
      outputs->clear();
      *info = FlowInfo{};
      return s.WithContext(Where() + "FetchData: reading the outputs: ");
    }
  }
  return Status::OK();
}

}  // namespace hflow
