// ACL's umbrella header (CANN AscendCL's acl/acl.h): the base definitions,
// the runtime calls, and aclInit/aclFinalize, implemented by hflow's
// libascendcl.so on its simulated devices.
//
//   aclInit(NULL);                      // or a JSON config file
//   aclrtSetDevice(2);                  // this thread now works on device 2
//   void *p;  aclrtMalloc(&p, 1024, ACL_MEM_MALLOC_HUGE_FIRST);
//   aclrtFree(p);  aclrtResetDevice(2);
//   aclFinalize();
//
// ACL and hflow's host API (hflow::Initialize, GE's GEInitialize) share one
// device runtime, so contexts made through ACL stay valid across them.
//
// A C header: it compiles alone as C99 and as C++11 and later.
// Thread-safety: aclInit and aclFinalize must not race other calls.
#ifndef HFLOW_ACL_ACL_H_
#define HFLOW_ACL_ACL_H_

#include "acl_base.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

// Initializes ACL. configPath may be NULL or "" (no config); otherwise it
// names a JSON file (ACL's dump and profiling settings, which hflow reads
// and ignores): ACL_ERROR_INVALID_FILE when it cannot be read,
// ACL_ERROR_PARSE_FILE when it is not JSON. Without an installed device
// runtime, makes hflow's over the cluster $RESOURCE_CONFIG_PATH names (the
// default four devices 0..3 when unset). ACL_ERROR_REPEAT_INITIALIZE when
// already initialized.
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
// Undoes aclInit: the runtime aclInit made goes, unless hflow::Initialize
// is using it. ACL_ERROR_REPEAT_FINALIZE after aclFinalize,
// ACL_ERROR_UNINITIALIZE without any aclInit.
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // HFLOW_ACL_ACL_H_
