// ACL's device and context calls on hflow::rt (hflow/rt.h): each checks its
// arguments as CANN does (NULL outputs, device ids of the cluster), then
// forwards to the rt call of the same meaning, whose errors map to ACL's
// codes (acl/acl_call.h).
//
//   aclrtSetDevice         -> rt::SetDevice
//   aclrtResetDevice       -> rt::ResetDevice
//   aclrtGetDevice         -> rt::GetDevice
//   aclrtGetDeviceCount    -> the runtime's DeviceIds().size()
//   aclrtSynchronizeDevice -> rt::Synchronize (the current device)
//   aclrtCreateContext     -> rt::CreateContext
//   aclrtDestroyContext    -> rt::DestroyContext
//   aclrtSetCurrentContext -> rt::SetCurrentContext
//   aclrtGetCurrentContext -> rt::GetCurrentContext
//
// These calls are the context API: they change the calling thread's
// binding on purpose, exactly as their rt counterparts do, and nothing else.
//
// Thread-safety: every call may be made from any thread; bindings are per
// thread (the runtime's).
#include <string>

#include "acl/acl_call.h"
#include "acl/acl_rt.h"
#include "hflow/rt.h"

namespace {

namespace acl = hflow::acl;
namespace rt = hflow::rt;
using acl::CallText;

rt::Context* ToContext(aclrtContext c) { return static_cast<rt::Context*>(c); }

aclError NullArgument(const CallText& call, const char* name) {
  return acl::Fail(call, ACL_ERROR_INVALID_PARAM,
                   std::string(name) + " is NULL; pass a valid pointer");
}

}  // namespace

extern "C" aclError aclrtSetDevice(int32_t deviceId) {
  const CallText call = [&] {
    return "aclrtSetDevice(" + std::to_string(deviceId) + ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  err = acl::CheckDevice(*r, call, deviceId);
  if (err != ACL_SUCCESS) return err;
  return acl::FromStatus(call, rt::SetDevice(deviceId));
}

extern "C" aclError aclrtResetDevice(int32_t deviceId) {
  const CallText call = [&] {
    return "aclrtResetDevice(" + std::to_string(deviceId) + ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  err = acl::CheckDevice(*r, call, deviceId);
  if (err != ACL_SUCCESS) return err;
  return acl::FromStatus(call, rt::ResetDevice(deviceId));
}

extern "C" aclError aclrtGetDevice(int32_t* deviceId) {
  const CallText call = [&] {
    return "aclrtGetDevice(" + acl::PointerText(deviceId) + ")";
  };
  aclError err = ACL_SUCCESS;
  if (acl::RuntimeOrFail(call, &err) == nullptr) return err;
  if (deviceId == nullptr) return NullArgument(call, "deviceId");
  hflow::Status s = rt::GetDevice(deviceId);
  if (s.code() == hflow::StatusCode::kNoContext) {
    return acl::Fail(call, ACL_ERROR_RT_CONTEXT_NULL,
                     s.message() +
                         "; call aclrtSetDevice or aclrtSetCurrentContext "
                         "on this thread first");
  }
  return acl::FromStatus(call, s);
}

extern "C" aclError aclrtGetDeviceCount(uint32_t* count) {
  const CallText call = [&] {
    return "aclrtGetDeviceCount(" + acl::PointerText(count) + ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  if (count == nullptr) return NullArgument(call, "count");
  *count = static_cast<uint32_t>(r->DeviceIds().size());
  return ACL_SUCCESS;
}

extern "C" aclError aclrtGetRunMode(aclrtRunMode* runMode) {
  const CallText call = [&] {
    return "aclrtGetRunMode(" + acl::PointerText(runMode) + ")";
  };
  aclError err = ACL_SUCCESS;
  if (acl::RuntimeOrFail(call, &err) == nullptr) return err;
  if (runMode == nullptr) return NullArgument(call, "runMode");
  *runMode = ACL_HOST;  // hflow's programs run on the host
  return ACL_SUCCESS;
}

extern "C" aclError aclrtSynchronizeDevice(void) {
  const CallText call = [] { return std::string("aclrtSynchronizeDevice()"); };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  int32_t device = -1;
  err = acl::CurrentDevice(*r, call, &device);
  if (err != ACL_SUCCESS) return err;
  return acl::FromStatus(call, rt::Synchronize(device));
}

extern "C" aclError aclrtCreateContext(aclrtContext* context,
                                       int32_t deviceId) {
  const CallText call = [&] {
    return "aclrtCreateContext(" + acl::PointerText(context) + ", " +
           std::to_string(deviceId) + ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  if (context == nullptr) return NullArgument(call, "context");
  err = acl::CheckDevice(*r, call, deviceId);
  if (err != ACL_SUCCESS) return err;
  rt::Context* ctx = nullptr;
  err = acl::FromStatus(call, rt::CreateContext(deviceId, &ctx));
  if (err == ACL_SUCCESS) *context = ctx;
  return err;
}

extern "C" aclError aclrtDestroyContext(aclrtContext context) {
  const CallText call = [&] {
    return "aclrtDestroyContext(" + acl::PointerText(context) + ")";
  };
  aclError err = ACL_SUCCESS;
  if (acl::RuntimeOrFail(call, &err) == nullptr) return err;
  if (context == nullptr) return NullArgument(call, "context");
  return acl::FromStatus(call, rt::DestroyContext(ToContext(context)));
}

extern "C" aclError aclrtSetCurrentContext(aclrtContext context) {
  const CallText call = [&] {
    return "aclrtSetCurrentContext(" + acl::PointerText(context) + ")";
  };
  aclError err = ACL_SUCCESS;
  if (acl::RuntimeOrFail(call, &err) == nullptr) return err;
  // CANN refuses NULL here (hflow::rt would unbind): ACL has no unbind.
  if (context == nullptr) return NullArgument(call, "context");
  return acl::FromStatus(call, rt::SetCurrentContext(ToContext(context)));
}

extern "C" aclError aclrtGetCurrentContext(aclrtContext* context) {
  const CallText call = [&] {
    return "aclrtGetCurrentContext(" + acl::PointerText(context) + ")";
  };
  aclError err = ACL_SUCCESS;
  if (acl::RuntimeOrFail(call, &err) == nullptr) return err;
  if (context == nullptr) return NullArgument(call, "context");
  *context = rt::GetCurrentContext();  // reads only; never binds
  if (*context == nullptr) {
    return acl::Fail(call, ACL_ERROR_RT_CONTEXT_NULL,
                     "the current thread has no context; call "
                     "aclrtSetDevice, aclrtCreateContext or "
                     "aclrtSetCurrentContext first");
  }
  return ACL_SUCCESS;
}
