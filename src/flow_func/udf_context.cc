// UDF contexts (see udf_context.h).
// Thread-safety: as documented there.
#include "flow_func/udf_context.h"

#include <chrono>
#include <cstring>
#include <typeinfo>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "util/fast_tls.h"

namespace hflow {
namespace flow_func {
namespace {
using FlowFunc::FlowMsg;
constexpr uint32_t kDefaultAlign = 512;

// `m` as hflow's message, or null if it is some other FlowMsg. MbufFlowMsg
// is final, so an exact type match is the whole test: comparing type_info
// costs a pointer compare where dynamic_cast walks the class hierarchy
// (about 80 instructions in every stage's SetOutput).
std::shared_ptr<MbufFlowMsg> AsMbufMsg(const std::shared_ptr<FlowMsg>& m) {
  if (m == nullptr) return nullptr;
  const FlowMsg& msg = *m;  // typeid of a plain reference: nothing to call
  if (typeid(msg) != typeid(MbufFlowMsg)) return nullptr;
  return std::static_pointer_cast<MbufFlowMsg>(m);
}

// The calling thread's Proc in progress: its instance and inputs. Per
// thread: a stream function's thread runs beside the instance's others.
struct CurrentInputs {
  const ContextCore* core = nullptr;
  const std::vector<std::shared_ptr<FlowMsg>>* inputs = nullptr;
};
thread_local CurrentInputs t_current HFLOW_FAST_TLS;

// `core`'s inputs in the Proc the calling thread runs (null: none).
const std::vector<std::shared_ptr<FlowMsg>>* InputsOf(const ContextCore* core) {
  return t_current.core == core ? t_current.inputs : nullptr;
}
}  // namespace

std::shared_ptr<const FlowFunc::AttrValue> ContextCore::Attr(
    const char* name) const {
  if (name == nullptr) return nullptr;
  auto it = env_->attrs.find(name);
  return it == env_->attrs.end() ? nullptr : it->second;
}

std::shared_ptr<FlowMsg> ContextCore::AllocTensor(
    const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt,
    uint32_t align) const {
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = env_->allocator->AllocTensorMsg(shape, dt, align, &msg);
  if (!s.ok()) {
    FLOW_FUNC_LOG_ERROR("node %s: AllocTensorMsg failed: %s",
                        env_->node.c_str(), s.ToString().c_str());
    return nullptr;
  }
  InheritLabels(msg.get());
  return msg;
}

std::shared_ptr<FlowMsg> ContextCore::AllocRaw(uint64_t size) const {
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = env_->allocator->AllocRawMsg(static_cast<int64_t>(size), 0, &msg);
  if (!s.ok()) {
    FLOW_FUNC_LOG_ERROR("node %s: AllocRawDataMsg failed: %s",
                        env_->node.c_str(), s.ToString().c_str());
    return nullptr;
  }
  InheritLabels(msg.get());
  return msg;
}

std::shared_ptr<FlowMsg> ContextCore::AllocEmpty(FlowFunc::MsgType t) const {
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = env_->allocator->AllocEmptyMsg(t, &msg);
  if (!s.ok()) {
    FLOW_FUNC_LOG_ERROR("node %s: AllocEmptyDataMsg failed: %s",
                        env_->node.c_str(), s.ToString().c_str());
    return nullptr;
  }
  InheritLabels(msg.get());
  return msg;
}

int32_t ContextCore::Output(uint32_t idx, std::shared_ptr<FlowMsg> msg) const {
  if (idx >= env_->output_num) {
    FLOW_FUNC_LOG_ERROR(
        "node %s: SetOutput index %u out of range (%zu outputs)",
        env_->node.c_str(), idx, env_->output_num);
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  auto mbuf_msg = AsMbufMsg(msg);
  if (!mbuf_msg) {
    FLOW_FUNC_LOG_ERROR(
        "node %s: SetOutput needs a message allocated through "
        "the context",
        env_->node.c_str());
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  if (!env_->output) return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;
  mbuf_msg->MarkShared();  // a queue may hold it from now on
  return env_->output(idx, std::move(mbuf_msg));
}

// Note [Balance labels]
// GE's messages start as a copy of the head of the input being processed,
// so a worker behind a scatter node emits with the scatter's labels unless
// it sets its own (and SetRouteLabel(0) clears). hflow copies the two
// labels when a message is allocated, into the new message's own head
// (nobody else holds it yet); the first input's head is read only.
void ContextCore::InheritLabels(MbufFlowMsg* msg) const {
  const auto* inputs = InputsOf(this);
  if (msg == nullptr || inputs == nullptr || inputs->empty()) return;
  auto in = AsMbufMsg(inputs->front());
  if (!in) return;
  services::MbufHead& h = msg->head();
  h.route_label = in->head().route_label;
  h.data_label = in->head().data_label;
}

int32_t ContextCore::Labelled(const std::shared_ptr<MbufFlowMsg>& msg,
                              const BalanceLabels& labels, bool must_copy,
                              std::shared_ptr<FlowMsg>* out) const {
  const services::MbufHead& h = msg->head();
  if (h.route_label == labels.route_label &&
      h.data_label == labels.data_label) {
    *out = msg;  // nothing to write (the message may already be queued)
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  // An input (other consumers of its mbuf) or a message sent already (a
  // queue) may have its head read on other threads now: write a copy.
  bool shared = must_copy || msg->shared();
  const auto* inputs = InputsOf(this);
  for (size_t i = 0; inputs != nullptr && i < inputs->size(); ++i) {
    auto in = AsMbufMsg((*inputs)[i]);
    shared |= in != nullptr && in->mbuf() == msg->mbuf();
  }
  std::shared_ptr<MbufFlowMsg> target = msg;
  if (shared) {
    Status s = env_->allocator->Copy(*msg, &target);
    if (!s.ok()) {
      FLOW_FUNC_LOG_ERROR("node %s: copying an input to relabel it: %s",
                          env_->node.c_str(), s.ToString().c_str());
      return FlowFunc::FLOW_FUNC_ERR_MEM_BUF_ERROR;
    }
  }
  target->head().route_label = labels.route_label;
  target->head().data_label = labels.data_label;
  *out = std::move(target);
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

int32_t ContextCore::MultiOutput(
    uint32_t idx, const std::vector<std::shared_ptr<FlowMsg>>& msgs,
    const FlowFunc::OutOptions& options) const {
  std::vector<BalanceLabels> labels;
  int32_t rc = BalanceLabelsFor(env_->node, env_->balance, options, msgs.size(),
                                &labels);
  if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
  std::vector<std::shared_ptr<FlowMsg>> relabelled;
  if (!labels.empty()) {
    for (const auto& m : msgs) {
      if (!AsMbufMsg(m)) {
        FLOW_FUNC_LOG_ERROR(
            "node %s: SetOutput with a BalanceConfig needs messages "
            "allocated through the context",
            env_->node.c_str());
        return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
      }
    }
    relabelled.resize(msgs.size());
    for (size_t i = 0; i < msgs.size(); ++i) {
      // The same message twice in one call: the second gets a copy, or its
      // labels would overwrite the first's.
      bool again = false;
      for (size_t j = 0; j < i; ++j) again |= msgs[j] == msgs[i];
      rc = Labelled(AsMbufMsg(msgs[i]), labels[i], again, &relabelled[i]);
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
    }
  }
  const auto& send = labels.empty() ? msgs : relabelled;
  int32_t last = FlowFunc::FLOW_FUNC_SUCCESS;
  for (const auto& m : send) {
    rc = Output(idx, m);
    if (rc != FlowFunc::FLOW_FUNC_SUCCESS) last = rc;
  }
  return last;
}

void ContextCore::SetCurrentInputs(
    const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* in) {
  t_current.core = in != nullptr ? this : nullptr;
  t_current.inputs = in;
}

int32_t ContextCore::UserData(void* data, size_t size, size_t offset) const {
  if (data == nullptr || offset > services::kMaxUserData ||
      size > services::kMaxUserData - offset) {
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  std::memset(data, 0, size);
  const auto* inputs = InputsOf(this);
  if (inputs == nullptr || inputs->empty()) return FlowFunc::FLOW_FUNC_SUCCESS;
  auto m = AsMbufMsg(inputs->front());
  if (m) std::memcpy(data, m->head().user_data + offset, size);
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

void ContextCore::Raise(int32_t code, uint64_t user_ctx) const {
  if (env_->raise) env_->raise(code, user_ctx);
}

bool ContextCore::Exception(int32_t& code, uint64_t& user_ctx) const {
  return env_->get_exception && env_->get_exception(&code, &user_ctx);
}

Status ContextCore::LoadInvokedModels() {
  for (const InvokedModelSpec& spec : env_->invoked) {
    auto inv = std::make_unique<Invoked>();
    HFLOW_RETURN_IF_ERROR(LoadInvokedModel(spec, env_->device, &inv->model)
                              .WithContext("node '" + env_->node +
                                           "': invoked model '" + spec.key +
                                           "': "));
    invoked_[spec.key] = std::move(inv);
  }
  return Status::OK();
}

int32_t ContextCore::RunFlowModel(
    const char* key, const std::vector<std::shared_ptr<FlowMsg>>& in,
    std::vector<std::shared_ptr<FlowMsg>>& out, int32_t timeout) const {
  const std::string k = key == nullptr ? "" : key;
  auto it = invoked_.find(k);
  if (it == invoked_.end()) {
    std::string keys;
    for (const auto& [name, m] : invoked_)
      keys += (keys.empty() ? "" : ", ") + name;
    FLOW_FUNC_LOG_ERROR(
        "node %s: RunFlowModel(%s): no invoked closure of that key (the "
        "FunctionPp's AddInvokedClosure keys: %s)",
        env_->node.c_str(), k.c_str(), keys.empty() ? "none" : keys.c_str());
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  Invoked& inv = *it->second;
  const auto start = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> one_run(inv.mu);
  std::vector<std::shared_ptr<FlowMsg>> got;
  MsgMakers make;
  make.tensor = [this](const std::vector<int64_t>& shape,
                       FlowFunc::TensorDataType dt) {
    return AllocTensor(shape, dt, 0);
  };
  make.empty = [this] {
    return AllocEmpty(FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA);
  };
  make.raw = [this](uint64_t size) { return AllocRaw(size); };
  const int32_t rc = inv.model->Run(in, make, &got);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  if (rc == FlowFunc::FLOW_FUNC_SUCCESS && timeout >= 0 && ms > timeout) {
    FLOW_FUNC_LOG_ERROR(
        "node %s: RunFlowModel(%s) took %lld ms, past its "
        "timeout of %d ms",
        env_->node.c_str(), k.c_str(), static_cast<long long>(ms), timeout);
    return FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR;
  }
  if (rc == FlowFunc::FLOW_FUNC_SUCCESS) out = std::move(got);
  return rc;
}

// --- MetaContextImpl ---

std::shared_ptr<FlowMsg> MetaContextImpl::AllocTensorMsg(
    const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt) {
  return core_->AllocTensor(shape, dt, kDefaultAlign);
}
std::shared_ptr<FlowMsg> MetaContextImpl::AllocTensorMsgWithAlign(
    const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt,
    uint32_t align) {
  return core_->AllocTensor(shape, dt, align);
}
int32_t MetaContextImpl::SetOutput(uint32_t idx, std::shared_ptr<FlowMsg> msg) {
  return core_->Output(idx, std::move(msg));
}
int32_t MetaContextImpl::SetOutput(uint32_t idx, std::shared_ptr<FlowMsg> msg,
                                   const FlowFunc::OutOptions& options) {
  return core_->MultiOutput(idx, {std::move(msg)}, options);
}
int32_t MetaContextImpl::SetMultiOutputs(
    uint32_t idx, const std::vector<std::shared_ptr<FlowMsg>>& msgs,
    const FlowFunc::OutOptions& options) {
  return core_->MultiOutput(idx, msgs, options);
}
std::shared_ptr<const FlowFunc::AttrValue> MetaContextImpl::GetAttr(
    const char* name) const {
  return core_->Attr(name);
}
std::shared_ptr<FlowMsg> MetaContextImpl::AllocEmptyDataMsg(
    FlowFunc::MsgType t) {
  return core_->AllocEmpty(t);
}
int32_t MetaContextImpl::RunFlowModel(
    const char* key, const std::vector<std::shared_ptr<FlowMsg>>& in,
    std::vector<std::shared_ptr<FlowMsg>>& out, int32_t timeout) {
  return core_->RunFlowModel(key, in, out, timeout);
}
int32_t MetaContextImpl::GetUserData(void* data, size_t size,
                                     size_t offset) const {
  return core_->UserData(data, size, offset);
}
void MetaContextImpl::RaiseException(int32_t code, uint64_t user_ctx) {
  core_->Raise(code, user_ctx);
}
bool MetaContextImpl::GetException(int32_t& code, uint64_t& user_ctx) {
  return core_->Exception(code, user_ctx);
}

// --- MetaParamsImpl ---

std::shared_ptr<const FlowFunc::AttrValue> MetaParamsImpl::GetAttr(
    const char* name) const {
  return core_->Attr(name);
}

// --- MetaRunContextImpl ---

std::shared_ptr<FlowMsg> MetaRunContextImpl::AllocTensorMsg(
    const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt) {
  return core_->AllocTensor(shape, dt, kDefaultAlign);
}
std::shared_ptr<FlowMsg> MetaRunContextImpl::AllocTensorMsgWithAlign(
    const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt,
    uint32_t align) {
  return core_->AllocTensor(shape, dt, align);
}
std::shared_ptr<FlowMsg> MetaRunContextImpl::AllocEmptyDataMsg(
    FlowFunc::MsgType t) {
  return core_->AllocEmpty(t);
}
int32_t MetaRunContextImpl::SetOutput(uint32_t idx,
                                      std::shared_ptr<FlowMsg> msg) {
  return core_->Output(idx, std::move(msg));
}
int32_t MetaRunContextImpl::SetOutput(uint32_t idx,
                                      std::shared_ptr<FlowMsg> msg,
                                      const FlowFunc::OutOptions& options) {
  return core_->MultiOutput(idx, {std::move(msg)}, options);
}
int32_t MetaRunContextImpl::SetMultiOutputs(
    uint32_t idx, const std::vector<std::shared_ptr<FlowMsg>>& msgs,
    const FlowFunc::OutOptions& options) {
  return core_->MultiOutput(idx, msgs, options);
}
int32_t MetaRunContextImpl::RunFlowModel(
    const char* key, const std::vector<std::shared_ptr<FlowMsg>>& in,
    std::vector<std::shared_ptr<FlowMsg>>& out, int32_t timeout) {
  return core_->RunFlowModel(key, in, out, timeout);
}
int32_t MetaRunContextImpl::GetUserData(void* data, size_t size,
                                        size_t offset) const {
  return core_->UserData(data, size, offset);
}
std::shared_ptr<FlowMsg> MetaRunContextImpl::AllocTensorListMsg(
    const std::vector<std::vector<int64_t>>& shapes,
    const std::vector<FlowFunc::TensorDataType>& dts, uint32_t align) {
  std::shared_ptr<MbufFlowMsg> msg;
  Status s =
      core_->env().allocator->AllocTensorListMsg(shapes, dts, align, &msg);
  if (!s.ok()) {
    FLOW_FUNC_LOG_ERROR("node %s: AllocTensorListMsg failed: %s",
                        core_->env().node.c_str(), s.ToString().c_str());
    return nullptr;
  }
  core_->InheritLabels(msg.get());
  return msg;
}
std::shared_ptr<FlowMsg> MetaRunContextImpl::AllocRawDataMsg(int64_t size,
                                                             uint32_t align) {
  std::shared_ptr<MbufFlowMsg> msg;
  Status s = core_->env().allocator->AllocRawMsg(size, align, &msg);
  if (!s.ok()) {
    FLOW_FUNC_LOG_ERROR("node %s: AllocRawDataMsg failed: %s",
                        core_->env().node.c_str(), s.ToString().c_str());
    return nullptr;
  }
  core_->InheritLabels(msg.get());
  return msg;
}
void MetaRunContextImpl::RaiseException(int32_t code, uint64_t user_ctx) {
  core_->Raise(code, user_ctx);
}
bool MetaRunContextImpl::GetException(int32_t& code, uint64_t& user_ctx) {
  return core_->Exception(code, user_ctx);
}

// A tensor from this runtime (FlowBufferFactory during Init/Proc, or a
// message's tensor) becomes a message over the same mbuf; any other tensor is
// copied into a new message.
std::shared_ptr<FlowMsg> MetaRunContextImpl::ToFlowMsg(
    std::shared_ptr<FlowFunc::Tensor> tensor) {
  if (!tensor) return nullptr;
  if (auto* mt = dynamic_cast<MbufTensor*>(tensor.get())) {
    if (mt->mbuf()->head().msg_type ==
        static_cast<uint16_t>(FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA)) {
      auto m = MbufFlowMsg::FromMbuf(mt->mbuf());
      m->MarkShared();  // the tensor's mbuf may be an input's
      return m;
    }
  }
  auto msg = core_->AllocTensor(tensor->GetShape(), tensor->GetDataType(),
                                kDefaultAlign);
  if (msg && tensor->GetDataSize() > 0) {
    std::memcpy(msg->GetTensor()->GetData(), tensor->GetData(),
                tensor->GetDataSize());
  }
  return msg;
}

}  // namespace flow_func
}  // namespace hflow
