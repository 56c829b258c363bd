// GE's uint32 status codes as the dflow API returns them, and the mapping
// between them and hflow::Status, for the GE-compatible layers: hflow's own
// API speaks Status; a layer that offers GE's signatures turns each Status
// into GE's code (GeCodeOf, GeFetchCode) and a GE code it is handed back
// into a Status (StatusOfGeCode). Note [GE codes] in ge_codes.cc says
// where each value and rule comes from.
//
// Thread-safety: constants and pure functions.
#ifndef HFLOW_SESSION_GE_CODES_H_
#define HFLOW_SESSION_GE_CODES_H_

#include <cstdint>

#include "hflow/status.h"

namespace hflow {
namespace ge {

inline constexpr uint32_t kGeSuccess = 0;
inline constexpr uint32_t kGeFailed = 0xFFFFFFFFu;
inline constexpr uint32_t kGeParamInvalid = 145000;
inline constexpr uint32_t kGeExecNotInit = 145001;
inline constexpr uint32_t kGeMemoryAllocation = 245000;
inline constexpr uint32_t kGeMemoryOperateFailed = 245001;
inline constexpr uint32_t kGeDeviceMemoryOperateFailed = 245002;
inline constexpr uint32_t kGeSubhealthy = 345102;
inline constexpr uint32_t kGeUserRaiseException = 345103;
inline constexpr uint32_t kGeDataNotAligned = 345104;
inline constexpr uint32_t kGeInternalError = 545000;
inline constexpr uint32_t kGeModelExecuteTimeout = 545601;
inline constexpr uint32_t kGeRedeploying = 545602;
inline constexpr uint32_t kGeEndOfSequence = 1343225863;
// The largest code GE's dflow API passes through as is (a UDF's own codes
// included); anything above becomes kGeFailed.
inline constexpr uint32_t kGeMaxExternalCode = 9999999;

// GE's code for an hflow status (kGeSuccess for OK).
uint32_t GeCodeOf(const Status& status);

// Which of GE's fetch calls is answered: FetchDataFlowGraph with tensors
// (and DataFlowInfo) or with FlowMsgs.
enum class GeFetchApi { kTensors, kFlowMsgs };

// What else GeFetchCode needs to know about the fetch.
struct GeFetchFacts {
  GeFetchApi api = GeFetchApi::kTensors;
  // The transaction was ended by a UDF's RaiseException, exception catch on.
  bool raised_exception = false;
  // An output carried the end-of-sequence flag.
  bool end_of_sequence = false;
  int32_t timeout_ms = -1;  // the fetch's timeout
};

// What GE's fetch returns for a fetch that ended with `status` and, when it
// is OK, carried the UDF's `udf_ret_code` (FlowInfo::ret_code).
uint32_t GeFetchCode(const Status& status, int32_t udf_ret_code,
                     const GeFetchFacts& facts = {});

// The hflow status for a GE code; the message names the code and its name.
Status StatusOfGeCode(uint32_t code);

// "SUCCESS", "ACL_ERROR_GE_PARAM_INVALID", ...; "USER_CODE" for other codes
// up to kGeMaxExternalCode, "UNKNOWN" for the rest.
const char* GeCodeName(uint32_t code);

}  // namespace ge
}  // namespace hflow

#endif  // HFLOW_SESSION_GE_CODES_H_
