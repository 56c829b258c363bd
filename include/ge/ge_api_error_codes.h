// ge::Status and GE's general codes (SUCCESS, FAILED, END_OF_SEQUENCE),
// with the ACL_ERROR_GE_* codes of ge/ge_error_codes.h.
//
// Thread-safety: constants only.
#ifndef HFLOW_GE_GE_API_ERROR_CODES_H_
#define HFLOW_GE_GE_API_ERROR_CODES_H_

#include <cstdint>

#include "ge/ge_error_codes.h"
#include "graph/ascend_string.h"
#include "graph/error_codes.h"

namespace ge {
using Status = uint32_t;
constexpr Status SUCCESS = 0U;
constexpr Status FAILED = 0xFFFFFFFFU;
// A fetch met the end of the stream (GE's END_OF_SEQUENCE).
constexpr Status END_OF_SEQUENCE = 1343225863U;
// What GE's FlowMsg calls return for an operation the message does not
// support (GetRawData on a tensor message); one of GE's inner codes.
constexpr Status UNSUPPORTED = 1343225956U;
}  // namespace ge

#endif  // HFLOW_GE_GE_API_ERROR_CODES_H_
