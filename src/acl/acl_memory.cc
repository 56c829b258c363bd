// ACL's memory calls on hflow::rt: aclrtMalloc, aclrtFree, aclrtMemcpy,
// aclrtMemset and aclrtGetMemInfo work on the device of the calling
// thread's current context (acl::CurrentDevice says what happens on a
// thread without one) through rt::Malloc, rt::Free, rt::Memcpy, rt::Memset
// and rt::GetMemInfo, which check the binding as every device call does.
// Host memory (aclrtMallocHost) is plain heap memory.
//
// Thread-safety: every call may be made from any thread.
#include <cstdlib>
#include <cstring>
#include <string>

#include "acl/acl_call.h"
#include "acl/acl_rt.h"
#include "hflow/rt.h"

namespace {

namespace acl = hflow::acl;
namespace rt = hflow::rt;
using acl::CallText;

aclError NullArgument(const CallText& call, const char* name) {
  return acl::Fail(call, ACL_ERROR_INVALID_PARAM,
                   std::string(name) + " is NULL; pass a valid pointer");
}

std::string Num(size_t n) { return std::to_string(n); }

}  // namespace

extern "C" aclError aclrtMalloc(void** devPtr, size_t size,
                                aclrtMemMallocPolicy policy) {
  const CallText call = [&] {
    return "aclrtMalloc(" + acl::PointerText(devPtr) + ", " + Num(size) + ", " +
           std::to_string(static_cast<int>(policy)) + ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  if (devPtr == nullptr) return NullArgument(call, "devPtr");
  if (size == 0) {
    return acl::Fail(call, ACL_ERROR_INVALID_PARAM,
                     "size is 0; allocate at least one byte");
  }
  const int p = static_cast<int>(policy);
  if (p < ACL_MEM_MALLOC_HUGE_FIRST || p > ACL_MEM_MALLOC_NORMAL_ONLY_P2P) {
    return acl::Fail(call, ACL_ERROR_INVALID_PARAM,
                     "policy " + std::to_string(p) +
                         " is not an aclrtMemMallocPolicy; use "
                         "ACL_MEM_MALLOC_HUGE_FIRST");
  }
  int32_t device = -1;
  err = acl::CurrentDevice(*r, call, &device);
  if (err != ACL_SUCCESS) return err;
  return acl::FromStatus(call, rt::Malloc(device, size, devPtr));
}

extern "C" aclError aclrtFree(void* devPtr) {
  const CallText call = [&] {
    return "aclrtFree(" + acl::PointerText(devPtr) + ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  if (devPtr == nullptr) return NullArgument(call, "devPtr");
  int32_t device = -1;
  err = acl::CurrentDevice(*r, call, &device);
  if (err != ACL_SUCCESS) return err;
  return acl::FromStatus(call, rt::Free(device, devPtr));
}

extern "C" aclError aclrtMallocHost(void** hostPtr, size_t size) {
  const CallText call = [&] {
    return "aclrtMallocHost(" + acl::PointerText(hostPtr) + ", " + Num(size) +
           ")";
  };
  aclError err = ACL_SUCCESS;
  if (acl::RuntimeOrFail(call, &err) == nullptr) return err;
  if (hostPtr == nullptr) return NullArgument(call, "hostPtr");
  if (size == 0) {
    return acl::Fail(call, ACL_ERROR_INVALID_PARAM,
                     "size is 0; allocate at least one byte");
  }
  void* p = std::malloc(size);
  if (p == nullptr) {
    return acl::Fail(call, ACL_ERROR_BAD_ALLOC, "the host is out of memory");
  }
  *hostPtr = p;
  return ACL_SUCCESS;
}

extern "C" aclError aclrtFreeHost(void* hostPtr) {
  const CallText call = [&] {
    return "aclrtFreeHost(" + acl::PointerText(hostPtr) + ")";
  };
  aclError err = ACL_SUCCESS;
  if (acl::RuntimeOrFail(call, &err) == nullptr) return err;
  if (hostPtr == nullptr) return NullArgument(call, "hostPtr");
  std::free(hostPtr);
  return ACL_SUCCESS;
}

extern "C" aclError aclrtMemcpy(void* dst, size_t destMax, const void* src,
                                size_t count, aclrtMemcpyKind kind) {
  // A C caller may pass any int as the kind: read its bits rather than load
  // an enum value outside the enum's range (undefined in C++; UBSan reports
  // it), so a bad kind is an error, not undefined behaviour.
  int kind_value = 0;
  static_assert(sizeof(kind_value) == sizeof(kind),
                "aclrtMemcpyKind has the size of an int");
  std::memcpy(&kind_value, &kind, sizeof(kind_value));
  const CallText call = [&] {
    return "aclrtMemcpy(" + acl::PointerText(dst) + ", " + Num(destMax) + ", " +
           acl::PointerText(src) + ", " + Num(count) + ", " +
           std::to_string(kind_value) + ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  if (dst == nullptr) return NullArgument(call, "dst");
  if (src == nullptr) return NullArgument(call, "src");
  if (count > destMax) {
    return acl::Fail(call, ACL_ERROR_INVALID_PARAM,
                     "count " + Num(count) + " exceeds destMax " +
                         Num(destMax) +
                         "; the destination cannot hold the copy");
  }
  rt::MemcpyKind rk;
  switch (kind_value) {
    case ACL_MEMCPY_HOST_TO_HOST:
      std::memmove(dst, src, count);  // no device takes part
      return ACL_SUCCESS;
    case ACL_MEMCPY_HOST_TO_DEVICE:
      rk = rt::MemcpyKind::kHostToDevice;
      break;
    case ACL_MEMCPY_DEVICE_TO_HOST:
      rk = rt::MemcpyKind::kDeviceToHost;
      break;
    case ACL_MEMCPY_DEVICE_TO_DEVICE:
      rk = rt::MemcpyKind::kDeviceToDevice;
      break;
    default:
      return acl::Fail(
          call, ACL_ERROR_INVALID_PARAM,
          "kind " + std::to_string(kind_value) + " is not an aclrtMemcpyKind");
  }
  int32_t device = -1;
  err = acl::CurrentDevice(*r, call, &device);
  if (err != ACL_SUCCESS) return err;
  return acl::FromStatus(call, rt::Memcpy(device, dst, src, count, rk));
}

extern "C" aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value,
                                size_t count) {
  const CallText call = [&] {
    return "aclrtMemset(" + acl::PointerText(devPtr) + ", " + Num(maxCount) +
           ", " + std::to_string(value) + ", " + Num(count) + ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  if (devPtr == nullptr) return NullArgument(call, "devPtr");
  if (count > maxCount) {
    return acl::Fail(
        call, ACL_ERROR_INVALID_PARAM,
        "count " + Num(count) + " exceeds maxCount " + Num(maxCount));
  }
  int32_t device = -1;
  err = acl::CurrentDevice(*r, call, &device);
  if (err != ACL_SUCCESS) return err;
  return acl::FromStatus(call, rt::Memset(device, devPtr, value, count));
}

extern "C" aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* freeBytes,
                                    size_t* totalBytes) {
  const CallText call = [&] {
    return "aclrtGetMemInfo(" + std::to_string(static_cast<int>(attr)) + ", " +
           acl::PointerText(freeBytes) + ", " + acl::PointerText(totalBytes) +
           ")";
  };
  aclError err = ACL_SUCCESS;
  rt::DeviceRuntime* r = acl::RuntimeOrFail(call, &err);
  if (r == nullptr) return err;
  if (freeBytes == nullptr) return NullArgument(call, "freeBytes");
  if (totalBytes == nullptr) return NullArgument(call, "totalBytes");
  const int a = static_cast<int>(attr);
  if (a < ACL_DDR_MEM || a > ACL_HBM_MEM_P2P_NORMAL) {
    return acl::Fail(call, ACL_ERROR_INVALID_PARAM,
                     "attr " + std::to_string(a) + " is not an aclrtMemAttr");
  }
  int32_t device = -1;
  err = acl::CurrentDevice(*r, call, &device);
  if (err != ACL_SUCCESS) return err;
  uint64_t free_b = 0, total_b = 0;
  err = acl::FromStatus(call, rt::GetMemInfo(device, &free_b, &total_b));
  if (err != ACL_SUCCESS) return err;
  *freeBytes = static_cast<size_t>(free_b);
  *totalBytes = static_cast<size_t>(total_b);
  return ACL_SUCCESS;
}
