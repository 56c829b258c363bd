// The fixture of the tests that need a real GPU (cuda_gpu_test.cc,
// cuda_gpu_graph_test.cc): loads the real driver; where there is no GPU
// (or no driver) it prints a visible line and skips, which ctest reports
// as not run, never as passed; $HFLOW_REQUIRE_GPU makes that a failure
// (scripts/gpu-suite, on a GPU machine). Device ids are logical ids
// without 0 on the GPUs there are (at most two): {3} on a one-GPU machine,
// {2, 3} on more.
//
// Thread-safety: gtest fixture; the test's thread only.
#ifndef HFLOW_TESTS_CUDA_CUDA_GPU_FIXTURE_H_
#define HFLOW_TESTS_CUDA_CUDA_GPU_FIXTURE_H_

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "rt/cuda/cuda_driver.h"

namespace hflow {
namespace testing {

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::unique_ptr<rt::CudaDriver> driver;
    const char* env = std::getenv("HFLOW_CUDA_DRIVER");
    Status st = rt::LoadCudaDriver(env ? env : "libcuda.so.1", &driver);
    if (st.ok() &&
        (driver->Init(0) != CUDA_SUCCESS ||
         driver->DeviceGetCount(&gpus_) != CUDA_SUCCESS || gpus_ == 0)) {
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
    ids_ = gpus_ == 1 ? std::vector<int32_t>{3} : std::vector<int32_t>{2, 3};
    driver_ = std::move(driver);
  }

  // Whether GPU `ordinal`'s primary context is active in this process.
  bool PrimaryActive(int ordinal) {
    CUdevice dev = 0;
    unsigned int flags = 0;
    int active = 0;
    EXPECT_EQ(driver_->DeviceGet(&dev, ordinal), CUDA_SUCCESS);
    EXPECT_EQ(driver_->DevicePrimaryCtxGetState(dev, &flags, &active),
              CUDA_SUCCESS);
    return active != 0;
  }

  std::shared_ptr<rt::CudaDriver> driver_;
  std::vector<int32_t> ids_;
  int gpus_ = 0;
};

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_CUDA_CUDA_GPU_FIXTURE_H_
