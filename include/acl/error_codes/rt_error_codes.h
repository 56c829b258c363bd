// ACL's runtime error codes (CANN's acl/error_codes/rt_error_codes.h, the
// part hflow returns or users commonly test), with the numbers CANN gives
// them. The 1xxxxx codes are caller errors, 2xxxxx resource errors and
// 5xxxxx internal errors. docs/user_guide.md ("ACL's context API") says
// which hflow condition each one reports.
//
// A C header: it compiles as C99 and as C++11 and later.
// Thread-safety: constants only.
#ifndef HFLOW_ACL_ERROR_CODES_RT_ERROR_CODES_H_
#define HFLOW_ACL_ERROR_CODES_RT_ERROR_CODES_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

static const int32_t ACL_RT_SUCCESS = 0;

static const int32_t ACL_ERROR_RT_PARAM_INVALID = 107000;
static const int32_t ACL_ERROR_RT_INVALID_DEVICEID = 107001;
static const int32_t ACL_ERROR_RT_CONTEXT_NULL = 107002;
static const int32_t ACL_ERROR_RT_STREAM_CONTEXT = 107003;
static const int32_t ACL_ERROR_RT_MODEL_CONTEXT = 107004;
static const int32_t ACL_ERROR_RT_ADDR_UNALIGNED = 107008;
static const int32_t ACL_ERROR_RT_INVALID_MEMORY_TYPE = 107016;
static const int32_t ACL_ERROR_RT_INVALID_HANDLE = 107017;
static const int32_t ACL_ERROR_RT_INVALID_MALLOC_TYPE = 107018;

static const int32_t ACL_ERROR_RT_FEATURE_NOT_SUPPORT = 207000;
static const int32_t ACL_ERROR_RT_MEMORY_ALLOCATION = 207001;
static const int32_t ACL_ERROR_RT_MEMORY_FREE = 207002;
static const int32_t ACL_ERROR_RT_NO_DEVICE = 207004;
static const int32_t ACL_ERROR_RT_RESOURCE_ALLOC_FAIL = 207005;
static const int32_t ACL_ERROR_RT_NO_PERMISSION = 207006;

static const int32_t ACL_ERROR_RT_INTERNAL_ERROR = 507000;
static const int32_t ACL_ERROR_RT_CONTEXT_RELEASE_ERROR = 507007;
static const int32_t ACL_ERROR_RT_LOST_HEARTBEAT = 507010;
static const int32_t ACL_ERROR_RT_REPORT_TIMEOUT = 507012;
static const int32_t ACL_ERROR_RT_DEV_SETUP_ERROR = 507033;
static const int32_t ACL_ERROR_RT_DRV_INTERNAL_ERROR = 507899;

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // HFLOW_ACL_ERROR_CODES_RT_ERROR_CODES_H_
