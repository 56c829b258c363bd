// MetaContext: what a single-function UDF (MetaFlowFunc) sees of the runtime:
// message allocation, outputs, attributes, nested flow models, user data and
// exceptions. The runtime implements it; a context is used only from the
// thread running its UDF's Init or Proc.
#ifndef HFLOW_FLOW_FUNC_META_CONTEXT_H_
#define HFLOW_FLOW_FUNC_META_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "attr_value.h"
#include "flow_func_defines.h"
#include "flow_msg.h"
#include "out_options.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaContext {
 public:
  MetaContext() = default;
  virtual ~MetaContext() = default;

  virtual std::shared_ptr<FlowMsg> AllocTensorMsg(
      const std::vector<int64_t>& shape, TensorDataType dataType) = 0;
  // outIdx counts from 0.
  virtual int32_t SetOutput(uint32_t outIdx,
                            std::shared_ptr<FlowMsg> outMsg) = 0;
  // Null when the node has no attribute of that name.
  virtual std::shared_ptr<const AttrValue> GetAttr(
      const char* attrName) const = 0;

  // FLOW_FUNC_ERR_ATTR_NOT_EXITS when absent, else AttrValue::GetVal's code.
  template <class T>
  int32_t GetAttr(const char* attrName, T& value) const {
    std::shared_ptr<const AttrValue> attr = GetAttr(attrName);
    if (attr == nullptr) {
      return FLOW_FUNC_ERR_ATTR_NOT_EXITS;
    }
    return attr->GetVal(value);
  }

  virtual size_t GetInputNum() const = 0;
  virtual size_t GetOutputNum() const = 0;
  virtual std::shared_ptr<FlowMsg> AllocEmptyDataMsg(MsgType msgType) = 0;
  // timeout in milliseconds, -1 forever.
  virtual int32_t RunFlowModel(
      const char* modelKey,
      const std::vector<std::shared_ptr<FlowMsg>>& inputMsgs,
      std::vector<std::shared_ptr<FlowMsg>>& outputMsgs, int32_t timeout) = 0;
  virtual const char* GetWorkPath() const = 0;
  // The device id of the cluster config.
  virtual int32_t GetRunningDeviceId() const = 0;
  // Reads the 64 user-data bytes of the current input: size in (0, 64],
  // offset + size <= 64.
  virtual int32_t GetUserData(void* data, size_t size,
                              size_t offset = 0U) const = 0;

  // Inline defaults: contexts predating output options do not support them.
  virtual int32_t SetOutput(uint32_t outIdx, std::shared_ptr<FlowMsg> outMsg,
                            const OutOptions& options) {
    (void)outIdx;
    (void)outMsg;
    (void)options;
    return FLOW_FUNC_ERR_NOT_SUPPORT;
  }
  virtual int32_t SetMultiOutputs(
      uint32_t outIdx, const std::vector<std::shared_ptr<FlowMsg>>& outMsgs,
      const OutOptions& options) {
    (void)outIdx;
    (void)outMsgs;
    (void)options;
    return FLOW_FUNC_ERR_NOT_SUPPORT;
  }

  // Library defaults: null; no-op; false.
  virtual std::shared_ptr<FlowMsg> AllocTensorMsgWithAlign(
      const std::vector<int64_t>& shape, TensorDataType dataType,
      uint32_t align);
  virtual void RaiseException(int32_t expCode, uint64_t userContextId);
  virtual bool GetException(int32_t& expCode, uint64_t& userContextId);
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_META_CONTEXT_H_
