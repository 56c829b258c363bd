// Host-side data types shared by the graph and session APIs.
//
// Thread-safety: plain values.
#ifndef HFLOW_TYPES_H_
#define HFLOW_TYPES_H_

#include <cstdint>

namespace hflow {

// Element types; the numbers are FlowFunc's TensorDataType values, so a
// tensor crosses into a UDF unchanged.
enum class DataType : int32_t {
  kFloat = 0,
  kFloat16 = 1,
  kInt8 = 2,
  kInt32 = 3,
  kUint8 = 4,
  kInt16 = 6,
  kUint16 = 7,
  kUint32 = 8,
  kInt64 = 9,
  kUint64 = 10,
  kDouble = 11,
  kBool = 12,
  kBf16 = 27,
};

}  // namespace hflow

#endif  // HFLOW_TYPES_H_
