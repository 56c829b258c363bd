// What every ACL call of libascendcl shares: the runtime check before
// aclInit, device-id checks against the cluster, "the current device" of a
// call without a device argument, hflow Status codes mapped to ACL's error
// codes, and the one stderr line each failure writes ("hflow acl:
// aclrtSetDevice(9): device 9 is not in the cluster (devices 0..3); ...").
//
// Each call names itself with a callable returning its text (name and
// arguments), evaluated only on a failure, so that successful calls build
// no strings.
//
// Thread-safety: all functions are reentrant; they read the installed
// runtime, which aclInit/aclFinalize change only while no call runs.
#ifndef HFLOW_ACL_ACL_CALL_H_
#define HFLOW_ACL_ACL_CALL_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "acl/acl_base.h"
#include "hflow/rt.h"
#include "hflow/status.h"

namespace hflow {
namespace acl {

// The text naming a call and its arguments, e.g. "aclrtSetDevice(9)".
using CallText = std::function<std::string()>;

// Writes "hflow acl: <call>: <message>" to stderr as one line and returns
// `code`.
aclError Fail(const CallText& call, aclError code, std::string_view message);

// The ACL code reporting a runtime error of `code` (docs/user_guide.md,
// "ACL's context API"): kNoContext -> ACL_ERROR_RT_CONTEXT_NULL,
// kOutOfMemory -> ACL_ERROR_RT_MEMORY_ALLOCATION, and so on.
aclError AclCode(StatusCode code);

// ACL_SUCCESS for OK; otherwise Fail with AclCode(s.code()) and s's message.
aclError FromStatus(const CallText& call, const Status& s);

// The installed runtime; nullptr after failing with ACL_ERROR_UNINITIALIZE
// (*err) when there is none (before aclInit and hflow::Initialize).
rt::DeviceRuntime* RuntimeOrFail(const CallText& call, aclError* err);

// ACL_SUCCESS when `device` is one of the runtime's; otherwise fails with
// ACL_ERROR_RT_INVALID_DEVICEID naming the devices there are.
aclError CheckDevice(rt::DeviceRuntime& runtime, const CallText& call,
                     int32_t device);

// The device a call without a device argument works on: that of the
// thread's current context; on a thread without one, the runtime's default
// device (the runtime then binds it implicitly, as CANN's does); without a
// default device, fails with ACL_ERROR_RT_CONTEXT_NULL.
aclError CurrentDevice(rt::DeviceRuntime& runtime, const CallText& call,
                       int32_t* device);

// "0..3" for a contiguous run, "3,6,7" otherwise ("none" when empty).
std::string DeviceList(const std::vector<int32_t>& ids);
// "0x7f..." (or "NULL") for messages.
std::string PointerText(const void* p);

}  // namespace acl
}  // namespace hflow

#endif  // HFLOW_ACL_ACL_CALL_H_
