// MetaRunContext: what one proc of a multi-function UDF sees of the runtime
// during a call: message allocation, outputs, nested flow models, user data
// and exceptions. Implemented by the runtime; used only from the thread
// running that proc.
#ifndef HFLOW_FLOW_FUNC_META_RUN_CONTEXT_H_
#define HFLOW_FLOW_FUNC_META_RUN_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "attr_value.h"
#include "flow_func_defines.h"
#include "flow_msg.h"
#include "out_options.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaRunContext {
 public:
  MetaRunContext() = default;
  virtual ~MetaRunContext() = default;

  virtual std::shared_ptr<FlowMsg> AllocTensorMsg(
      const std::vector<int64_t>& shape, TensorDataType dataType) = 0;
  virtual std::shared_ptr<FlowMsg> AllocEmptyDataMsg(MsgType msgType) = 0;
  // outIdx counts from 0.
  virtual int32_t SetOutput(uint32_t outIdx,
                            std::shared_ptr<FlowMsg> outMsg) = 0;
  // timeout in milliseconds, -1 forever.
  virtual int32_t RunFlowModel(
      const char* modelKey,
      const std::vector<std::shared_ptr<FlowMsg>>& inputMsgs,
      std::vector<std::shared_ptr<FlowMsg>>& outputMsgs, int32_t timeout) = 0;
  // Reads the 64 user-data bytes of the current input: size in (0, 64],
  // offset + size <= 64.
  virtual int32_t GetUserData(void* data, size_t size,
                              size_t offset = 0U) const = 0;
  virtual int32_t SetOutput(uint32_t outIdx, std::shared_ptr<FlowMsg> outMsg,
                            const OutOptions& options) = 0;
  virtual int32_t SetMultiOutputs(
      uint32_t outIdx, const std::vector<std::shared_ptr<FlowMsg>>& outMsgs,
      const OutOptions& options) = 0;

  // Library defaults: null for the allocators, no-op for RaiseException,
  // false for GetException.
  virtual std::shared_ptr<FlowMsg> AllocTensorMsgWithAlign(
      const std::vector<int64_t>& shape, TensorDataType dataType,
      uint32_t align);
  virtual std::shared_ptr<FlowMsg> AllocTensorListMsg(
      const std::vector<std::vector<int64_t>>& shapes,
      const std::vector<TensorDataType>& dataTypes, uint32_t align = 512U);
  virtual void RaiseException(int32_t expCode, uint64_t userContextId);
  virtual bool GetException(int32_t& expCode, uint64_t& userContextId);
  virtual std::shared_ptr<FlowMsg> AllocRawDataMsg(int64_t size,
                                                   uint32_t align = 512U);
  virtual std::shared_ptr<FlowMsg> ToFlowMsg(std::shared_ptr<Tensor> tensor);
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_META_RUN_CONTEXT_H_
