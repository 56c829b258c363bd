// Element types of FlowFunc tensors. The numeric values are part of the
// contract (they travel in message heads and attributes), so gaps are kept.
#ifndef HFLOW_FLOW_FUNC_TENSOR_DATA_TYPE_H_
#define HFLOW_FLOW_FUNC_TENSOR_DATA_TYPE_H_

#include <cstdint>

namespace FlowFunc {

enum class TensorDataType : int32_t {
  DT_FLOAT = 0,
  DT_FLOAT16 = 1,
  DT_INT8 = 2,
  DT_INT32 = 3,
  DT_UINT8 = 4,
  DT_INT16 = 6,
  DT_UINT16 = 7,
  DT_UINT32 = 8,
  DT_INT64 = 9,
  DT_UINT64 = 10,
  DT_DOUBLE = 11,
  DT_BOOL = 12,
  DT_QINT8 = 18,
  DT_QINT16 = 19,
  DT_QINT32 = 20,
  DT_QUINT8 = 21,
  DT_QUINT16 = 22,
  DT_DUAL = 25,
  DT_BF16 = 27,
  DT_INT4 = 29,
  DT_UINT1 = 30,
  DT_INT2 = 31,
  DT_UINT2 = 32,
  DT_UNDEFINED  // One past the last defined type (33).
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_TENSOR_DATA_TYPE_H_
