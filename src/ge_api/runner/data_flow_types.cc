// DataFlowInfo, hflow's FlowMsg and FlowBufferFactory (ge/ge_data_flow_api.h),
// and the conversions to the bridge's views. Part of libge_runner.so (old
// string ABI).
//
// Thread-safety: plain data.
#include <cstdio>
#include <cstring>

#include "ge_api/runner/runner_internal.h"

namespace ge {
namespace {
constexpr size_t kMaxUserData = 64;

Status Bad(const char* call, const std::string& why) {
  return hflow::gebridge::Fail(call, ACL_ERROR_GE_PARAM_INVALID, why.c_str());
}
}  // namespace

Status FlowInfoData::SetUserData(const void* data, size_t size, size_t offset) {
  if (data == nullptr && size > 0) {
    return Bad("SetUserData", "null data with size " + std::to_string(size));
  }
  if (size > kMaxUserData || offset > kMaxUserData - size) {
    return Bad("SetUserData", "offset " + std::to_string(offset) + " + size " +
                                  std::to_string(size) +
                                  " is beyond the 64 bytes of user data");
  }
  if (user_data.size() < offset + size) user_data.resize(offset + size, 0);
  if (size > 0) std::memcpy(user_data.data() + offset, data, size);
  return SUCCESS;
}

Status FlowInfoData::GetUserData(void* data, size_t size, size_t offset) const {
  if (data == nullptr && size > 0) {
    return Bad("GetUserData", "null data with size " + std::to_string(size));
  }
  if (size > kMaxUserData || offset > kMaxUserData - size) {
    return Bad("GetUserData", "offset " + std::to_string(offset) + " + size " +
                                  std::to_string(size) +
                                  " is beyond the 64 bytes of user data");
  }
  // Bytes never set read as zero (GE keeps a zeroed 64-byte area).
  std::memset(data, 0, size);
  if (offset < user_data.size()) {
    const size_t n = std::min(size, user_data.size() - offset);
    if (n > 0) std::memcpy(data, user_data.data() + offset, n);
  }
  return SUCCESS;
}

hflow::gebridge::InfoView FlowInfoData::View() const {
  hflow::gebridge::InfoView v;
  v.start_time = start_time;
  v.end_time = end_time;
  v.flags = flags;
  v.transaction_id = transaction_id;
  v.user_data = user_data.data();
  v.user_data_size = user_data.size();
  v.ret_code = ret_code;
  return v;
}

void FlowInfoData::From(const hflow::gebridge::InfoView& v) {
  start_time = v.start_time;
  end_time = v.end_time;
  flags = v.flags;
  transaction_id = v.transaction_id;
  user_data.assign(v.user_data, v.user_data + v.user_data_size);
  ret_code = v.ret_code;
}

// ---- DataFlowInfo ----
DataFlowInfo::DataFlowInfo() : impl_(std::make_shared<DataFlowInfoImpl>()) {}
DataFlowInfo::~DataFlowInfo() = default;
void DataFlowInfo::SetStartTime(const uint64_t t) {
  impl_->info.start_time = t;
}
uint64_t DataFlowInfo::GetStartTime() const { return impl_->info.start_time; }
void DataFlowInfo::SetEndTime(const uint64_t t) { impl_->info.end_time = t; }
uint64_t DataFlowInfo::GetEndTime() const { return impl_->info.end_time; }
void DataFlowInfo::SetFlowFlags(const uint32_t f) { impl_->info.flags = f; }
uint32_t DataFlowInfo::GetFlowFlags() const { return impl_->info.flags; }
Status DataFlowInfo::SetUserData(const void* data, size_t size, size_t offset) {
  return impl_->info.SetUserData(data, size, offset);
}
Status DataFlowInfo::GetUserData(void* data, size_t size, size_t offset) const {
  return impl_->info.GetUserData(data, size, offset);
}
uint64_t DataFlowInfo::GetTransactionId() const {
  return impl_->info.transaction_id;
}
void DataFlowInfo::SetTransactionId(uint64_t id) {
  impl_->info.transaction_id = id;
}

// ---- HostFlowMsg ----
Tensor* HostFlowMsg::GetTensor() const {
  return type_ == MsgType::MSG_TYPE_TENSOR_DATA ? tensor_.get() : nullptr;
}
Status HostFlowMsg::GetRawData(void*& data_ptr, uint64_t& data_size) const {
  if (type_ == MsgType::MSG_TYPE_TENSOR_DATA) {
    return Bad("FlowMsg::GetRawData", "the message is a tensor message");
  }
  data_ptr = raw_.empty() ? nullptr : const_cast<uint8_t*>(raw_.data());
  data_size = raw_.size();
  return SUCCESS;
}

// ---- conversions ----
hflow::gebridge::TensorView ViewOf(const Tensor& t,
                                   std::vector<int64_t>* dims) {
  const TensorDesc desc = t.GetTensorDesc();
  *dims = desc.GetShape().GetDims();
  hflow::gebridge::TensorView v;
  v.dtype = static_cast<int32_t>(desc.GetDataType());
  v.dims = dims->data();
  v.dim_num = dims->size();
  v.data = t.GetData();
  v.size = t.GetSize();
  return v;
}

Tensor TensorOf(const hflow::gebridge::TensorView& v) {
  std::vector<int64_t> dims(v.dims, v.dims + v.dim_num);
  TensorDesc desc(Shape(dims), FORMAT_ND, static_cast<DataType>(v.dtype));
  const auto* p = static_cast<const uint8_t*>(v.data);
  std::vector<uint8_t> bytes;
  if (p != nullptr && v.size > 0) bytes.assign(p, p + v.size);
  return Tensor(std::move(desc), std::move(bytes));
}

// ---- FlowBufferFactory ----
namespace {
// Bytes of a tensor of `shape` and `dt`, or -1 (with a log line).
int64_t TensorBytes(const char* call, const std::vector<int64_t>& shape,
                    DataType dt) {
  const int64_t n = Shape(shape).GetShapeSize();
  const int64_t bytes = GetSizeInBytes(n, dt);
  if (n < 0 || bytes < 0) {
    Bad(call, "shape or data type " + std::to_string(static_cast<int>(dt)) +
                  " has no fixed byte size");
    return -1;
  }
  return bytes;
}
}  // namespace

std::shared_ptr<Tensor> FlowBufferFactory::AllocTensor(
    const std::vector<int64_t>& shape, DataType dt, uint32_t /*align*/) {
  const int64_t bytes =
      TensorBytes("FlowBufferFactory::AllocTensor", shape, dt);
  if (bytes < 0) return nullptr;
  return std::make_shared<Tensor>(
      TensorDesc(Shape(shape), FORMAT_ND, dt),
      std::vector<uint8_t>(static_cast<size_t>(bytes), 0));
}

FlowMsgPtr FlowBufferFactory::AllocTensorMsg(const std::vector<int64_t>& shape,
                                             DataType dt, uint32_t align) {
  auto t = AllocTensor(shape, dt, align);
  if (!t) return nullptr;
  auto m = std::make_shared<HostFlowMsg>();
  m->tensor_ = t;
  return m;
}

FlowMsgPtr FlowBufferFactory::AllocRawDataMsg(size_t size, uint32_t) {
  auto m = std::make_shared<HostFlowMsg>();
  m->type_ = MsgType::MSG_TYPE_RAW_MSG;
  m->raw_.assign(size, 0);
  return m;
}

FlowMsgPtr FlowBufferFactory::AllocEmptyDataMsg(MsgType type) {
  auto m = std::make_shared<HostFlowMsg>();
  m->type_ = type;
  m->empty_ = true;
  if (type == MsgType::MSG_TYPE_TENSOR_DATA)
    m->tensor_ = std::make_shared<Tensor>();
  return m;
}

FlowMsgPtr FlowBufferFactory::ToFlowMsg(const Tensor& tensor) {
  auto m = std::make_shared<HostFlowMsg>();
  m->tensor_ = std::make_shared<Tensor>(tensor);
  return m;
}

FlowMsgPtr FlowBufferFactory::ToFlowMsg(const RawData& raw) {
  if (raw.addr == nullptr && raw.len > 0) {
    Bad("FlowBufferFactory::ToFlowMsg",
        "null addr with len " + std::to_string(raw.len));
    return nullptr;
  }
  auto m = std::make_shared<HostFlowMsg>();
  m->type_ = MsgType::MSG_TYPE_RAW_MSG;
  const auto* p = static_cast<const uint8_t*>(raw.addr);
  if (raw.len > 0) m->raw_.assign(p, p + raw.len);
  return m;
}

}  // namespace ge
