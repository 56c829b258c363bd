// The CUDA backend on a real GPU, through the real driver (libcuda.so.1):
// the binding rules on logical devices without 0, a byte-exact round trip,
// the guards restoring the caller's context, and a graph end to end. Where
// no GPU (or no driver) is present each test says so in a visible line and
// is reported by ctest as not run ("Skipped"), never as passed;
// $HFLOW_REQUIRE_GPU makes that a failure (scripts/gpu-suite, on a GPU
// machine).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>

#include "hflow/context_guard.h"
#include "hflow/hflow.h"
#include "rt/cuda/cuda_runtime.h"
#include "test_graphs.h"

namespace hflow {
namespace {

// Logical ids without 0 on the GPUs there are (at most two used): {3} on a
// one-GPU machine, {2, 3} on more.
class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::unique_ptr<rt::CudaDriver> driver;
    const char* env = std::getenv("HFLOW_CUDA_DRIVER");
    Status st = rt::LoadCudaDriver(env ? env : "libcuda.so.1", &driver);
    int count = 0;
    if (st.ok() &&
        (driver->Init(0) != CUDA_SUCCESS ||
         driver->DeviceGetCount(&count) != CUDA_SUCCESS || count == 0)) {
      st = Status::NotSupported("the driver sees no GPU");
    }
    if (!st.ok() && std::getenv("HFLOW_REQUIRE_GPU") != nullptr) {
      FAIL() << "HFLOW_REQUIRE_GPU is set but " << st.ToString();
    }
    if (!st.ok()) {
      std::fprintf(
          stderr, "[ NO GPU   ] %s did not run for want of a GPU: %s\n",
          ::testing::UnitTest::GetInstance()->current_test_info()->name(),
          st.ToString().c_str());
      GTEST_SKIP() << "needs a GPU";
    }
    ids_ = count == 1 ? std::vector<int32_t>{3} : std::vector<int32_t>{2, 3};
    driver_ = std::move(driver);
  }
  std::shared_ptr<rt::CudaDriver> driver_;
  std::vector<int32_t> ids_;
};

TEST_F(CudaGpuTest, BindingRulesAndRoundTripOnDevicesWithoutZero) {
  rt::CudaOptions o;
  o.cluster = MakeLocalCluster(ids_, 1ull << 30);
  o.driver = driver_;
  std::shared_ptr<rt::CudaRuntime> rt;
  Status st = rt::CudaRuntime::Create(o, &rt);
  ASSERT_TRUE(st.ok()) << st.ToString();
  int32_t d = ids_.back();
  std::printf("device %d is GPU %d: %s\n", d, rt->Ordinal(d),
              rt->GpuName(d).c_str());
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
    ASSERT_TRUE(rt->Synchronize(d).ok());
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
}

TEST_F(CudaGpuTest, GraphEndToEnd) {
  Options o;
  o.backend = "cuda";
  o.cluster = MakeLocalCluster(ids_, 1ull << 30);
  Status st = Initialize(o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  {
    Session s;
    ASSERT_TRUE(
        s.AddGraph(1, testing::AddPipeline(ids_.front(), ids_.back())).ok());
    st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int i = 0; i < 10; ++i) {
      FlowInfo in;
      ASSERT_TRUE(
          s.FeedData(1,
                     {Tensor::From<int32_t>(DataType::kInt32, {2}, {i, 1}),
                      Tensor::From<int32_t>(DataType::kInt32, {2}, {5, 5})},
                     in, 1000)
              .ok());
      std::vector<Tensor> out;
      FlowInfo info;
      st = s.FetchData(1, &out, &info, 10000);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(out.at(0).As<int32_t>(),
                (std::vector<int32_t>{2 * (i + 5), 12}));
    }
  }
  EXPECT_TRUE(Finalize().ok());
}

}  // namespace
}  // namespace hflow
