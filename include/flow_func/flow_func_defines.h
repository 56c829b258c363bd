// Common definitions of the FlowFunc UDF API: the export macro and the status
// codes every API call returns. Compiles as C++11; values match CANN DataFlow
// so UDF sources written against it build unchanged.
#ifndef HFLOW_FLOW_FUNC_FLOW_FUNC_DEFINES_H_
#define HFLOW_FLOW_FUNC_FLOW_FUNC_DEFINES_H_

#include <cstdint>

// Marks classes and functions exported by libflow_func.so (and UDF classes
// whose typeinfo must be shared across shared objects).
#ifndef FLOW_FUNC_VISIBILITY
#define FLOW_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace FlowFunc {

constexpr int32_t FLOW_FUNC_SUCCESS = 0;

// Caller errors.
constexpr int32_t FLOW_FUNC_ERR_PARAM_INVALID = 164000;
constexpr int32_t FLOW_FUNC_ERR_ATTR_NOT_EXITS =
    164001;  // Spelling is the API's.
constexpr int32_t FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH = 164002;

// Resource errors.
constexpr int32_t FLOW_FUNC_ERR_DATA_ALIGN_FAILED = 364000;

// Runtime errors and states.
constexpr int32_t FLOW_FUNC_FAILED = 564000;
constexpr int32_t FLOW_FUNC_ERR_TIME_OUT_ERROR = 564001;
constexpr int32_t FLOW_FUNC_ERR_NOT_SUPPORT = 564002;
constexpr int32_t FLOW_FUNC_STATUS_REDEPLOYING = 564003;
constexpr int32_t FLOW_FUNC_STATUS_EXIT = 564004;

// Driver-level errors.
constexpr int32_t FLOW_FUNC_ERR_DRV_ERROR = 564100;
constexpr int32_t FLOW_FUNC_ERR_MEM_BUF_ERROR = 564101;
constexpr int32_t FLOW_FUNC_ERR_QUEUE_ERROR = 564102;
constexpr int32_t FLOW_FUNC_ERR_EVENT_ERROR = 564103;

// Range reserved for codes UDFs define themselves (inclusive).
constexpr int32_t FLOW_FUNC_ERR_USER_DEFINE_START = 9900000;
constexpr int32_t FLOW_FUNC_ERR_USER_DEFINE_END = 9999999;

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_FLOW_FUNC_DEFINES_H_
