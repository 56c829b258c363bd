// Element sizes, HostTensor and FlowBufferFactory::AllocTensor, which routes
// through the allocator the runtime installed on the calling thread (a
// thread_local, so no locking) and falls back to HostTensor.
#include <algorithm>
#include <cstring>
#include <exception>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg.h"
#include "flow_func_internal.h"
#include "host_tensor.h"
#include "util/fast_tls.h"

namespace FlowFunc {
namespace internal {
namespace {

// What AllocTensor calls: the thread's own copy (SetTensorAllocator) or an
// allocator its owner keeps alive (SwapTensorAllocator, per Proc call).
thread_local TensorAllocator tls_owned;
thread_local const TensorAllocator* tls_allocator HFLOW_FAST_TLS = nullptr;

}  // namespace

// Note [One dtype table]
// Every dtype fact of hflow (GE name, host API name, bits per element)
// lives in this table; the attr parser, the batcher and the host API's
// DataType helpers read it, so a dtype added here works everywhere at once
// (the batcher once had its own copy that missed DT_BF16).
namespace {
constexpr DataTypeInfo kDataTypes[] = {
    {TensorDataType::DT_FLOAT, "DT_FLOAT", "float32", 32},
    {TensorDataType::DT_FLOAT16, "DT_FLOAT16", "float16", 16},
    {TensorDataType::DT_INT8, "DT_INT8", "int8", 8},
    {TensorDataType::DT_INT32, "DT_INT32", "int32", 32},
    {TensorDataType::DT_UINT8, "DT_UINT8", "uint8", 8},
    {TensorDataType::DT_INT16, "DT_INT16", "int16", 16},
    {TensorDataType::DT_UINT16, "DT_UINT16", "uint16", 16},
    {TensorDataType::DT_UINT32, "DT_UINT32", "uint32", 32},
    {TensorDataType::DT_INT64, "DT_INT64", "int64", 64},
    {TensorDataType::DT_UINT64, "DT_UINT64", "uint64", 64},
    {TensorDataType::DT_DOUBLE, "DT_DOUBLE", "float64", 64},
    {TensorDataType::DT_BOOL, "DT_BOOL", "bool", 8},
    {TensorDataType::DT_QINT8, "DT_QINT8", nullptr, 8},
    {TensorDataType::DT_QINT16, "DT_QINT16", nullptr, 16},
    {TensorDataType::DT_QINT32, "DT_QINT32", nullptr, 32},
    {TensorDataType::DT_QUINT8, "DT_QUINT8", nullptr, 8},
    {TensorDataType::DT_QUINT16, "DT_QUINT16", nullptr, 16},
    {TensorDataType::DT_DUAL, "DT_DUAL", nullptr, 40},  // float + int8, as GE
    {TensorDataType::DT_BF16, "DT_BF16", "bfloat16", 16},
    {TensorDataType::DT_INT4, "DT_INT4", nullptr, 4},
    {TensorDataType::DT_UINT1, "DT_UINT1", nullptr, 1},
    {TensorDataType::DT_INT2, "DT_INT2", nullptr, 2},
    {TensorDataType::DT_UINT2, "DT_UINT2", nullptr, 2},
};
}  // namespace

const DataTypeInfo* FindDataType(TensorDataType dtype) {
  for (const DataTypeInfo& d : kDataTypes) {
    if (d.dtype == dtype) return &d;
  }
  return nullptr;
}

const DataTypeInfo* FindDataTypeByGeName(const std::string& name) {
  for (const DataTypeInfo& d : kDataTypes) {
    if (name == d.ge_name) return &d;
  }
  return nullptr;
}

const DataTypeInfo* FindDataTypeByHostName(const std::string& name) {
  for (const DataTypeInfo& d : kDataTypes) {
    if (d.host_name != nullptr && name == d.host_name) return &d;
  }
  return nullptr;
}

std::vector<DataTypeInfo> AllDataTypes() {
  return std::vector<DataTypeInfo>(std::begin(kDataTypes),
                                   std::end(kDataTypes));
}

int64_t DataTypeBits(TensorDataType dtype) {
  const DataTypeInfo* d = FindDataType(dtype);
  return d == nullptr ? -1 : d->bits;
}

int64_t DataTypeSize(TensorDataType dtype) {
  int64_t bits = DataTypeBits(dtype);
  if (bits < 0) return -1;
  return bits < 8 ? 1 : bits / 8;  // Sub-byte: see the header.
}

int64_t DataSizeBytes(TensorDataType dtype, int64_t element_count) {
  int64_t bits = DataTypeBits(dtype);
  if (bits < 0 || element_count < 0) return -1;
  if (element_count > (std::numeric_limits<int64_t>::max() - 7) / bits)
    return -1;
  return (element_count * bits + 7) / 8;
}

int64_t ElementCount(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return -1;
    if (dim != 0 && count > std::numeric_limits<int64_t>::max() / dim)
      return -1;
    count *= dim;
  }
  return count;
}

bool IsValidAlign(uint32_t align) {
  return align >= 32 && align <= 1024 && 1024 % align == 0;
}

std::shared_ptr<HostTensor> HostTensor::Create(
    const std::vector<int64_t>& shape, TensorDataType dtype, uint32_t align) {
  int64_t count = ElementCount(shape);
  int64_t bytes = DataSizeBytes(dtype, count);
  if (count < 0 || bytes < 0 || !IsValidAlign(align) ||
      bytes > std::numeric_limits<int64_t>::max() - align) {
    return nullptr;
  }
  // A zero-byte tensor still gets one aligned block so GetData is non-null.
  uint64_t buffer_size =
      std::max<uint64_t>((bytes + align - 1) / align * align, align);
  void* memory = std::aligned_alloc(align, buffer_size);
  if (memory == nullptr) return nullptr;
  std::memset(memory, 0, buffer_size);
  std::shared_ptr<HostTensor> tensor(new HostTensor());
  tensor->buffer_.reset(memory);
  tensor->shape_ = shape;
  tensor->dtype_ = dtype;
  tensor->element_cnt_ = count;
  tensor->data_size_ = static_cast<uint64_t>(bytes);
  tensor->buffer_size_ = buffer_size;
  return tensor;
}

int32_t HostTensor::Reshape(const std::vector<int64_t>& shape) {
  if (ElementCount(shape) != element_cnt_) return FLOW_FUNC_ERR_PARAM_INVALID;
  shape_ = shape;
  return FLOW_FUNC_SUCCESS;
}

TensorAllocator SetTensorAllocator(TensorAllocator allocator) {
  TensorAllocator previous = tls_allocator ? *tls_allocator : TensorAllocator();
  tls_owned = std::move(allocator);
  tls_allocator = tls_owned ? &tls_owned : nullptr;
  return previous;
}

const TensorAllocator* SwapTensorAllocator(const TensorAllocator* allocator) {
  const TensorAllocator* previous = tls_allocator;
  tls_allocator = allocator != nullptr && *allocator ? allocator : nullptr;
  return previous;
}

}  // namespace internal

std::shared_ptr<Tensor> FlowBufferFactory::AllocTensor(
    const std::vector<int64_t>& shape, TensorDataType dataType,
    uint32_t align) {
  // Validate here so the runtime's allocator and the fallback agree.
  if (internal::ElementCount(shape) < 0 ||
      internal::DataTypeBits(dataType) < 0 || !internal::IsValidAlign(align)) {
    FLOW_FUNC_LOG_ERROR(
        "AllocTensor: invalid request (%zu dims, dtype %d, align %u)",
        shape.size(), static_cast<int>(dataType), align);
    return nullptr;
  }
  try {
    if (internal::tls_allocator != nullptr)
      return (*internal::tls_allocator)(shape, dataType, align);
    return internal::HostTensor::Create(shape, dataType, align);
  } catch (const std::exception& e) {
    FLOW_FUNC_LOG_ERROR("AllocTensor failed: %s", e.what());
  } catch (...) {
    FLOW_FUNC_LOG_ERROR("AllocTensor failed: unknown exception");
  }
  return nullptr;
}

}  // namespace FlowFunc
