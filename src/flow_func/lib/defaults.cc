// Out-of-line defaults of the abstract FlowFunc API classes. They exist so
// that (a) each class has a key function here, which puts its vtable and
// typeinfo in libflow_func.so for UDFs to share, and (b) runtimes or test
// doubles that predate a method still link. Stateless, hence thread-safe.
#include <memory>
#include <vector>

#include "flow_func/attr_value.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg.h"
#include "flow_func/meta_context.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/meta_params.h"
#include "flow_func/meta_run_context.h"

namespace FlowFunc {

// ---- AttrValue: every pure virtual has a "wrong type" body. ---------------

int32_t AttrValue::GetVal(AscendString&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(std::vector<AscendString>&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(int64_t&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(std::vector<int64_t>&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(std::vector<std::vector<int64_t>>&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(float&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(std::vector<float>&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(bool&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(std::vector<bool>&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(TensorDataType&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}
int32_t AttrValue::GetVal(std::vector<TensorDataType>&) const {
  return FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;
}

// ---- Tensor ----------------------------------------------------------------

int32_t Tensor::Reshape(const std::vector<int64_t>&) {
  return FLOW_FUNC_ERR_NOT_SUPPORT;
}

// Without knowledge of padding, the payload is the best lower bound.
uint64_t Tensor::GetDataBufferSize() const { return GetDataSize(); }

// ---- FlowMsg ---------------------------------------------------------------

uint64_t FlowMsg::GetTransactionId() const { return 0; }

// A tensor message is a list of one; other messages carry no tensors.
const std::vector<Tensor*> FlowMsg::GetTensorList() const {
  std::vector<Tensor*> tensors;
  if (GetMsgType() == MsgType::MSG_TYPE_TENSOR_DATA) {
    Tensor* tensor = GetTensor();
    if (tensor != nullptr) tensors.push_back(tensor);
  }
  return tensors;
}

int32_t FlowMsg::GetRawData(void*& dataPtr, uint64_t& dataSize) const {
  dataPtr = nullptr;
  dataSize = 0;
  return FLOW_FUNC_ERR_NOT_SUPPORT;
}

void FlowMsg::SetMsgType(MsgType) {}

void FlowMsg::SetTransactionId(uint64_t) {}

// ---- MetaContext
// -------------------------------------------------------------

std::shared_ptr<FlowMsg> MetaContext::AllocTensorMsgWithAlign(
    const std::vector<int64_t>&, TensorDataType, uint32_t) {
  FLOW_FUNC_LOG_ERROR(
      "AllocTensorMsgWithAlign is not supported by this context");
  return nullptr;
}

void MetaContext::RaiseException(int32_t expCode, uint64_t userContextId) {
  FLOW_FUNC_LOG_WARN(
      "RaiseException(%d, %lu) is not supported by this context; ignored",
      expCode, static_cast<unsigned long>(userContextId));
}

bool MetaContext::GetException(int32_t&, uint64_t&) { return false; }

// ---- MetaRunContext
// ----------------------------------------------------------

std::shared_ptr<FlowMsg> MetaRunContext::AllocTensorMsgWithAlign(
    const std::vector<int64_t>&, TensorDataType, uint32_t) {
  FLOW_FUNC_LOG_ERROR(
      "AllocTensorMsgWithAlign is not supported by this run context");
  return nullptr;
}

std::shared_ptr<FlowMsg> MetaRunContext::AllocTensorListMsg(
    const std::vector<std::vector<int64_t>>&,
    const std::vector<TensorDataType>&, uint32_t) {
  FLOW_FUNC_LOG_ERROR(
      "AllocTensorListMsg is not supported by this run context");
  return nullptr;
}

void MetaRunContext::RaiseException(int32_t expCode, uint64_t userContextId) {
  FLOW_FUNC_LOG_WARN(
      "RaiseException(%d, %lu) is not supported by this run context; ignored",
      expCode, static_cast<unsigned long>(userContextId));
}

bool MetaRunContext::GetException(int32_t&, uint64_t&) { return false; }

std::shared_ptr<FlowMsg> MetaRunContext::AllocRawDataMsg(int64_t, uint32_t) {
  FLOW_FUNC_LOG_ERROR("AllocRawDataMsg is not supported by this run context");
  return nullptr;
}

std::shared_ptr<FlowMsg> MetaRunContext::ToFlowMsg(std::shared_ptr<Tensor>) {
  FLOW_FUNC_LOG_ERROR("ToFlowMsg is not supported by this run context");
  return nullptr;
}

// ---- MetaParams, MetaMultiFunc, MetaFlowFunc -------------------------------

int32_t MetaParams::GetRunningInstanceId() const { return 0; }

int32_t MetaParams::GetRunningInstanceNum() const { return 1; }

// As in GE: a UDF that does not override cannot reset itself, and the
// runtime then destroys it and creates and Inits a new one
// (UdfInstance::ResetState).
int32_t MetaMultiFunc::ResetFlowFuncState(const std::shared_ptr<MetaParams>&) {
  return FLOW_FUNC_ERR_NOT_SUPPORT;
}

int32_t MetaFlowFunc::ResetFlowFuncState() { return FLOW_FUNC_ERR_NOT_SUPPORT; }

}  // namespace FlowFunc
