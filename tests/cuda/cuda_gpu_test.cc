// The CUDA backend's runtime on a real GPU, through the real driver
// (libcuda.so.1): the binding rules on logical devices without 0, no
// stray primary context on a GPU outside the set, copies and fills
// complete when they return (a host thread reads them next), a context
// another library made (as torch does) recognised and restored, and one
// 64 MiB device-to-device copy timed against the driver's own. Skipped,
// visibly, without a GPU (cuda_gpu_fixture.h). Also built alone as
// hflow_cuda_gpu_check, which a GPU machine runs without hflow's
// dependencies (scripts/gpu-suite).
#include <chrono>
#include <vector>

#include "cuda/cuda_gpu_fixture.h"
#include "hflow/context_guard.h"
#include "rt/cuda/cuda_runtime.h"

namespace hflow {
namespace testing {
namespace {

std::shared_ptr<rt::CudaRuntime> MakeRuntime(
    const std::shared_ptr<rt::CudaDriver>& driver,
    const std::vector<int32_t>& ids) {
  rt::CudaOptions o;
  o.cluster = MakeLocalCluster(ids, 1ull << 30);
  o.driver = driver;
  std::shared_ptr<rt::CudaRuntime> rt;
  Status st = rt::CudaRuntime::Create(o, &rt);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return rt;
}

TEST_F(CudaGpuTest, BindingRulesOnDevicesWithoutZero) {
  auto rt = MakeRuntime(driver_, ids_);
  ASSERT_TRUE(rt);
  int32_t d = ids_.back();
  std::printf("device %d is %s\n", d, rt->DeviceLabel(d).c_str());
  void* p = nullptr;
  EXPECT_EQ(rt->Malloc(d, 64, &p).code(), StatusCode::kNoContext);
  {
    ContextGuard guard(rt.get());
    ASSERT_TRUE(rt->SetDevice(d).ok());
    ASSERT_TRUE(rt->Malloc(d, 1 << 20, &p).ok());
    std::vector<uint8_t> in(1 << 20), out(1 << 20);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
    ASSERT_TRUE(
        rt->Memcpy(d, p, in.data(), in.size(), rt::MemcpyKind::kHostToDevice)
            .ok());
    ASSERT_TRUE(
        rt->Memcpy(d, out.data(), p, out.size(), rt::MemcpyKind::kDeviceToHost)
            .ok());
    EXPECT_EQ(in, out);
    if (ids_.size() > 1) {
      EXPECT_EQ(rt->Malloc(ids_.front(), 64, &p).code(),
                StatusCode::kContextMismatch);
    }
    ASSERT_TRUE(rt->Free(d, p).ok());
    ASSERT_TRUE(rt->ResetDevice(d).ok());
  }
  CUcontext cur = nullptr;
  ASSERT_EQ(driver_->CtxGetCurrent(&cur), CUDA_SUCCESS);
  EXPECT_EQ(cur, nullptr);  // the guard restored "unbound"
  rt::DeviceStats stats;
  ASSERT_TRUE(rt->GetDeviceStats(d, &stats).ok());
  EXPECT_EQ(stats.implicit_bindings, 0u);
  EXPECT_EQ(stats.live_allocations, 0u);
  // Nothing touched a GPU outside the set (none on a one- or two-GPU box).
  for (int gpu = static_cast<int>(ids_.size()); gpu < gpus_; ++gpu) {
    EXPECT_FALSE(PrimaryActive(gpu)) << "GPU " << gpu;
  }
}

// What a host thread reads right after a fill or a copy into managed
// memory is what was written: the copies are synchronous for the host.
TEST_F(CudaGpuTest, CopiesAndFillsAreCompleteOnReturn) {
  auto rt = MakeRuntime(driver_, ids_);
  ASSERT_TRUE(rt);
  int32_t d = ids_.back();
  ContextGuard guard(rt.get());
  ASSERT_TRUE(rt->SetDevice(d).ok());
  const size_t n = 64u << 20;
  void *a = nullptr, *b = nullptr;
  ASSERT_TRUE(rt->Malloc(d, n, &a).ok());
  ASSERT_TRUE(rt->Malloc(d, n, &b).ok());
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(rt->Memset(d, a, 0x40 + round, n).ok());
    EXPECT_EQ(static_cast<uint8_t*>(a)[n - 1], 0x40 + round);
    ASSERT_TRUE(rt->Memcpy(d, b, a, n, rt::MemcpyKind::kDeviceToDevice).ok());
    EXPECT_EQ(static_cast<uint8_t*>(b)[n / 2], 0x40 + round);
    std::vector<uint8_t> host(n, static_cast<uint8_t>(0x60 + round));
    ASSERT_TRUE(
        rt->Memcpy(d, a, host.data(), n, rt::MemcpyKind::kHostToDevice).ok());
    EXPECT_EQ(static_cast<uint8_t*>(a)[n - 1], 0x60 + round);
  }
  // The same copy through the driver alone, for the ratio (not asserted).
  auto time = [&](auto copy) {
    copy();  // warm
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) copy();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
               .count() /
           10;
  };
  double ours = time([&] {
    ASSERT_TRUE(rt->Memcpy(d, b, a, n, rt::MemcpyKind::kDeviceToDevice).ok());
  });
  double driver = time([&] {
    driver_->Memcpy(reinterpret_cast<CUdeviceptr>(b),
                    reinterpret_cast<CUdeviceptr>(a), n);
    driver_->CtxSynchronize();
  });
  std::printf(
      "64 MiB device-to-device: runtime %.3f ms, driver %.3f ms, "
      "ratio %.2f\n",
      ours * 1e3, driver * 1e3, driver / ours);
  ASSERT_TRUE(rt->Free(d, a).ok());
  ASSERT_TRUE(rt->Free(d, b).ok());
  ASSERT_TRUE(rt->ResetDevice(d).ok());
}

// A library that binds the GPU's primary context itself (torch does) is
// recognised as bound to that device, and the guards restore its binding.
TEST_F(CudaGpuTest, ForeignPrimaryContextIsTheDevice) {
  auto rt = MakeRuntime(driver_, ids_);
  ASSERT_TRUE(rt);
  int32_t d = ids_.back();
  CUdevice dev = 0;
  ASSERT_EQ(driver_->DeviceGet(&dev, rt->Ordinal(d)), CUDA_SUCCESS);
  CUcontext foreign = nullptr;
  ASSERT_EQ(driver_->DevicePrimaryCtxRetain(&foreign, dev), CUDA_SUCCESS);
  ASSERT_EQ(driver_->CtxSetCurrent(foreign), CUDA_SUCCESS);
  void* p = nullptr;
  ASSERT_TRUE(rt->Malloc(d, 256, &p).ok());
  {
    ContextGuard guard(rt.get());
    ASSERT_TRUE(rt->SetCurrentContext(nullptr).ok());
  }
  CUcontext cur = nullptr;
  ASSERT_EQ(driver_->CtxGetCurrent(&cur), CUDA_SUCCESS);
  EXPECT_EQ(cur, foreign);
  ASSERT_TRUE(rt->Free(d, p).ok());
  ASSERT_EQ(driver_->CtxSetCurrent(nullptr), CUDA_SUCCESS);
  ASSERT_EQ(driver_->DevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
}

}  // namespace
}  // namespace testing
}  // namespace hflow
