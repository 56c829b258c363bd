// Tests of FakeCudaDriver itself: the CUDA rules CudaRuntime's tests rely
// on it to enforce (per-thread bindings, primary refcounting, stale
// handles, memory errors, sticky device loss) and its test hooks. If the
// fake were lenient where the driver is strict, runtime bugs would pass
// their tests and fail only on a GPU.
//
// Thread-safety: tests that start threads join them before returning.
#include "cuda/fake_cuda_driver.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace hflow {
namespace testing {
namespace {

// Runs `fn` on a new thread named `name` and waits for it.
template <typename Fn>
void OnThread(const char* name, Fn fn) {
  std::thread thread([&] {
    pthread_setname_np(pthread_self(), name);
    fn();
  });
  thread.join();
}

CUdeviceptr Ptr(void* p) { return reinterpret_cast<CUdeviceptr>(p); }

class FakeCudaDriverTest : public ::testing::Test {
 protected:
  FakeCudaDriverTest() : driver_(2, 1 << 20) {}
  void SetUp() override { ASSERT_EQ(driver_.Init(0), CUDA_SUCCESS); }

  FakeCudaDriver driver_;
};

TEST(FakeCudaDriverInitTest, OnlyVersionAndErrorTextWorkBeforeInit) {
  FakeCudaDriver driver(1);
  int version = 0;
  EXPECT_EQ(driver.DriverGetVersion(&version), CUDA_SUCCESS);
  EXPECT_EQ(version, 13000);
  EXPECT_EQ(driver.ErrorName(CUDA_ERROR_INVALID_CONTEXT),
            "CUDA_ERROR_INVALID_CONTEXT");
  int count = -1;
  EXPECT_EQ(driver.DeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
  CUcontext ctx = nullptr;
  EXPECT_EQ(driver.DevicePrimaryCtxRetain(&ctx, 0), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(driver.PrimaryRefs(0), 0);
  EXPECT_EQ(driver.Init(1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver.DeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(driver.Init(0), CUDA_SUCCESS);
  EXPECT_EQ(driver.DeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 1);
}

TEST(FakeCudaDriverInitTest, NoGpusFailsInitAsTheDriverDoes) {
  FakeCudaDriver driver(0);
  EXPECT_EQ(driver.Init(0), CUDA_ERROR_NO_DEVICE);
  int count = -1;
  EXPECT_EQ(driver.DeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
}

TEST_F(FakeCudaDriverTest, DeviceQueries) {
  int count = 0;
  ASSERT_EQ(driver_.DeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2);
  CUdevice device = -1;
  EXPECT_EQ(driver_.DeviceGet(&device, 1), CUDA_SUCCESS);
  EXPECT_EQ(device, 1);
  EXPECT_EQ(driver_.DeviceGet(&device, 2), CUDA_ERROR_INVALID_DEVICE);
  EXPECT_EQ(driver_.DeviceGet(&device, -1), CUDA_ERROR_INVALID_DEVICE);

  char name[32];
  ASSERT_EQ(driver_.DeviceGetName(name, sizeof(name), 1), CUDA_SUCCESS);
  EXPECT_STREQ(name, "Fake GPU 1");
  ASSERT_EQ(driver_.DeviceGetName(name, 5, 1), CUDA_SUCCESS);
  EXPECT_STREQ(name, "Fake");  // truncated, still terminated
  EXPECT_EQ(driver_.DeviceGetName(name, sizeof(name), 7),
            CUDA_ERROR_INVALID_DEVICE);

  size_t total = 0;
  ASSERT_EQ(driver_.DeviceTotalMem(&total, 0), CUDA_SUCCESS);
  EXPECT_EQ(total, 1u << 20);

  int value = -1;
  ASSERT_EQ(driver_.DeviceGetAttribute(
                &value, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  driver_.SetConcurrentManagedAccess(false);
  ASSERT_EQ(driver_.DeviceGetAttribute(
                &value, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 0);
  ASSERT_EQ(driver_.DeviceGetAttribute(
                &value, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  ASSERT_EQ(driver_.DeviceGetAttribute(
                &value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 0);
}

TEST_F(FakeCudaDriverTest, ContextCallsFailWithoutACurrentContext) {
  CUdevice device;
  CUdeviceptr ptr;
  size_t free_bytes, total_bytes;
  char host[16];
  EXPECT_EQ(driver_.CtxGetDevice(&device), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.CtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.MemAlloc(&ptr, 64), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.MemAllocManaged(&ptr, 64, CU_MEM_ATTACH_GLOBAL),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.MemFree(Ptr(host)), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.Memcpy(Ptr(host), Ptr(host + 8), 8),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.MemsetD8(Ptr(host), 1, 8), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.MemGetInfo(&free_bytes, &total_bytes),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.MemHostRegister(host, sizeof(host), 0),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.MemHostUnregister(host), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.LiveAllocations(0), 0u);
}

TEST_F(FakeCudaDriverTest, BindingIsPerThread) {
  CUcontext ctx0 = nullptr;
  ASSERT_EQ(driver_.CtxCreate(&ctx0, 0), CUDA_SUCCESS);  // binds here
  EXPECT_EQ(driver_.CurrentOnThisThread(), ctx0);

  CUcontext ctx1 = nullptr;
  OnThread("other", [&] {
    CUcontext seen = ctx0;
    EXPECT_EQ(driver_.CtxGetCurrent(&seen), CUDA_SUCCESS);
    EXPECT_EQ(seen, nullptr);
    CUdeviceptr ptr;
    EXPECT_EQ(driver_.MemAlloc(&ptr, 64), CUDA_ERROR_INVALID_CONTEXT);
    ASSERT_EQ(driver_.DevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
    EXPECT_EQ(driver_.CurrentOnThisThread(), nullptr);  // retain binds not
    ASSERT_EQ(driver_.CtxSetCurrent(ctx1), CUDA_SUCCESS);
    CUdevice device = -1;
    EXPECT_EQ(driver_.CtxGetDevice(&device), CUDA_SUCCESS);
    EXPECT_EQ(device, 1);
  });

  CUdevice device = -1;
  EXPECT_EQ(driver_.CtxGetDevice(&device), CUDA_SUCCESS);
  EXPECT_EQ(device, 0);  // unaffected by the other thread's binding
  ASSERT_EQ(driver_.CtxSetCurrent(nullptr), CUDA_SUCCESS);
  EXPECT_EQ(driver_.CtxGetDevice(&device), CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(FakeCudaDriverTest, PrimaryIsRefcountedAndDiesAtZero) {
  CUcontext a = nullptr, b = nullptr;
  ASSERT_EQ(driver_.DevicePrimaryCtxRetain(&a, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver_.DevicePrimaryCtxRetain(&b, 0), CUDA_SUCCESS);
  EXPECT_EQ(a, b);
  EXPECT_EQ(driver_.PrimaryRefs(0), 2);
  EXPECT_EQ(driver_.ContextsCreated(0), 1u);
  EXPECT_EQ(driver_.CurrentOnThisThread(), nullptr);

  ASSERT_EQ(driver_.CtxSetCurrent(a), CUDA_SUCCESS);
  CUdeviceptr ptr;
  ASSERT_EQ(driver_.MemAlloc(&ptr, 100), CUDA_SUCCESS);
  ASSERT_EQ(driver_.DevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  EXPECT_EQ(driver_.CtxSynchronize(), CUDA_SUCCESS);  // one ref left

  ASSERT_EQ(driver_.DevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  EXPECT_EQ(driver_.PrimaryRefs(0), 0);
  // Still bound, but dead: and its memory went with it.
  EXPECT_EQ(driver_.CurrentOnThisThread(), a);
  EXPECT_EQ(driver_.CtxSynchronize(), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(driver_.MemFree(ptr), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  EXPECT_EQ(driver_.LiveAllocations(0), 0u);
  EXPECT_EQ(driver_.UsedBytes(0), 0u);
  EXPECT_EQ(driver_.AllocationsFreedWithContext(0), 1u);
  EXPECT_EQ(driver_.DevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.CtxSetCurrent(a), CUDA_ERROR_INVALID_CONTEXT);

  CUcontext c = nullptr;
  ASSERT_EQ(driver_.DevicePrimaryCtxRetain(&c, 0), CUDA_SUCCESS);
  EXPECT_NE(c, a);  // a stale handle never comes back to life
  EXPECT_EQ(driver_.ContextsCreated(0), 2u);
  EXPECT_EQ(driver_.CtxSynchronize(), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  ASSERT_EQ(driver_.CtxSetCurrent(c), CUDA_SUCCESS);
  EXPECT_EQ(driver_.CtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(driver_.ContextsCreated(1), 0u);
}

TEST_F(FakeCudaDriverTest, CtxDestroyAndStaleHandles) {
  CUcontext primary = nullptr;
  ASSERT_EQ(driver_.DevicePrimaryCtxRetain(&primary, 0), CUDA_SUCCESS);
  EXPECT_EQ(driver_.CtxDestroy(primary), CUDA_ERROR_INVALID_CONTEXT);
  int not_a_context = 0;
  EXPECT_EQ(driver_.CtxDestroy(reinterpret_cast<CUcontext>(&not_a_context)),
            CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.CtxDestroy(nullptr), CUDA_ERROR_INVALID_CONTEXT);

  CUcontext user = nullptr;
  ASSERT_EQ(driver_.CtxCreate(&user, 1), CUDA_SUCCESS);
  EXPECT_EQ(driver_.CurrentOnThisThread(), user);
  EXPECT_EQ(driver_.ContextsCreated(1), 1u);

  OnThread("bound", [&] {
    ASSERT_EQ(driver_.CtxSetCurrent(user), CUDA_SUCCESS);
    OnThread("destroyer",
             [&] { EXPECT_EQ(driver_.CtxDestroy(user), CUDA_SUCCESS); });
    // Destroyed elsewhere: still bound here, and every use says so.
    CUcontext seen = nullptr;
    EXPECT_EQ(driver_.CtxGetCurrent(&seen), CUDA_SUCCESS);
    EXPECT_EQ(seen, user);
    CUdevice device;
    EXPECT_EQ(driver_.CtxGetDevice(&device), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    size_t free_bytes, total_bytes;
    EXPECT_EQ(driver_.MemGetInfo(&free_bytes, &total_bytes),
              CUDA_ERROR_CONTEXT_IS_DESTROYED);
  });
  // This thread too still holds it (it was destroyed on another thread).
  EXPECT_EQ(driver_.CurrentOnThisThread(), user);
  EXPECT_EQ(driver_.CtxDestroy(user), CUDA_ERROR_INVALID_CONTEXT);

  // A failed CtxSetCurrent leaves the binding as it was.
  ASSERT_EQ(driver_.CtxSetCurrent(primary), CUDA_SUCCESS);
  EXPECT_EQ(driver_.CtxSetCurrent(user), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(driver_.CurrentOnThisThread(), primary);

  // Destroying the calling thread's current context unbinds it.
  CUcontext mine = nullptr;
  ASSERT_EQ(driver_.CtxCreate(&mine, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver_.CtxDestroy(mine), CUDA_SUCCESS);
  EXPECT_EQ(driver_.CurrentOnThisThread(), nullptr);
  EXPECT_EQ(driver_.CtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
}

TEST_F(FakeCudaDriverTest, MemoryAllocCopySetFree) {
  CUcontext ctx = nullptr;
  ASSERT_EQ(driver_.CtxCreate(&ctx, 1), CUDA_SUCCESS);
  CUdeviceptr dev = 0, managed = 0;
  EXPECT_EQ(driver_.MemAlloc(&dev, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(driver_.MemAlloc(&dev, 100), CUDA_SUCCESS);
  EXPECT_EQ(dev % 256, 0u);
  EXPECT_EQ(driver_.MemAllocManaged(&managed, 64, 0x7),
            CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(driver_.MemAllocManaged(&managed, 50, CU_MEM_ATTACH_GLOBAL),
            CUDA_SUCCESS);
  EXPECT_EQ(managed % 256, 0u);
  EXPECT_EQ(driver_.LiveAllocations(1), 2u);
  EXPECT_EQ(driver_.UsedBytes(1), 150u);
  EXPECT_EQ(driver_.LiveAllocations(0), 0u);  // the current context's device
  size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(driver_.MemGetInfo(&free_bytes, &total_bytes), CUDA_SUCCESS);
  EXPECT_EQ(total_bytes, 1u << 20);
  EXPECT_EQ(free_bytes, (1u << 20) - 150);

  char in[100], out[100];
  for (int i = 0; i < 100; ++i) in[i] = static_cast<char>(i);
  ASSERT_EQ(driver_.Memcpy(dev, Ptr(in), 100), CUDA_SUCCESS);
  ASSERT_EQ(driver_.Memcpy(managed, dev + 10, 50), CUDA_SUCCESS);
  ASSERT_EQ(driver_.MemsetD8(managed, 0xEE, 2), CUDA_SUCCESS);
  ASSERT_EQ(driver_.Memcpy(Ptr(out), managed, 50), CUDA_SUCCESS);
  EXPECT_EQ(static_cast<unsigned char>(out[0]), 0xEE);
  EXPECT_EQ(static_cast<unsigned char>(out[1]), 0xEE);
  EXPECT_EQ(std::memcmp(out + 2, in + 12, 48), 0);

  // Running past an allocation's end, from either side of a copy.
  EXPECT_EQ(driver_.Memcpy(dev + 1, Ptr(in), 100), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.Memcpy(Ptr(out), managed + 1, 50),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.MemsetD8(dev + 99, 0, 2), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.MemsetD8(dev + 99, 0, 1), CUDA_SUCCESS);

  EXPECT_EQ(driver_.MemFree(dev + 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.MemFree(Ptr(in)), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(driver_.MemFree(dev), CUDA_SUCCESS);
  EXPECT_EQ(driver_.MemFree(dev), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.LiveAllocations(1), 1u);
  EXPECT_EQ(driver_.UsedBytes(1), 50u);
  // `managed` is left for the destructor to free (checked under ASan).
}

TEST_F(FakeCudaDriverTest, OutOfMemoryIsPerDevice) {
  CUcontext ctx0 = nullptr, ctx1 = nullptr;
  ASSERT_EQ(driver_.CtxCreate(&ctx1, 1), CUDA_SUCCESS);
  ASSERT_EQ(driver_.CtxCreate(&ctx0, 0), CUDA_SUCCESS);
  CUdeviceptr big = 0, more = 0;
  ASSERT_EQ(driver_.MemAlloc(&big, (1 << 20) - 100), CUDA_SUCCESS);
  EXPECT_EQ(driver_.MemAlloc(&more, 101), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(driver_.MemAllocManaged(&more, 101, CU_MEM_ATTACH_HOST),
            CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(driver_.MemAlloc(&more, SIZE_MAX), CUDA_ERROR_OUT_OF_MEMORY);
  ASSERT_EQ(driver_.MemAlloc(&more, 100), CUDA_SUCCESS);  // exactly full
  size_t free_bytes = 1, total_bytes = 0;
  ASSERT_EQ(driver_.MemGetInfo(&free_bytes, &total_bytes), CUDA_SUCCESS);
  EXPECT_EQ(free_bytes, 0u);

  ASSERT_EQ(driver_.CtxSetCurrent(ctx1), CUDA_SUCCESS);
  CUdeviceptr other = 0;
  EXPECT_EQ(driver_.MemAlloc(&other, 1 << 19), CUDA_SUCCESS);
  // Memory of another device's context is freed from any context.
  ASSERT_EQ(driver_.MemFree(big), CUDA_SUCCESS);
  EXPECT_EQ(driver_.UsedBytes(0), 100u);
  EXPECT_EQ(driver_.UsedBytes(1), 1u << 19);
}

TEST_F(FakeCudaDriverTest, DestroyedContextsMemoryIsStale) {
  CUcontext doomed = nullptr, survivor = nullptr;
  ASSERT_EQ(driver_.CtxCreate(&survivor, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver_.CtxCreate(&doomed, 0), CUDA_SUCCESS);
  CUdeviceptr ptr = 0;
  ASSERT_EQ(driver_.MemAlloc(&ptr, 64), CUDA_SUCCESS);
  ASSERT_EQ(driver_.CtxDestroy(doomed), CUDA_SUCCESS);
  EXPECT_EQ(driver_.LiveAllocations(0), 0u);
  EXPECT_EQ(driver_.AllocationsFreedWithContext(0), 1u);

  ASSERT_EQ(driver_.CtxSetCurrent(survivor), CUDA_SUCCESS);
  char host[64] = {};
  EXPECT_EQ(driver_.MemFree(ptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.Memcpy(ptr, Ptr(host), 64), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.MemsetD8(ptr + 8, 0, 8), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(FakeCudaDriverTest, HostRegistration) {
  CUcontext ctx = nullptr;
  ASSERT_EQ(driver_.CtxCreate(&ctx, 0), CUDA_SUCCESS);
  std::vector<char> buffer(4096);
  char* p = buffer.data();
  EXPECT_EQ(driver_.MemHostRegister(nullptr, 16, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(driver_.MemHostRegister(p, 0, 0), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(driver_.MemHostRegister(p + 1024, 1024, 0), CUDA_SUCCESS);
  EXPECT_EQ(driver_.MemHostRegister(p + 1024, 1024, 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(driver_.MemHostRegister(p, 1025, 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(driver_.MemHostRegister(p + 2047, 10, 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(driver_.MemHostRegister(p, 4096, 0),
            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
  EXPECT_EQ(driver_.MemHostRegister(p, 1024, CU_MEMHOSTREGISTER_PORTABLE),
            CUDA_SUCCESS);  // adjacent, not overlapping
  EXPECT_EQ(driver_.MemHostRegister(p + 2048, 1024, 0), CUDA_SUCCESS);

  EXPECT_EQ(driver_.MemHostUnregister(p + 1030),
            CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_EQ(driver_.MemHostUnregister(p + 1024), CUDA_SUCCESS);
  EXPECT_EQ(driver_.MemHostUnregister(p + 1024),
            CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
  EXPECT_EQ(driver_.MemHostRegister(p + 1024, 1024, 0), CUDA_SUCCESS);
}

TEST_F(FakeCudaDriverTest, FailNextInjectsTheNthCall) {
  CUcontext ctx = nullptr;
  ASSERT_EQ(driver_.CtxCreate(&ctx, 0), CUDA_SUCCESS);
  driver_.FailNext("MemAlloc", CUDA_ERROR_OUT_OF_MEMORY, 2);
  CUdeviceptr a = 0, b = 0, c = 0;
  EXPECT_EQ(driver_.MemAlloc(&a, 64), CUDA_SUCCESS);
  EXPECT_EQ(driver_.MemAlloc(&b, 64), CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(b, 0u);  // did nothing
  EXPECT_EQ(driver_.LiveAllocations(0), 1u);
  EXPECT_EQ(driver_.MemAlloc(&c, 64), CUDA_SUCCESS);
  EXPECT_EQ(driver_.Calls("MemAlloc"), 3u);
  EXPECT_EQ(driver_.Calls("MemFree"), 0u);

  // Injected even where the call would fail anyway, and before validation.
  driver_.FailNext("CtxSetCurrent", CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(driver_.CtxSetCurrent(nullptr), CUDA_ERROR_LAUNCH_FAILED);
  EXPECT_EQ(driver_.CurrentOnThisThread(), ctx);
  EXPECT_EQ(driver_.CtxSetCurrent(nullptr), CUDA_SUCCESS);

  FakeCudaDriver fresh(1);
  fresh.FailNext("Init", CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(fresh.Init(0), CUDA_ERROR_UNKNOWN);
  int count = 0;
  EXPECT_EQ(fresh.DeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
  EXPECT_EQ(fresh.Init(0), CUDA_SUCCESS);
}

TEST_F(FakeCudaDriverTest, LostDeviceErrorsAreSticky) {
  CUcontext ctx0 = nullptr, ctx1 = nullptr;
  ASSERT_EQ(driver_.DevicePrimaryCtxRetain(&ctx0, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver_.DevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
  ASSERT_EQ(driver_.CtxSetCurrent(ctx1), CUDA_SUCCESS);
  CUdeviceptr on1 = 0;
  ASSERT_EQ(driver_.MemAlloc(&on1, 64), CUDA_SUCCESS);

  driver_.LoseDevice(1);
  for (int i = 0; i < 2; ++i) {  // sticky: not a one-off
    CUdevice device;
    EXPECT_EQ(driver_.CtxGetDevice(&device), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(driver_.CtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
  }
  CUdeviceptr ptr = 0;
  EXPECT_EQ(driver_.MemAlloc(&ptr, 64), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUdevice device;
  EXPECT_EQ(driver_.DeviceGet(&device, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
  CUcontext again = nullptr;
  EXPECT_EQ(driver_.DevicePrimaryCtxRetain(&again, 1),
            CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(driver_.CtxCreate(&again, 1), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(driver_.DevicePrimaryCtxRelease(1), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(driver_.PrimaryRefs(1), 1);

  // Device 0 still works, except where it touches device 1's memory.
  ASSERT_EQ(driver_.CtxSetCurrent(ctx0), CUDA_SUCCESS);
  EXPECT_EQ(driver_.CtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(driver_.DeviceGet(&device, 0), CUDA_SUCCESS);
  char host[64];
  EXPECT_EQ(driver_.Memcpy(Ptr(host), on1, 64), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(driver_.MemFree(on1), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(driver_.CtxSetCurrent(ctx1), CUDA_ERROR_ILLEGAL_ADDRESS);
  EXPECT_EQ(driver_.CurrentOnThisThread(), ctx0);

  driver_.LoseDevice(0, CUDA_ERROR_ECC_UNCORRECTABLE);
  EXPECT_EQ(driver_.CtxSynchronize(), CUDA_ERROR_ECC_UNCORRECTABLE);
}

TEST(FakeCudaDriverInstanceTest, TwoFakesDoNotShareBindings) {
  FakeCudaDriver a(1), b(1);
  ASSERT_EQ(a.Init(0), CUDA_SUCCESS);
  ASSERT_EQ(b.Init(0), CUDA_SUCCESS);
  CUcontext ctx_a = nullptr;
  ASSERT_EQ(a.CtxCreate(&ctx_a, 0), CUDA_SUCCESS);
  CUcontext seen = ctx_a;
  ASSERT_EQ(b.CtxGetCurrent(&seen), CUDA_SUCCESS);
  EXPECT_EQ(seen, nullptr);
  EXPECT_EQ(b.CtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(b.CtxSetCurrent(ctx_a), CUDA_ERROR_INVALID_CONTEXT);  // not b's
  EXPECT_EQ(b.CtxDestroy(ctx_a), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(a.CtxSynchronize(), CUDA_SUCCESS);
  EXPECT_EQ(b.ContextsCreated(0), 0u);
}

TEST(FakeCudaDriverInstanceTest, ANewFakeStartsUnbound) {
  for (int i = 0; i < 3; ++i) {
    FakeCudaDriver driver(1);
    ASSERT_EQ(driver.Init(0), CUDA_SUCCESS);
    EXPECT_EQ(driver.CurrentOnThisThread(), nullptr);
    CUcontext ctx = nullptr;
    ASSERT_EQ(driver.CtxCreate(&ctx, 0), CUDA_SUCCESS);  // left bound
  }
}

TEST_F(FakeCudaDriverTest, LogRecordsThreadMethodOrdinalAndResult) {
  CUcontext ctx = nullptr;
  OnThread("logged", [&] {
    EXPECT_EQ(driver_.CtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    ASSERT_EQ(driver_.CtxCreate(&ctx, 1), CUDA_SUCCESS);
    EXPECT_EQ(driver_.CtxSynchronize(), CUDA_SUCCESS);
  });
  const std::vector<FakeCudaDriver::Call> log = driver_.Log();
  ASSERT_EQ(log.size(), 4u);
  EXPECT_EQ(log[0].method, "Init");
  EXPECT_EQ(log[1].thread_name, "logged");
  EXPECT_EQ(log[1].method, "CtxSynchronize");
  EXPECT_EQ(log[1].ordinal, -1);
  EXPECT_EQ(log[1].result, CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_EQ(log[2].method, "CtxCreate");
  EXPECT_EQ(log[2].ordinal, -1);  // the binding at entry
  EXPECT_EQ(log[3].method, "CtxSynchronize");
  EXPECT_EQ(log[3].ordinal, 1);
  EXPECT_EQ(log[3].result, CUDA_SUCCESS);
}

TEST(FakeCudaDriverErrorTest, NamesAndSentences) {
  FakeCudaDriver driver(1);
  const CUresult codes[] = {CUDA_SUCCESS,
                            CUDA_ERROR_INVALID_VALUE,
                            CUDA_ERROR_OUT_OF_MEMORY,
                            CUDA_ERROR_NOT_INITIALIZED,
                            CUDA_ERROR_NO_DEVICE,
                            CUDA_ERROR_INVALID_DEVICE,
                            CUDA_ERROR_INVALID_CONTEXT,
                            CUDA_ERROR_CONTEXT_IS_DESTROYED,
                            CUDA_ERROR_ILLEGAL_ADDRESS,
                            CUDA_ERROR_ECC_UNCORRECTABLE,
                            CUDA_ERROR_LAUNCH_FAILED,
                            CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
                            CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED};
  for (CUresult code : codes) {
    EXPECT_EQ(driver.ErrorName(code).rfind("CUDA_", 0), 0u) << code;
    EXPECT_FALSE(driver.ErrorString(code).empty()) << code;
    EXPECT_NE(driver.ErrorString(code).rfind("CUresult", 0), 0u) << code;
  }
  EXPECT_EQ(driver.ErrorName(CUDA_ERROR_CONTEXT_IS_DESTROYED),
            "CUDA_ERROR_CONTEXT_IS_DESTROYED");
  EXPECT_EQ(driver.ErrorString(CUDA_ERROR_ILLEGAL_ADDRESS),
            "an illegal memory access was encountered");
  // 555 is no CUresult but inside the enum's range (below 1024, its
  // largest code being 999), so the cast is defined (UBSan checks it).
  EXPECT_EQ(driver.ErrorName(static_cast<CUresult>(555)), "CUresult 555");
  EXPECT_EQ(driver.ErrorString(static_cast<CUresult>(555)), "CUresult 555");
}

TEST_F(FakeCudaDriverTest, ConcurrentUseKeepsTheBooksStraight) {
  constexpr int kThreads = 8, kRounds = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      CUcontext ctx = nullptr;
      ASSERT_EQ(driver_.DevicePrimaryCtxRetain(&ctx, t % 2), CUDA_SUCCESS);
      ASSERT_EQ(driver_.CtxSetCurrent(ctx), CUDA_SUCCESS);
      for (int i = 0; i < kRounds; ++i) {
        CUdeviceptr ptr = 0;
        ASSERT_EQ(driver_.MemAlloc(&ptr, 512), CUDA_SUCCESS);
        ASSERT_EQ(driver_.MemsetD8(ptr, static_cast<unsigned char>(t), 512),
                  CUDA_SUCCESS);
        unsigned char back[512];
        ASSERT_EQ(driver_.Memcpy(reinterpret_cast<CUdeviceptr>(back), ptr, 512),
                  CUDA_SUCCESS);
        ASSERT_EQ(back[511], t);
        ASSERT_EQ(driver_.MemFree(ptr), CUDA_SUCCESS);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(driver_.PrimaryRefs(0), kThreads / 2);
  EXPECT_EQ(driver_.PrimaryRefs(1), kThreads / 2);
  EXPECT_EQ(driver_.ContextsCreated(0), 1u);
  EXPECT_EQ(driver_.LiveAllocations(0) + driver_.LiveAllocations(1), 0u);
  EXPECT_EQ(driver_.Calls("MemAlloc"),
            static_cast<uint64_t>(kThreads * kRounds));
}

}  // namespace
}  // namespace testing
}  // namespace hflow
