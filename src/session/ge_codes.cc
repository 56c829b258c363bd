// GE code mapping (see ge_codes.h).
// Thread-safety: pure functions over constant tables.
#include "session/ge_codes.h"

#include <string>

namespace hflow {
namespace ge {
namespace {

// Note [GE codes]
// The values are GE's: the ACL_ERROR_GE_* constants of its public error
// code header, SUCCESS (0) and FAILED (every bit set: GE composes codes
// from bit fields, and FAILED sets all of them), and END_OF_SEQUENCE, an
// inner code (1343225863). GE's dflow API hands a code through only when it
// is at most 9999999; an inner code above becomes FAILED. So a fetch
// returns, in this order:
//  - ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT when nothing came within a
//    non-zero timeout; FAILED for timeout 0 (GE's queue-empty code is an
//    inner one);
//  - GeCodeOf for any other error;
//  - ACL_ERROR_GE_USER_RAISE_EXCEPTION for a transaction a UDF raised an
//    exception on while exception catch is on;
//  - with tensors: the UDF's ret code itself when an output carries one
//    (GE returns the first non-zero ret code of the aligned outputs as the
//    fetch status), FAILED when that code is negative or above 9999999;
//  - with FlowMsgs: FAILED when an output is end-of-sequence (GE's
//    executor says END_OF_SEQUENCE, which its API turns into FAILED, the
//    messages still delivered); the ret codes stay in the messages;
//  - SUCCESS otherwise.
// hflow statuses with a GE counterpart map onto it; the rest are FAILED, as
// GE reports them. The way back maps each GE code onto the nearest hflow
// code; codes that mean "the data came, but" (SUBHEALTHY) still become an
// error status, because a Status cannot be a warning.
struct Entry {
  uint32_t code;
  const char* name;
  StatusCode status;  // StatusOfGeCode's code
};

constexpr Entry kEntries[] = {
    {kGeSuccess, "SUCCESS", StatusCode::kOk},
    {kGeFailed, "FAILED", StatusCode::kInternal},
    {kGeParamInvalid, "ACL_ERROR_GE_PARAM_INVALID",
     StatusCode::kInvalidArgument},
    {kGeExecNotInit, "ACL_ERROR_GE_EXEC_NOT_INIT",
     StatusCode::kFailedPrecondition},
    {kGeMemoryAllocation, "ACL_ERROR_GE_MEMORY_ALLOCATION",
     StatusCode::kOutOfMemory},
    {kGeMemoryOperateFailed, "ACL_ERROR_GE_MEMORY_OPERATE_FAILED",
     StatusCode::kInternal},
    {kGeDeviceMemoryOperateFailed, "ACL_ERROR_GE_DEVICE_MEMORY_OPERATE_FAILED",
     StatusCode::kInternal},
    {kGeSubhealthy, "ACL_ERROR_GE_SUBHEALTHY", StatusCode::kDeviceLost},
    {kGeUserRaiseException, "ACL_ERROR_GE_USER_RAISE_EXCEPTION",
     StatusCode::kFailedPrecondition},
    {kGeDataNotAligned, "ACL_ERROR_GE_DATA_NOT_ALIGNED",
     StatusCode::kNotAligned},
    {kGeInternalError, "ACL_ERROR_GE_INTERNAL_ERROR", StatusCode::kInternal},
    {kGeModelExecuteTimeout, "ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT",
     StatusCode::kTimeout},
    {kGeRedeploying, "ACL_ERROR_GE_REDEPLOYING", StatusCode::kDeviceLost},
    {kGeEndOfSequence, "END_OF_SEQUENCE", StatusCode::kCancelled},
};

const Entry* Find(uint32_t code) {
  for (const Entry& e : kEntries) {
    if (e.code == code) return &e;
  }
  return nullptr;
}

// What the code means, for StatusOfGeCode's message.
const char* Meaning(uint32_t code) {
  switch (code) {
    case kGeSubhealthy:
      return "the outputs are valid, but the graph was redeployed after a "
             "device failure";
    case kGeUserRaiseException:
      return "a UDF raised an exception for this transaction";
    case kGeDataNotAligned:
      return "the outputs could not be aligned (the alignment cache "
             "overflowed or timed out)";
    case kGeModelExecuteTimeout:
      return "nothing arrived within the timeout";
    case kGeRedeploying:
      return "the graph is being redeployed after a device failure";
    case kGeEndOfSequence:
      return "the stream ended";
    default:
      return nullptr;
  }
}

}  // namespace

uint32_t GeCodeOf(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return kGeSuccess;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      return kGeParamInvalid;
    case StatusCode::kTimeout:
      return kGeModelExecuteTimeout;
    case StatusCode::kOutOfMemory:
      return kGeMemoryAllocation;
    case StatusCode::kInternal:
      return kGeInternalError;
    case StatusCode::kNotAligned:
      return kGeDataNotAligned;
    default:
      // No context, a context mismatch, a lost device, exhausted pools or
      // queues, a failed precondition (not initialized, not built, a UDF's
      // Init failed), an existing id, a denied permission, a cancelled
      // call, an unsupported feature: GE's API reports these as FAILED.
      return kGeFailed;
  }
}

uint32_t GeFetchCode(const Status& status, int32_t udf_ret_code,
                     const GeFetchFacts& facts) {
  if (status.IsTimeout() && facts.timeout_ms == 0) return kGeFailed;
  if (!status.ok()) return GeCodeOf(status);
  if (facts.raised_exception) return kGeUserRaiseException;
  if (facts.api == GeFetchApi::kFlowMsgs) {
    return facts.end_of_sequence ? kGeFailed : kGeSuccess;
  }
  if (udf_ret_code == 0) return kGeSuccess;
  if (udf_ret_code < 0 ||
      static_cast<uint32_t>(udf_ret_code) > kGeMaxExternalCode) {
    return kGeFailed;
  }
  return static_cast<uint32_t>(udf_ret_code);
}

Status StatusOfGeCode(uint32_t code) {
  if (code == kGeSuccess) return Status::OK();
  const std::string head = std::string("GE code ") + std::to_string(code) +
                           " (" + GeCodeName(code) + ")";
  if (const Entry* e = Find(code)) {
    const char* meaning = Meaning(code);
    return Status(e->status, meaning ? head + ": " + meaning : head);
  }
  if (code <= kGeMaxExternalCode) {
    return Status::FailedPrecondition(head + ": a UDF returned this code");
  }
  return Status::Internal(head + ": not a code hflow knows");
}

const char* GeCodeName(uint32_t code) {
  if (const Entry* e = Find(code)) return e->name;
  return code <= kGeMaxExternalCode ? "USER_CODE" : "UNKNOWN";
}

}  // namespace ge
}  // namespace hflow
