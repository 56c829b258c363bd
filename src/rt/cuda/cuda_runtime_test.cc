// CudaRuntime on the fake driver (tests/cuda/fake_cuda_driver.h): the
// binding rules of DeviceRuntime on the driver's per-thread contexts, on
// device sets with and without 0, memory checks, driver errors and device
// loss, and that the runtime gives back all it took. The same rules on a
// real GPU: tests/cuda/cuda_gpu_test.cc.
#include "rt/cuda/cuda_runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "cuda/fake_cuda_driver.h"
#include "hflow/context_guard.h"

namespace hflow {
namespace rt {
namespace {

using testing::FakeCudaDriver;

struct Made {
  std::shared_ptr<FakeCudaDriver> driver;
  std::shared_ptr<CudaRuntime> rt;
};

Made Make(const std::vector<int32_t>& ids, int gpus = -1) {
  Made m;
  m.driver = std::make_shared<FakeCudaDriver>(
      gpus < 0 ? static_cast<int>(ids.size()) : gpus, 64u << 20);
  CudaOptions o;
  o.cluster = MakeLocalCluster(ids, 32u << 20);
  o.cluster.source = "test";

  o.driver = m.driver;
  Status s = CudaRuntime::Create(std::move(o), &m.rt);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return m;
}

class CudaSetTest : public ::testing::TestWithParam<std::vector<int32_t>> {};

// Note: logical ids map in order to GPUs 0..n-1.
TEST_P(CudaSetTest, LogicalDevicesMapToGpusInOrder) {
  Made m = Make(GetParam());
  ASSERT_TRUE(m.rt);
  EXPECT_EQ(m.rt->DeviceIds(), GetParam());
  for (size_t i = 0; i < GetParam().size(); ++i) {
    EXPECT_EQ(m.rt->Ordinal(GetParam()[i]), static_cast<int>(i));
    EXPECT_EQ(m.rt->GpuName(GetParam()[i]), "Fake GPU " + std::to_string(i));
  }
  EXPECT_STREQ(m.rt->Name(), "cuda");
}

// The seed's bug class: a thread that never bound its device fails on every
// device but the default one, where it is bound implicitly and counted.
TEST_P(CudaSetTest, EveryDeviceNeedsItsOwnBinding) {
  Made m = Make(GetParam());
  bool has_zero = GetParam().front() == 0;
  EXPECT_EQ(m.rt->DefaultDevice().has_value(), has_zero);
  for (int32_t d : GetParam()) {
    std::thread([&] {
      void* p = nullptr;
      Status s = m.rt->Malloc(d, 64, &p);
      if (d == 0) {
        ASSERT_TRUE(s.ok()) << s.ToString();
        EXPECT_NE(m.rt->GetCurrentContext(), nullptr);
        EXPECT_TRUE(m.rt->Free(d, p).ok());
      } else {
        EXPECT_EQ(s.code(), StatusCode::kNoContext) << s.ToString();
        EXPECT_NE(s.message().find("device " + std::to_string(d)),
                  std::string::npos);
        EXPECT_EQ(m.rt->GetCurrentContext(), nullptr);
      }
    }).join();
    DeviceStats st;
    ASSERT_TRUE(m.rt->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.implicit_bindings, d == 0 ? 1u : 0u);
    EXPECT_EQ(st.contexts_created, d == 0 ? 1u : 0u);
    // Nothing touched the other GPUs: no stray primary context there.
    EXPECT_EQ(m.driver->ContextsCreated(m.rt->Ordinal(d)), d == 0 ? 1u : 0u);
  }
}

TEST_P(CudaSetTest, SetDeviceBindsThisThreadOnly) {
  Made m = Make(GetParam());
  int32_t d = GetParam().back();
  ASSERT_TRUE(m.rt->SetDevice(d).ok());
  int32_t got = -1;
  ASSERT_TRUE(m.rt->GetDevice(&got).ok());
  EXPECT_EQ(got, d);
  void* p = nullptr;
  ASSERT_TRUE(m.rt->Malloc(d, 128, &p).ok());
  // Another device from this thread: a mismatch naming both.
  void* q = nullptr;
  Status s = m.rt->Malloc(GetParam().front(), 128, &q);
  EXPECT_EQ(s.code(), StatusCode::kContextMismatch) << s.ToString();
  EXPECT_NE(
      s.message().find("bound to a context of device " + std::to_string(d)),
      std::string::npos)
      << s.ToString();
  std::thread([&] {
    int32_t none = -1;
    EXPECT_EQ(m.rt->GetDevice(&none).code(), StatusCode::kNoContext);
    ASSERT_TRUE(m.rt->SetDevice(d).ok());
    EXPECT_TRUE(m.rt->Memset(d, p, 7, 128).ok());
    EXPECT_TRUE(m.rt->ResetDevice(d).ok());
  }).join();
  EXPECT_EQ(static_cast<unsigned char*>(p)[127], 7);
  EXPECT_TRUE(m.rt->Free(d, p).ok());
  ASSERT_TRUE(m.rt->ResetDevice(d).ok());
  EXPECT_EQ(m.driver->PrimaryRefs(m.rt->Ordinal(d)), 0);
  EXPECT_EQ(m.rt->ResetDevice(d).code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(m.rt->SetCurrentContext(nullptr).ok());
}

INSTANTIATE_TEST_SUITE_P(Sets, CudaSetTest,
                         ::testing::Values(std::vector<int32_t>{0, 1, 2, 3},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}));

TEST(CudaRuntimeTest, RefusesMoreDevicesThanGpusAndNoGpu) {
  auto driver = std::make_shared<FakeCudaDriver>(2);
  CudaOptions o;
  o.cluster = MakeLocalCluster({2, 3, 4, 5});
  o.cluster.source = "cluster.json";
  o.driver = driver;
  std::shared_ptr<CudaRuntime> rt;
  Status s = CudaRuntime::Create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'cluster.json' lists 4 devices (2,3,4,5)"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("sees 2 GPU"), std::string::npos);
  o.driver = std::make_shared<FakeCudaDriver>(0);
  s = CudaRuntime::Create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported);
  EXPECT_NE(s.message().find("sees no GPU"), std::string::npos);
  // One GPU runs a device set without 0: device 3 is GPU 0.
  Made m = Make({3}, 1);
  EXPECT_EQ(m.rt->Ordinal(3), 0);
}

// hflow's context handle is the CUcontext: a context another library made
// (torch's primary context, say) is recognised by its GPU and restored by
// the guards like any other.
TEST(CudaRuntimeTest, ForeignContextsAreDevicesAndGuardsRestoreThem) {
  Made m = Make({2, 3});
  CUcontext foreign = nullptr;
  ASSERT_EQ(m.driver->DevicePrimaryCtxRetain(&foreign, 1), CUDA_SUCCESS);
  ASSERT_EQ(m.driver->CtxSetCurrent(foreign), CUDA_SUCCESS);
  void* p = nullptr;
  ASSERT_TRUE(m.rt->Malloc(3, 64, &p).ok());  // device 3 is GPU 1
  EXPECT_EQ(m.rt->Malloc(2, 64, &p).code(), StatusCode::kContextMismatch);
  int32_t d = -1;
  ASSERT_TRUE(m.rt->GetContextDevice(m.rt->GetCurrentContext(), &d).ok());
  EXPECT_EQ(d, 3);
  {
    ContextGuard guard(m.rt.get());
    ASSERT_TRUE(m.rt->SetDevice(2).ok());
    EXPECT_NE(m.driver->CurrentOnThisThread(), foreign);
  }
  EXPECT_EQ(m.driver->CurrentOnThisThread(), foreign);
  ASSERT_TRUE(m.rt->ResetDevice(2).ok());
  ASSERT_TRUE(m.rt->Free(3, p).ok());
  ASSERT_EQ(m.driver->CtxSetCurrent(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(m.driver->DevicePrimaryCtxRelease(1), CUDA_SUCCESS);
}

TEST(CudaRuntimeTest, UserContextsAndStaleHandles) {
  Made m = Make({2, 3});
  Context* ctx = nullptr;
  ASSERT_TRUE(m.rt->CreateContext(3, &ctx).ok());
  EXPECT_EQ(m.rt->GetCurrentContext(), ctx);
  void* p = nullptr;
  ASSERT_TRUE(m.rt->Malloc(3, 64, &p).ok());
  ASSERT_TRUE(m.rt->Free(3, p).ok());
  ASSERT_TRUE(m.rt->SetDevice(3).ok());
  Context* primary = m.rt->GetCurrentContext();
  EXPECT_EQ(m.rt->DestroyContext(primary).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(m.rt->DestroyContext(ctx).ok());
  EXPECT_EQ(m.rt->SetCurrentContext(ctx).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(m.rt->GetCurrentContext(), primary);  // left as it was
  EXPECT_EQ(m.rt->DestroyContext(ctx).code(), StatusCode::kInvalidArgument);
  DeviceStats st;
  ASSERT_TRUE(m.rt->GetDeviceStats(3, &st).ok());
  // The user context, the primary the allocation was made in (released at
  // its Free) and the primary SetDevice made again.
  EXPECT_EQ(st.contexts_created, 3u);
  EXPECT_EQ(st.contexts_alive, 1u);
  EXPECT_EQ(st.default_context_refs, 1);
  ASSERT_TRUE(m.rt->ResetDevice(3).ok());
}

TEST(CudaRuntimeTest, MemoryIsCheckedAgainstBudgetAndAllocations) {
  Made m = Make({2, 3});
  ASSERT_TRUE(m.rt->SetDevice(2).ok());
  void* a = nullptr;
  Status s = m.rt->Malloc(2, 40u << 20, &a);  // budget 32 MiB
  EXPECT_EQ(s.code(), StatusCode::kOutOfMemory) << s.ToString();
  ASSERT_TRUE(m.rt->Malloc(2, 4096, &a).ok());
  DeviceStats st;
  ASSERT_TRUE(m.rt->GetDeviceStats(2, &st).ok());
  EXPECT_EQ(st.mem_used_bytes, 4096u);
  EXPECT_EQ(st.live_allocations, 1u);
  EXPECT_EQ(st.mem_capacity_bytes, 32u << 20);
  uint64_t free_bytes = 0, total = 0;
  ASSERT_TRUE(m.rt->GetMemInfo(2, &free_bytes, &total).ok());
  EXPECT_EQ(total, 32u << 20);
  EXPECT_EQ(free_bytes, (32u << 20) - 4096u);
  std::vector<char> host(4096, 'x'), back(4096, 0);
  ASSERT_TRUE(
      m.rt->Memcpy(2, a, host.data(), 4096, MemcpyKind::kHostToDevice).ok());
  ASSERT_TRUE(
      m.rt->Memcpy(2, back.data(), a, 4096, MemcpyKind::kDeviceToHost).ok());
  EXPECT_EQ(back, host);
  // One byte past the allocation; a host pointer as device memory.
  EXPECT_EQ(
      m.rt->Memcpy(2, a, host.data(), 4097, MemcpyKind::kHostToDevice).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(
      m.rt->Memcpy(2, back.data(), host.data(), 16, MemcpyKind::kDeviceToHost)
          .code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(m.rt->Free(3, a).code(), StatusCode::kContextMismatch);
  // The driver's own out-of-memory is the runtime's.
  m.driver->FailNext("MemAllocManaged", CUDA_ERROR_OUT_OF_MEMORY);
  void* b = nullptr;
  s = m.rt->Malloc(2, 64, &b);
  EXPECT_EQ(s.code(), StatusCode::kOutOfMemory);
  EXPECT_NE(s.message().find("cuMemAllocManaged failed: "
                             "CUDA_ERROR_OUT_OF_MEMORY"),
            std::string::npos)
      << s.ToString();
  ASSERT_TRUE(m.rt->Free(2, a).ok());
  EXPECT_EQ(m.rt->Free(2, a).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(m.rt->GetDeviceStats(2, &st).ok());
  EXPECT_EQ(st.mem_used_bytes, 0u);
  EXPECT_EQ(st.mem_peak_bytes, 4096u);
  ASSERT_TRUE(m.rt->ResetDevice(2).ok());
}

TEST(CudaRuntimeTest, DeviceToDeviceCopiesAcrossGpus) {
  Made m = Make({2, 3});
  void *a = nullptr, *b = nullptr;
  ASSERT_TRUE(m.rt->SetDevice(3).ok());
  ASSERT_TRUE(m.rt->Malloc(3, 256, &b).ok());
  ASSERT_TRUE(m.rt->SetDevice(2).ok());
  ASSERT_TRUE(m.rt->Malloc(2, 256, &a).ok());
  ASSERT_TRUE(m.rt->Memset(2, a, 0x5a, 256).ok());
  ASSERT_TRUE(m.rt->Memcpy(2, b, a, 256, MemcpyKind::kDeviceToDevice).ok());
  EXPECT_EQ(static_cast<unsigned char*>(b)[255], 0x5a);
  ASSERT_TRUE(m.rt->Free(2, a).ok());
  ASSERT_TRUE(m.rt->SetDevice(3).ok());
  ASSERT_TRUE(m.rt->Free(3, b).ok());
  ASSERT_TRUE(m.rt->ResetDevice(3).ok());
  ASSERT_TRUE(m.rt->ResetDevice(2).ok());
  ASSERT_TRUE(m.rt->ResetDevice(3).ok());
}

TEST(CudaRuntimeTest, StickyErrorLosesTheDeviceOnce) {
  Made m = Make({2, 3});
  std::vector<int32_t> lost;
  int id = m.rt->AddDeviceLostListener([&](int32_t d) { lost.push_back(d); });
  ASSERT_TRUE(m.rt->SetDevice(3).ok());
  m.driver->FailNext("CtxSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS);
  Status s = m.rt->Synchronize(3);
  EXPECT_EQ(s.code(), StatusCode::kDeviceLost) << s.ToString();
  EXPECT_NE(s.message().find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos);
  void* p = nullptr;
  s = m.rt->Malloc(3, 64, &p);
  EXPECT_EQ(s.code(), StatusCode::kDeviceLost);
  EXPECT_NE(s.message().find("the device is lost (Synchronize on device 3"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(m.rt->Synchronize(3).code(), StatusCode::kDeviceLost);
  EXPECT_EQ(lost, std::vector<int32_t>{3});
  DeviceStats st;
  ASSERT_TRUE(m.rt->GetDeviceStats(3, &st).ok());
  EXPECT_TRUE(st.lost);
  ASSERT_TRUE(m.rt->GetDeviceStats(2, &st).ok());
  EXPECT_FALSE(st.lost);
  m.rt->RemoveDeviceLostListener(id);
  ASSERT_TRUE(m.rt->ResetDevice(3).ok());
}

// Registration needs a context in the driver, none in hflow: an unbound
// caller stays unbound, and registered memory is device memory to copies.
TEST(CudaRuntimeTest, HostRegistrationLeavesTheCallerUnbound) {
  Made m = Make({2, 3});
  std::vector<char> host(1024, 'r');
  ASSERT_TRUE(m.rt->HostRegister(host.data(), host.size()).ok());
  EXPECT_EQ(m.driver->CurrentOnThisThread(), nullptr);
  EXPECT_EQ(m.rt->HostRegister(host.data() + 8, 8).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(m.rt->SetDevice(3).ok());
  void* d = nullptr;
  ASSERT_TRUE(m.rt->Malloc(3, 1024, &d).ok());
  ASSERT_TRUE(
      m.rt->Memcpy(3, d, host.data(), 1024, MemcpyKind::kDeviceToDevice).ok());
  EXPECT_EQ(static_cast<char*>(d)[1023], 'r');
  ASSERT_TRUE(m.rt->Free(3, d).ok());
  ASSERT_TRUE(m.rt->ResetDevice(3).ok());
  ASSERT_TRUE(m.rt->HostUnregister(host.data()).ok());
  EXPECT_EQ(m.rt->HostUnregister(host.data()).code(),
            StatusCode::kInvalidArgument);
}

TEST(CudaRuntimeTest, RefusesGpusWithoutConcurrentManagedAccess) {
  EXPECT_TRUE(Make({2}).rt->HostAccessible(2));
  EXPECT_FALSE(Make({2}).rt->HostAccessible(3));
  auto driver = std::make_shared<FakeCudaDriver>(1);
  driver->SetConcurrentManagedAccess(false);
  CudaOptions o;
  o.cluster = MakeLocalCluster({2});
  o.driver = driver;
  std::shared_ptr<CudaRuntime> rt;
  Status s = CudaRuntime::Create(o, &rt);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported);
  EXPECT_NE(s.message().find("no concurrent managed access"), std::string::npos)
      << s.ToString();
}

// A host thread reads what a copy or a fill wrote as soon as the call
// returns (the fake, like a GPU, lands writes into device memory later
// unless the memory is marked synchronous).
TEST(CudaRuntimeTest, CopiesAndFillsAreCompleteOnReturn) {
  Made m = Make({2, 3});
  ASSERT_TRUE(m.rt->SetDevice(2).ok());
  void *a = nullptr, *b = nullptr;
  ASSERT_TRUE(m.rt->Malloc(2, 4096, &a).ok());
  ASSERT_TRUE(m.rt->Malloc(2, 4096, &b).ok());
  ASSERT_TRUE(m.rt->Memset(2, a, 0x11, 4096).ok());
  EXPECT_EQ(static_cast<unsigned char*>(a)[4095], 0x11);
  std::vector<unsigned char> host(4096, 0x22);
  ASSERT_TRUE(
      m.rt->Memcpy(2, a, host.data(), 4096, MemcpyKind::kHostToDevice).ok());
  EXPECT_EQ(static_cast<unsigned char*>(a)[0], 0x22);
  ASSERT_TRUE(m.rt->Memcpy(2, b, a, 4096, MemcpyKind::kDeviceToDevice).ok());
  EXPECT_EQ(static_cast<unsigned char*>(b)[100], 0x22);
  ASSERT_TRUE(m.rt->Free(2, a).ok());
  ASSERT_TRUE(m.rt->Free(2, b).ok());
  ASSERT_TRUE(m.rt->ResetDevice(2).ok());
}

// Memory belongs to its device, as in the sim: it outlives the user
// context it was allocated under and the last ResetDevice.
TEST(CudaRuntimeTest, MemoryOutlivesContextsAndTheLastReset) {
  Made m = Make({2, 3});
  Context* user = nullptr;
  ASSERT_TRUE(m.rt->CreateContext(3, &user).ok());
  void* p = nullptr;
  ASSERT_TRUE(m.rt->Malloc(3, 256, &p).ok());
  ASSERT_TRUE(m.rt->Memset(3, p, 0x33, 256).ok());
  EXPECT_EQ(m.rt->GetCurrentContext(), user);  // the caller's, still
  ASSERT_TRUE(m.rt->DestroyContext(user).ok());
  ASSERT_TRUE(m.rt->SetDevice(3).ok());
  ASSERT_TRUE(m.rt->ResetDevice(3).ok());  // the last reference
  EXPECT_EQ(m.driver->PrimaryRefs(1), 1);  // held by the memory
  std::thread([&] {
    ASSERT_TRUE(m.rt->SetDevice(3).ok());
    std::vector<unsigned char> back(256);
    ASSERT_TRUE(
        m.rt->Memcpy(3, back.data(), p, 256, MemcpyKind::kDeviceToHost).ok());
    EXPECT_EQ(back[255], 0x33);
    ASSERT_TRUE(m.rt->Free(3, p).ok());
    ASSERT_TRUE(m.rt->ResetDevice(3).ok());
  }).join();
  EXPECT_EQ(m.driver->PrimaryRefs(1), 0);
  EXPECT_EQ(m.driver->AllocationsFreedWithContext(1), 0u);
  ASSERT_TRUE(m.rt->SetCurrentContext(nullptr).ok());
}

TEST(CudaRuntimeTest, FreeOnALostDeviceGivesTheMemoryBack) {
  Made m = Make({2, 3});
  ASSERT_TRUE(m.rt->SetDevice(3).ok());
  void* p = nullptr;
  ASSERT_TRUE(m.rt->Malloc(3, 256, &p).ok());
  m.driver->LoseDevice(1);
  EXPECT_EQ(m.rt->Synchronize(3).code(), StatusCode::kDeviceLost);
  EXPECT_TRUE(m.rt->Free(3, p).ok());
  DeviceStats st;
  ASSERT_TRUE(m.rt->GetDeviceStats(3, &st).ok());
  EXPECT_EQ(st.live_allocations, 0u);
  EXPECT_EQ(st.mem_used_bytes, 0u);
}

// A copy touching a lost peer names the peer and loses nothing else.
TEST(CudaRuntimeTest, CopyToALostPeerNamesThePeer) {
  Made m = Make({2, 3});
  void *a = nullptr, *b = nullptr;
  ASSERT_TRUE(m.rt->SetDevice(3).ok());
  ASSERT_TRUE(m.rt->Malloc(3, 64, &b).ok());
  m.driver->FailNext("CtxSynchronize", CUDA_ERROR_ECC_UNCORRECTABLE);
  EXPECT_EQ(m.rt->Synchronize(3).code(), StatusCode::kDeviceLost);
  ASSERT_TRUE(m.rt->SetDevice(2).ok());
  ASSERT_TRUE(m.rt->Malloc(2, 64, &a).ok());
  Status s = m.rt->Memcpy(2, b, a, 64, MemcpyKind::kDeviceToDevice);
  EXPECT_EQ(s.code(), StatusCode::kDeviceLost);
  EXPECT_NE(s.message().find("device 3 (GPU 1) is lost"), std::string::npos)
      << s.ToString();
  DeviceStats st;
  ASSERT_TRUE(m.rt->GetDeviceStats(2, &st).ok());
  EXPECT_FALSE(st.lost);
  ASSERT_TRUE(m.rt->Free(2, a).ok());
  ASSERT_TRUE(m.rt->ResetDevice(2).ok());
}

TEST(CudaRuntimeTest, TwoThreadsDestroyOneContextOnce) {
  Made m = Make({2, 3});
  Context* ctx = nullptr;
  ASSERT_TRUE(m.rt->CreateContext(2, &ctx).ok());
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] { ok += m.rt->DestroyContext(ctx).ok(); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(m.driver->Calls("CtxDestroy"), 1u);  // the driver asked once
  DeviceStats st;
  ASSERT_TRUE(m.rt->GetDeviceStats(2, &st).ok());
  EXPECT_EQ(st.contexts_alive, 0u);
}

// What a runtime took from the driver goes back at its end, whichever
// thread ends it and whatever that thread had bound.
TEST(CudaRuntimeTest, EndingTheRuntimeGivesEverythingBack) {
  auto driver = std::make_shared<FakeCudaDriver>(3);
  {
    CudaOptions o;
    o.cluster = MakeLocalCluster({3, 6, 7});
    o.driver = driver;
    std::shared_ptr<CudaRuntime> rt;
    ASSERT_TRUE(CudaRuntime::Create(o, &rt).ok());
    std::thread([&] {
      void* p = nullptr;
      ASSERT_TRUE(rt->SetDevice(6).ok());
      ASSERT_TRUE(rt->Malloc(6, 100, &p).ok());
      ASSERT_TRUE(rt->SetDevice(7).ok());
      ASSERT_TRUE(rt->Malloc(7, 100, &p).ok());
    }).join();
    static char host[64];
    ASSERT_TRUE(rt->HostRegister(host, sizeof(host)).ok());
    EXPECT_EQ(driver->LiveAllocations(1), 1u);
  }
  for (int gpu = 0; gpu < 3; ++gpu) {
    EXPECT_EQ(driver->PrimaryRefs(gpu), 0) << gpu;
    EXPECT_EQ(driver->LiveAllocations(gpu), 0u) << gpu;
    EXPECT_EQ(driver->AllocationsFreedWithContext(gpu), 0u) << gpu;
  }
  EXPECT_EQ(driver->CurrentOnThisThread(), nullptr);
}

}  // namespace
}  // namespace rt
}  // namespace hflow
