// GE's basic graph types: DataType and Format with GE's numbers (a tensor's
// dtype crosses into a UDF as the same TensorDataType value), Placement, and
// the element sizes GE's helpers report.
//
// Thread-safety: constants and pure functions.
#ifndef HFLOW_GE_GRAPH_TYPES_H_
#define HFLOW_GE_GRAPH_TYPES_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "graph/error_codes.h"

namespace ge {
using char_t = char;
using float32_t = float;
using float64_t = double;

static const int64_t UNKNOWN_DIM = -1;
static const int64_t UNKNOWN_DIM_NUM = -2;
static const std::vector<int64_t> UNKNOWN_SHAPE = {-1};
static const std::vector<int64_t> UNKNOWN_RANK = {-2};
static constexpr int32_t kDataTypeSizeBitOffset = 1000;

enum DataType {
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
  DT_STRING = 13,
  DT_DUAL_SUB_INT8 = 14,
  DT_DUAL_SUB_UINT8 = 15,
  DT_COMPLEX64 = 16,
  DT_COMPLEX128 = 17,
  DT_QINT8 = 18,
  DT_QINT16 = 19,
  DT_QINT32 = 20,
  DT_QUINT8 = 21,
  DT_QUINT16 = 22,
  DT_RESOURCE = 23,
  DT_STRING_REF = 24,
  DT_DUAL = 25,
  DT_VARIANT = 26,
  DT_BF16 = 27,
  DT_UNDEFINED = 28,
  DT_INT4 = 29,
  DT_UINT1 = 30,
  DT_INT2 = 31,
  DT_UINT2 = 32,
  DT_COMPLEX32 = 33,
  DT_HIFLOAT8 = 34,
  DT_FLOAT8_E5M2 = 35,
  DT_FLOAT8_E4M3FN = 36,
  DT_FLOAT8_E8M0 = 37,
  DT_FLOAT6_E3M2 = 38,
  DT_FLOAT6_E2M3 = 39,
  DT_FLOAT4_E2M1 = 40,
  DT_FLOAT4_E1M2 = 41,
  DT_HIFLOAT4 = 42,
  DT_MAX = 43
};

// Bytes per element; -1 for types without a fixed size (strings,
// undefined) and kDataTypeSizeBitOffset + bits for sub-byte types, as GE.
inline int GetSizeByDataType(DataType data_type) {
  static const int kSizes[DT_MAX] = {4,
                                     2,
                                     1,
                                     4,
                                     1,
                                     -1,
                                     2,
                                     2,
                                     4,
                                     8,
                                     8,
                                     8,
                                     1,
                                     -1,
                                     1,
                                     1,
                                     8,
                                     16,
                                     1,
                                     2,
                                     4,
                                     1,
                                     2,
                                     8,
                                     -1,
                                     5,
                                     8,
                                     2,
                                     -1,
                                     kDataTypeSizeBitOffset + 4,
                                     kDataTypeSizeBitOffset + 1,
                                     kDataTypeSizeBitOffset + 2,
                                     kDataTypeSizeBitOffset + 2,
                                     4,
                                     1,
                                     1,
                                     1,
                                     1,
                                     kDataTypeSizeBitOffset + 6,
                                     kDataTypeSizeBitOffset + 6,
                                     kDataTypeSizeBitOffset + 4,
                                     kDataTypeSizeBitOffset + 4,
                                     kDataTypeSizeBitOffset + 4};
  if (data_type < 0 || data_type >= DT_MAX) return -1;
  return kSizes[data_type];
}

// Bytes of `element_count` elements; -1 for a type without a fixed size or
// a negative count.
int64_t GetSizeInBytes(int64_t element_count, DataType data_type);

enum Format {
  FORMAT_NCHW = 0,
  FORMAT_NHWC = 1,
  FORMAT_ND = 2,
  FORMAT_NC1HWC0 = 3,
  FORMAT_FRACTAL_Z = 4,
  FORMAT_NC1C0HWPAD = 5,
  FORMAT_NHWC1C0 = 6,
  FORMAT_FSR_NCHW = 7,
  FORMAT_FRACTAL_DECONV = 8,
  FORMAT_C1HWNC0 = 9,
  FORMAT_FRACTAL_DECONV_TRANSPOSE = 10,
  FORMAT_FRACTAL_DECONV_SP_STRIDE_TRANS = 11,
  FORMAT_NC1HWC0_C04 = 12,
  FORMAT_FRACTAL_Z_C04 = 13,
  FORMAT_CHWN = 14,
  FORMAT_FRACTAL_DECONV_SP_STRIDE8_TRANS = 15,
  FORMAT_HWCN = 16,
  FORMAT_NC1KHKWHWC0 = 17,
  FORMAT_BN_WEIGHT = 18,
  FORMAT_FILTER_HWCK = 19,
  FORMAT_HASHTABLE_LOOKUP_LOOKUPS = 20,
  FORMAT_HASHTABLE_LOOKUP_KEYS = 21,
  FORMAT_HASHTABLE_LOOKUP_VALUE = 22,
  FORMAT_HASHTABLE_LOOKUP_OUTPUT = 23,
  FORMAT_HASHTABLE_LOOKUP_HITS = 24,
  FORMAT_C1HWNCoC0 = 25,
  FORMAT_MD = 26,
  FORMAT_NDHWC = 27,
  FORMAT_FRACTAL_ZZ = 28,
  FORMAT_FRACTAL_NZ = 29,
  FORMAT_NCDHW = 30,
  FORMAT_DHWCN = 31,
  FORMAT_NDC1HWC0 = 32,
  FORMAT_FRACTAL_Z_3D = 33,
  FORMAT_CN = 34,
  FORMAT_NC = 35,
  FORMAT_RESERVED = 40,
  FORMAT_ALL = 41,
  FORMAT_NULL = 42,
  FORMAT_MAX = 0xff
};

enum Placement { kPlacementHost = 0, kPlacementDevice = 1, kPlacementEnd };
}  // namespace ge

#endif  // HFLOW_GE_GRAPH_TYPES_H_
