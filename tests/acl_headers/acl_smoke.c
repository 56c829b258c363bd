/* An ACL program in C99, as CANN users write them, built against hflow's
 * acl/acl.h and libascendcl.so and run by ctest (acl_c_program): device 2
 * of the default cluster, a context of its own, memory round trips, the
 * error codes of a few wrong calls, and ACL's lifecycle. It exits 0 when
 * every step gives what ACL documents, else prints the step and exits 1.
 * Single-threaded. */
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"

static int g_failures = 0;

static void Expect(const char *step, aclError got, aclError want) {
  if (got != want) {
    fprintf(stderr, "acl_smoke: %s returned %d, expected %d\n", step, got,
            want);
    ++g_failures;
  }
}

int main(void) {
  aclrtContext none = NULL;
  aclrtContext ctx = NULL;
  aclrtContext current = NULL;
  int32_t device = -1;
  uint32_t count = 0;
  void *dev = NULL;
  char in[16] = "hflow acl smoke";
  char out[16];
  size_t free_bytes = 0, total_bytes = 0;

  Expect("aclFinalize before aclInit", aclFinalize(), ACL_ERROR_UNINITIALIZE);
  Expect("aclrtSetDevice before aclInit", aclrtSetDevice(2),
         ACL_ERROR_UNINITIALIZE);
  Expect("aclInit", aclInit(NULL), ACL_SUCCESS);
  Expect("aclInit again", aclInit(NULL), ACL_ERROR_REPEAT_INITIALIZE);
  Expect("aclrtGetDeviceCount", aclrtGetDeviceCount(&count), ACL_SUCCESS);
  if (count != 4) {
    fprintf(stderr, "acl_smoke: %u devices, expected 4\n", count);
    ++g_failures;
  }
  Expect("aclrtGetCurrentContext unbound", aclrtGetCurrentContext(&none),
         ACL_ERROR_RT_CONTEXT_NULL);
  Expect("aclrtSetDevice(2)", aclrtSetDevice(2), ACL_SUCCESS);
  Expect("aclrtGetDevice", aclrtGetDevice(&device), ACL_SUCCESS);
  if (device != 2) {
    fprintf(stderr, "acl_smoke: on device %d, expected 2\n", device);
    ++g_failures;
  }
  Expect("aclrtMalloc",
         aclrtMalloc(&dev, sizeof(in), ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  Expect(
      "aclrtMemcpy H2D",
      aclrtMemcpy(dev, sizeof(in), in, sizeof(in), ACL_MEMCPY_HOST_TO_DEVICE),
      ACL_SUCCESS);
  Expect(
      "aclrtMemcpy D2H",
      aclrtMemcpy(out, sizeof(out), dev, sizeof(in), ACL_MEMCPY_DEVICE_TO_HOST),
      ACL_SUCCESS);
  if (memcmp(in, out, sizeof(in)) != 0) {
    fprintf(stderr, "acl_smoke: the round trip changed the bytes\n");
    ++g_failures;
  }
  Expect("aclrtMemcpy over destMax",
         aclrtMemcpy(out, 4, dev, sizeof(in), ACL_MEMCPY_DEVICE_TO_HOST),
         ACL_ERROR_INVALID_PARAM);
  Expect("aclrtGetMemInfo",
         aclrtGetMemInfo(ACL_HBM_MEM, &free_bytes, &total_bytes), ACL_SUCCESS);
  if (free_bytes + sizeof(in) > total_bytes) {
    fprintf(stderr, "acl_smoke: free %zu of %zu bytes\n", free_bytes,
            total_bytes);
    ++g_failures;
  }
  Expect("aclrtSynchronizeDevice", aclrtSynchronizeDevice(), ACL_SUCCESS);
  Expect("aclrtFree", aclrtFree(dev), ACL_SUCCESS);

  Expect("aclrtCreateContext(3)", aclrtCreateContext(&ctx, 3), ACL_SUCCESS);
  Expect("aclrtGetCurrentContext", aclrtGetCurrentContext(&current),
         ACL_SUCCESS);
  if (current != ctx) {
    fprintf(stderr, "acl_smoke: the new context is not current\n");
    ++g_failures;
  }
  Expect("aclrtSetDevice(9)", aclrtSetDevice(9), ACL_ERROR_RT_INVALID_DEVICEID);
  Expect("aclrtDestroyContext", aclrtDestroyContext(ctx), ACL_SUCCESS);
  Expect("aclrtResetDevice(2)", aclrtResetDevice(2), ACL_SUCCESS);
  Expect("aclFinalize", aclFinalize(), ACL_SUCCESS);
  Expect("aclFinalize again", aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
  if (g_failures != 0) return 1;
  printf("acl_smoke: ok\n");
  return 0;
}
