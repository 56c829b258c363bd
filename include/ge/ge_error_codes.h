// GE's ACL_ERROR_GE_* status codes, as GE's DataFlow API returns them
// (docs/coming_from_ge.md lists what hflow returns each one for).
//
// Thread-safety: constants only.
#ifndef HFLOW_GE_GE_ERROR_CODES_H_
#define HFLOW_GE_GE_ERROR_CODES_H_

#include <stddef.h>
#include <stdint.h>

#ifndef GE_FUNC_VISIBILITY
#define GE_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif
static const uint32_t ACL_ERROR_GE_PARAM_INVALID = 145000U;
static const uint32_t ACL_ERROR_GE_EXEC_NOT_INIT = 145001U;
static const uint32_t ACL_ERROR_GE_EXEC_MODEL_ID_INVALID = 145003U;
static const uint32_t ACL_ERROR_GE_SHAPE_INVALID = 145021U;
static const uint32_t ACL_ERROR_GE_DATATYPE_INVALID = 145022U;
static const uint32_t ACL_ERROR_GE_MEMORY_ALLOCATION = 245000U;
static const uint32_t ACL_ERROR_GE_MEMORY_OPERATE_FAILED = 245001U;
static const uint32_t ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED = 245002U;
static const uint32_t ACL_ERROR_GE_SUBHEALTHY = 345102U;
static const uint32_t ACL_ERROR_GE_USER_RAISE_EXCEPTION = 345103U;
static const uint32_t ACL_ERROR_GE_DATA_NOT_ALIGNED = 345104U;
static const uint32_t ACL_ERROR_GE_INTERNAL_ERROR = 545000U;
static const uint32_t ACL_ERROR_GE_LOAD_MODEL = 545001U;
static const uint32_t ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT = 545601U;
static const uint32_t ACL_ERROR_GE_REDEPLOYING = 545602U;
#ifdef __cplusplus
}
#endif

#endif  // HFLOW_GE_GE_ERROR_CODES_H_
