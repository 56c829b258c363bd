// Messages a UDF receives and sends: FlowMsg (a head plus a tensor, a tensor
// list or raw bytes), Tensor, and FlowBufferFactory for free-standing tensors.
// The runtime implements the abstract classes. A message is used by one
// thread at a time; the runtime hands it over between threads.
#ifndef HFLOW_FLOW_FUNC_FLOW_MSG_H_
#define HFLOW_FLOW_FUNC_FLOW_MSG_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func_defines.h"
#include "tensor_data_type.h"

namespace FlowFunc {

enum class MsgType : uint16_t {
  MSG_TYPE_TENSOR_DATA = 0,
  MSG_TYPE_RAW_MSG = 1,
  MSG_TYPE_TENSOR_LIST = 2,
  MSG_TYPE_USER_DEFINE_START = 1024
};

// Bits of FlowMsg::GetFlowFlags / SetFlowFlags; combine with bitwise or.
enum class FlowFlag : uint32_t {
  FLOW_FLAG_EOS = 1U,  // End of stream.
  FLOW_FLAG_SEG = 2U   // Segment boundary of a discontinuous stream.
};

class FLOW_FUNC_VISIBILITY Tensor {
 public:
  Tensor() = default;
  virtual ~Tensor() = default;

  virtual const std::vector<int64_t>& GetShape() const = 0;
  virtual TensorDataType GetDataType() const = 0;
  virtual void* GetData() const = 0;
  // Bytes of payload (element count times element size).
  virtual uint64_t GetDataSize() const = 0;
  // -1 when unknown or overflowing.
  virtual int64_t GetElementCnt() const = 0;

  // Changes the shape keeping the element count. The default is
  // FLOW_FUNC_ERR_NOT_SUPPORT.
  virtual int32_t Reshape(const std::vector<int64_t>& shape);
  // Bytes of the underlying buffer including alignment padding. The default
  // is GetDataSize().
  virtual uint64_t GetDataBufferSize() const;
};

class FLOW_FUNC_VISIBILITY FlowBufferFactory {
 public:
  // Allocates a tensor outside any message. `align` (bytes) must divide 1024
  // and lie in [32, 1024]. Returns null on failure.
  static std::shared_ptr<Tensor> AllocTensor(const std::vector<int64_t>& shape,
                                             TensorDataType dataType,
                                             uint32_t align = 512U);
};

class FLOW_FUNC_VISIBILITY FlowMsg {
 public:
  FlowMsg() = default;
  virtual ~FlowMsg() = default;

  virtual MsgType GetMsgType() const = 0;
  // The tensor of a MSG_TYPE_TENSOR_DATA message, owned by the message.
  virtual Tensor* GetTensor() const = 0;
  virtual int32_t GetRetCode() const = 0;
  virtual void SetRetCode(int32_t retCode) = 0;
  virtual void SetStartTime(uint64_t startTime) = 0;
  virtual uint64_t GetStartTime() const = 0;
  virtual void SetEndTime(uint64_t endTime) = 0;
  virtual uint64_t GetEndTime() const = 0;
  // A set of FlowFlag bits.
  virtual void SetFlowFlags(uint32_t flags) = 0;
  virtual uint32_t GetFlowFlags() const = 0;
  // 0 means no route label.
  virtual void SetRouteLabel(uint32_t routeLabel) = 0;

  // Defaults: 0; the message's single tensor (or nothing); NOT_SUPPORT;
  // no-op; no-op.
  virtual uint64_t GetTransactionId() const;
  virtual const std::vector<Tensor*> GetTensorList() const;
  virtual int32_t GetRawData(void*& dataPtr, uint64_t& dataSize) const;
  virtual void SetMsgType(MsgType msgType);
  virtual void SetTransactionId(uint64_t transactionId);
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_FLOW_MSG_H_
