// UDF contexts (see udf_context.h).
// Thread-safety: as documented there.
#include "flow_func/udf_context.h"

#include <cstring>
#include <typeinfo>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"

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
  return env_->output(idx, std::move(mbuf_msg));
}

int32_t ContextCore::MultiOutput(
    uint32_t idx, const std::vector<std::shared_ptr<FlowMsg>>& msgs) const {
  for (const auto& m : msgs) {
    int32_t rc = Output(idx, m);
    if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
  }
  return FlowFunc::FLOW_FUNC_SUCCESS;
}

namespace {
// The calling thread's Proc in progress: its instance and inputs.
struct CurrentInputs {
  const ContextCore* core = nullptr;
  const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* inputs = nullptr;
};
thread_local CurrentInputs t_current;
}  // namespace

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
  const auto* inputs = t_current.core == this ? t_current.inputs : nullptr;
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

int32_t ContextCore::RunFlowModelUnsupported(const char* key) const {
  FLOW_FUNC_LOG_ERROR("node %s: RunFlowModel(%s) is not supported by hflow yet",
                      env_->node.c_str(), key ? key : "");
  return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;
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
                                   const FlowFunc::OutOptions&) {
  return core_->Output(idx, std::move(msg));
}
int32_t MetaContextImpl::SetMultiOutputs(
    uint32_t idx, const std::vector<std::shared_ptr<FlowMsg>>& msgs,
    const FlowFunc::OutOptions&) {
  return core_->MultiOutput(idx, msgs);
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
    const char* key, const std::vector<std::shared_ptr<FlowMsg>>&,
    std::vector<std::shared_ptr<FlowMsg>>&, int32_t) {
  return core_->RunFlowModelUnsupported(key);
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
                                      const FlowFunc::OutOptions&) {
  return core_->Output(idx, std::move(msg));
}
int32_t MetaRunContextImpl::SetMultiOutputs(
    uint32_t idx, const std::vector<std::shared_ptr<FlowMsg>>& msgs,
    const FlowFunc::OutOptions&) {
  return core_->MultiOutput(idx, msgs);
}
int32_t MetaRunContextImpl::RunFlowModel(
    const char* key, const std::vector<std::shared_ptr<FlowMsg>>&,
    std::vector<std::shared_ptr<FlowMsg>>&, int32_t) {
  return core_->RunFlowModelUnsupported(key);
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
      return MbufFlowMsg::FromMbuf(mt->mbuf());
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
