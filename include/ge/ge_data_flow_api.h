// The data types of GE's DataFlow feed and fetch: DataFlowInfo (flow flags,
// times, transaction id and user data travelling with a transaction),
// RawData (a piece of a raw feed), FlowMsg (one message of one input or
// output: a tensor, raw bytes or a user-defined type, with its own flow
// info and return code) and FlowBufferFactory, which makes FlowMsgs.
//
// Errors: SetUserData/GetUserData return ACL_ERROR_GE_PARAM_INVALID for a
// null pointer, a size of 0, an offset of 64 or more, or offset + size
// beyond 64 bytes (as GE; bytes never set read as zero); factory calls
// return null for a bad shape or dtype, with a log line.
//
// Thread-safety: distinct objects may be used from any thread; a FlowMsg
// fetched or fed is owned by the caller (no hflow thread touches it).
#ifndef HFLOW_GE_GE_DATA_FLOW_API_H_
#define HFLOW_GE_GE_DATA_FLOW_API_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ge/ge_api_error_codes.h"
#include "graph/tensor.h"

namespace ge {
enum class DataFlowFlag : uint32_t {
  DATA_FLOW_FLAG_EOS = (1U << 0U),  // the end of a stream
  DATA_FLOW_FLAG_SEG = (1U << 1U)   // a segment boundary (TimeBatch)
};

struct RawData {
  const void* addr;
  size_t len;
};

class DataFlowInfoImpl;
class GE_FUNC_VISIBILITY DataFlowInfo {
 public:
  DataFlowInfo();
  ~DataFlowInfo();
  DataFlowInfo(const DataFlowInfo& context) = delete;
  DataFlowInfo(const DataFlowInfo&& context) = delete;
  DataFlowInfo& operator=(const DataFlowInfo& context) & = delete;
  DataFlowInfo& operator=(const DataFlowInfo&& context) & = delete;

  void SetStartTime(const uint64_t start_time);
  uint64_t GetStartTime() const;
  void SetEndTime(const uint64_t end_time);
  uint64_t GetEndTime() const;
  void SetFlowFlags(const uint32_t flow_flags);
  uint32_t GetFlowFlags() const;
  // Up to 64 bytes of user data, written or read at `offset`.
  Status SetUserData(const void* data, size_t size, size_t offset = 0U);
  Status GetUserData(void* data, size_t size, size_t offset = 0U) const;
  uint64_t GetTransactionId() const;
  // 0 (the default) lets the session number transactions 1, 2, ...
  void SetTransactionId(uint64_t transaction_id);

 private:
  std::shared_ptr<DataFlowInfoImpl> impl_;
  friend class DataFlowInfoUtils;
};

enum class MsgType : uint16_t {
  MSG_TYPE_TENSOR_DATA = 0,
  MSG_TYPE_RAW_MSG = 1,
  MSG_TYPE_USER_DEFINE_START = 1024
};

class GE_FUNC_VISIBILITY FlowMsg {
 public:
  FlowMsg() = default;
  virtual ~FlowMsg() = default;
  virtual MsgType GetMsgType() const = 0;
  virtual void SetMsgType(MsgType msg_type) = 0;
  // The tensor of a tensor message; null for other types and for an empty
  // ("null data") message.
  virtual Tensor* GetTensor() const = 0;
  // The bytes of a raw or user-defined message: UNSUPPORTED for a tensor
  // or empty message, FAILED for a raw message of no bytes (as GE).
  virtual Status GetRawData(void*& data_ptr, uint64_t& data_size) const = 0;
  virtual int32_t GetRetCode() const = 0;
  virtual void SetRetCode(int32_t ret_code) = 0;
  virtual void SetStartTime(uint64_t start_time) = 0;
  virtual uint64_t GetStartTime() const = 0;
  virtual void SetEndTime(uint64_t end_time) = 0;
  virtual uint64_t GetEndTime() const = 0;
  virtual void SetFlowFlags(uint32_t flags) = 0;
  virtual uint32_t GetFlowFlags() const = 0;
  virtual uint64_t GetTransactionId() const = 0;
  virtual void SetTransactionId(uint64_t transaction_id) = 0;
  virtual Status SetUserData(const void* data, size_t size,
                             size_t offset = 0U) = 0;
  virtual Status GetUserData(void* data, size_t size,
                             size_t offset = 0U) const = 0;
};

using FlowMsgPtr = std::shared_ptr<FlowMsg>;

class GE_FUNC_VISIBILITY FlowBufferFactory {
 public:
  // `align` is accepted for GE's signature; host buffers are malloc'ed.
  static std::shared_ptr<Tensor> AllocTensor(const std::vector<int64_t>& shape,
                                             DataType data_type,
                                             uint32_t align = 512U);
  static FlowMsgPtr AllocTensorMsg(const std::vector<int64_t>& shape,
                                   DataType data_type, uint32_t align = 512U);
  static FlowMsgPtr AllocRawDataMsg(size_t size, uint32_t align = 512U);
  // A message without payload (GE's "null data"), e.g. for an EOS feed.
  // As in GE it is a tensor-type message whatever `type` says, and
  // GetTensor returns null.
  static FlowMsgPtr AllocEmptyDataMsg(MsgType type);
  static FlowMsgPtr ToFlowMsg(const Tensor& tensor);
  static FlowMsgPtr ToFlowMsg(const RawData& raw_data);
};
}  // namespace ge

#endif  // HFLOW_GE_GE_DATA_FLOW_API_H_
