// The shared parts of every ACL call (acl/acl_call.h).
//
// Thread-safety: reentrant; one fprintf per failure keeps each log line
// whole when threads fail at once.
#include "acl/acl_call.h"

#include <algorithm>
#include <cstdio>
#include <optional>

#include "rt/sim/sim_runtime.h"
#include "util/thread_name.h"

namespace hflow {
namespace acl {

aclError Fail(const CallText& call, aclError code, std::string_view message) {
  const std::string line = "hflow acl: " + call() + ": " +
                           std::string(message) + " [ACL error " +
                           std::to_string(code) + "]\n";
  std::fputs(line.c_str(), stderr);
  return code;
}

aclError AclCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return ACL_SUCCESS;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
      // The runtime rejected an argument ACL's own checks let through: an
      // unknown or dead context handle, a pointer that is no allocation.
      return ACL_ERROR_RT_PARAM_INVALID;
    case StatusCode::kNoContext:
      return ACL_ERROR_RT_CONTEXT_NULL;
    case StatusCode::kFailedPrecondition:
      // Only ResetDevice without a SetDevice reference gets here (the
      // missing runtime is caught before any call): the default context
      // the call would release is not held.
      return ACL_ERROR_RT_CONTEXT_NULL;
    case StatusCode::kContextMismatch:
      return ACL_ERROR_RESOURCE_NOT_MATCH;
    case StatusCode::kDeviceLost:
      return ACL_ERROR_RT_LOST_HEARTBEAT;
    case StatusCode::kOutOfMemory:
    case StatusCode::kResourceExhausted:
      return ACL_ERROR_RT_MEMORY_ALLOCATION;
    case StatusCode::kTimeout:
      return ACL_ERROR_RT_REPORT_TIMEOUT;
    case StatusCode::kNotSupported:
      return ACL_ERROR_FEATURE_UNSUPPORTED;
    case StatusCode::kPermissionDenied:
      return ACL_ERROR_RT_NO_PERMISSION;
    default:
      return ACL_ERROR_RT_INTERNAL_ERROR;
  }
}

aclError FromStatus(const CallText& call, const Status& s) {
  if (s.ok()) return ACL_SUCCESS;
  return Fail(call, AclCode(s.code()), s.message());
}

rt::DeviceRuntime* RuntimeOrFail(const CallText& call, aclError* err) {
  rt::DeviceRuntime* r = rt::CurrentRuntime();
  if (r == nullptr) {
    *err = Fail(call, ACL_ERROR_UNINITIALIZE,
                "ACL is not initialized (no device runtime is installed); "
                "call aclInit first, or hflow::Initialize");
  }
  return r;
}

aclError CheckDevice(rt::DeviceRuntime& runtime, const CallText& call,
                     int32_t device) {
  const std::vector<int32_t> ids = runtime.DeviceIds();
  if (std::find(ids.begin(), ids.end(), device) != ids.end()) {
    return ACL_SUCCESS;
  }
  return Fail(call, ACL_ERROR_RT_INVALID_DEVICEID,
              "device " + std::to_string(device) +
                  " is not in the cluster (devices " + DeviceList(ids) +
                  "); use one of those, or name another cluster with "
                  "RESOURCE_CONFIG_PATH before aclInit");
}

aclError CurrentDevice(rt::DeviceRuntime& runtime, const CallText& call,
                       int32_t* device) {
  Status s = rt::GetDevice(device);
  if (s.ok()) return ACL_SUCCESS;
  if (s.code() != StatusCode::kNoContext) return FromStatus(call, s);
  std::optional<int32_t> fallback = runtime.DefaultDevice();
  const auto* sim = dynamic_cast<const rt::SimRuntime*>(&runtime);
  if (!fallback && sim != nullptr &&
      sim->CtxCheck() != rt::ctxcheck::Mode::kOff) {
    // hflow ctxcheck: the sim records the unbound call, so it must reach
    // the sim; its lowest device stands in for the device the program
    // meant (report: continues there; strict: fails with EE1018 there).
    const std::vector<int32_t> ids = runtime.DeviceIds();
    if (!ids.empty()) fallback = ids.front();
  }
  if (fallback) {
    // The runtime binds the default device's context to this thread when
    // the call reaches it, and counts it (the quirk that lets programs
    // forgetting aclrtSetDevice work on device 0, by luck).
    *device = *fallback;
    return ACL_SUCCESS;
  }
  return Fail(call, ACL_ERROR_RT_CONTEXT_NULL,
              "no valid context is bound to the current thread '" +
                  util::CurrentThreadName() +
                  "' (EE1018), and the cluster (devices " +
                  DeviceList(runtime.DeviceIds()) +
                  ") has no default device to fall back to; call "
                  "aclrtSetDevice or aclrtSetCurrentContext on this thread "
                  "first");
}

std::string DeviceList(const std::vector<int32_t>& ids) {
  if (ids.empty()) return "none";
  bool contiguous = true;
  for (size_t i = 1; i < ids.size(); ++i) {
    if (ids[i] != ids[i - 1] + 1) contiguous = false;
  }
  if (contiguous && ids.size() > 2) {
    return std::to_string(ids.front()) + ".." + std::to_string(ids.back());
  }
  std::string out;
  for (int32_t id : ids) {
    out += (out.empty() ? "" : ",") + std::to_string(id);
  }
  return out;
}

std::string PointerText(const void* p) {
  if (p == nullptr) return "NULL";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p", p);
  return buf;
}

}  // namespace acl
}  // namespace hflow
