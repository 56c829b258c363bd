// ACL's runtime calls (CANN AscendCL's acl/acl_rt.h, the device, context
// and memory part) as hflow implements them on its device runtime
// (hflow/rt.h): the calling thread's device and current context, device
// memory, copies. Names, signatures and enum values are CANN's, so ACL
// programs compile unchanged; docs/user_guide.md ("ACL's context API") maps
// each call onto hflow's and lists the error codes.
//
// Every call returns ACL_SUCCESS or an ACL error code and, on an error,
// writes one line to stderr naming the call, its arguments and what to do.
// Before aclInit (and after aclFinalize) every call returns
// ACL_ERROR_UNINITIALIZE, unless hflow is initialized (hflow::Initialize,
// or any installed device runtime), whose runtime the calls then use.
//
// Calls without a device argument (aclrtMalloc, aclrtMemcpy, ...) use the
// device of the calling thread's current context. On a thread with none,
// they fall back to the runtime's default device (device 0 when the
// cluster has one) and bind its default context to the thread, as CANN's
// runtime does; on a cluster without a default device they fail with
// ACL_ERROR_RT_CONTEXT_NULL.
//
// A C header: it compiles alone as C99 and as C++11 and later.
// Thread-safety: every call may be made from any thread; contexts are
// per thread. aclInit and aclFinalize must not race other calls.
#ifndef HFLOW_ACL_ACL_RT_H_
#define HFLOW_ACL_ACL_RT_H_

#include <stddef.h>
#include <stdint.h>

#include "acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum aclrtRunMode {
  ACL_DEVICE,
  ACL_HOST,
} aclrtRunMode;

typedef enum aclrtMemcpyKind {
  ACL_MEMCPY_HOST_TO_HOST,
  ACL_MEMCPY_HOST_TO_DEVICE,
  ACL_MEMCPY_DEVICE_TO_HOST,
  ACL_MEMCPY_DEVICE_TO_DEVICE,
} aclrtMemcpyKind;

// Where aclrtMalloc takes memory from. Simulated devices have one kind of
// memory: every policy gets the same.
typedef enum aclrtMemMallocPolicy {
  ACL_MEM_MALLOC_HUGE_FIRST,
  ACL_MEM_MALLOC_HUGE_ONLY,
  ACL_MEM_MALLOC_NORMAL_ONLY,
  ACL_MEM_MALLOC_HUGE_FIRST_P2P,
  ACL_MEM_MALLOC_HUGE_ONLY_P2P,
  ACL_MEM_MALLOC_NORMAL_ONLY_P2P,
} aclrtMemMallocPolicy;

// The memory aclrtGetMemInfo reports on; on simulated devices every
// attribute reports the device's whole memory.
typedef enum aclrtMemAttr {
  ACL_DDR_MEM,
  ACL_HBM_MEM,
  ACL_DDR_MEM_HUGE,
  ACL_DDR_MEM_NORMAL,
  ACL_HBM_MEM_HUGE,
  ACL_HBM_MEM_NORMAL,
  ACL_DDR_MEM_P2P_HUGE,
  ACL_DDR_MEM_P2P_NORMAL,
  ACL_HBM_MEM_P2P_HUGE,
  ACL_HBM_MEM_P2P_NORMAL,
} aclrtMemAttr;

// --- Devices ---
// Binds deviceId's default context to the calling thread, creating it on
// first use; counted against aclrtResetDevice. ACL_ERROR_RT_INVALID_DEVICEID
// for an id not in the cluster.
ACL_FUNC_VISIBILITY aclError aclrtSetDevice(int32_t deviceId);
// Drops one aclrtSetDevice reference; the last destroys the default
// context. ACL_ERROR_RT_CONTEXT_NULL when this process holds none.
ACL_FUNC_VISIBILITY aclError aclrtResetDevice(int32_t deviceId);
// The device of the calling thread's current context;
// ACL_ERROR_RT_CONTEXT_NULL when it has none. Never binds anything.
ACL_FUNC_VISIBILITY aclError aclrtGetDevice(int32_t *deviceId);
// The number of devices in the cluster. Their ids are the cluster config's
// (2,3,4,5 is a cluster of 4), not necessarily 0..count-1.
ACL_FUNC_VISIBILITY aclError aclrtGetDeviceCount(uint32_t *count);
// ACL_HOST: the program runs on the host.
ACL_FUNC_VISIBILITY aclError aclrtGetRunMode(aclrtRunMode *runMode);
// Waits for the current device's work (none is ever pending on simulated
// devices).
ACL_FUNC_VISIBILITY aclError aclrtSynchronizeDevice(void);

// --- Contexts ---
// Creates a context on deviceId and binds it to the calling thread.
ACL_FUNC_VISIBILITY aclError aclrtCreateContext(aclrtContext *context,
                                                int32_t deviceId);
// Destroys a context aclrtCreateContext made (default contexts go with
// aclrtResetDevice). The calling thread, if bound to it, is left without a
// context; other threads bound to it fail their next device call with
// ACL_ERROR_RT_CONTEXT_NULL.
ACL_FUNC_VISIBILITY aclError aclrtDestroyContext(aclrtContext context);
// Binds context to the calling thread. ACL_ERROR_INVALID_PARAM for NULL.
ACL_FUNC_VISIBILITY aclError aclrtSetCurrentContext(aclrtContext context);
// The calling thread's current context; with none, *context is NULL and
// the call returns ACL_ERROR_RT_CONTEXT_NULL. Never binds anything.
ACL_FUNC_VISIBILITY aclError aclrtGetCurrentContext(aclrtContext *context);

// --- Memory (on the current device) ---
// ACL_ERROR_INVALID_PARAM for a NULL devPtr, size 0 or an unknown policy;
// ACL_ERROR_RT_MEMORY_ALLOCATION when the device's memory cannot hold it.
ACL_FUNC_VISIBILITY aclError aclrtMalloc(void **devPtr, size_t size,
                                         aclrtMemMallocPolicy policy);
// Frees memory aclrtMalloc returned on the current device.
ACL_FUNC_VISIBILITY aclError aclrtFree(void *devPtr);
// Host memory (plain host allocations on simulated devices).
ACL_FUNC_VISIBILITY aclError aclrtMallocHost(void **hostPtr, size_t size);
ACL_FUNC_VISIBILITY aclError aclrtFreeHost(void *hostPtr);
// Copies count bytes; ACL_ERROR_INVALID_PARAM when count exceeds destMax,
// for NULL pointers or an unknown kind. Device sides must lie inside live
// allocations of the current device (for device to device: one side).
ACL_FUNC_VISIBILITY aclError aclrtMemcpy(void *dst, size_t destMax,
                                         const void *src, size_t count,
                                         aclrtMemcpyKind kind);
// Sets count bytes of device memory at devPtr to value; count must not
// exceed maxCount.
ACL_FUNC_VISIBILITY aclError aclrtMemset(void *devPtr, size_t maxCount,
                                         int32_t value, size_t count);
// The current device's free and total memory.
ACL_FUNC_VISIBILITY aclError aclrtGetMemInfo(aclrtMemAttr attr,
                                             size_t *freeBytes,
                                             size_t *totalBytes);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // HFLOW_ACL_ACL_RT_H_
