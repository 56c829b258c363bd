// A whole graph on the CUDA backend, on the fake driver: Initialize with
// backend "cuda", the services (memory groups, queues, mbufs) on managed
// memory, UDFs on executor threads that must bind each GPU's primary
// context themselves (the driver has no implicit binding), feed/fetch with
// values checked, on device sets with and without 0; the caller's context
// is untouched, no GPU outside the graph gets a context, and Finalize gives
// the driver back every allocation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "acl/acl.h"
#include "cuda/fake_cuda_driver.h"
#include "hflow/ge_options.h"
#include "hflow/hflow.h"
#include "rt/cuda/cuda_runtime.h"
#include "test_graphs.h"
#include "tools/devices_command.h"

namespace hflow {
namespace {

using ::hflow::testing::AddPipeline;
using ::hflow::testing::FakeCudaDriver;

class CudaSessionTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    driver_ = std::make_shared<FakeCudaDriver>(
        static_cast<int>(GetParam().size()), 2ull << 30);
    rt::SetCudaDriverForTesting(driver_);
  }
  void TearDown() override {
    (void)Finalize();
    rt::SetCudaDriverForTesting(nullptr);
  }
  std::shared_ptr<FakeCudaDriver> driver_;
};

TEST_P(CudaSessionTest, AddPipelineRunsOnGpus) {
  const std::vector<int32_t>& ids = GetParam();
  Options o;
  o.backend = "cuda";
  o.cluster = MakeLocalCluster(ids, 1ull << 30);
  Status st = Initialize(o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_STREQ(rt::CurrentRuntime()->Name(), "cuda");
  // The graph uses the two largest ids; the others must stay untouched.
  int32_t d0 = ids[ids.size() - 2], d1 = ids.back();
  {
    Session s;
    ASSERT_TRUE(s.AddGraph(1, AddPipeline(d0, d1)).ok());
    st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int i = 0; i < 20; ++i) {
      FlowInfo in;
      st = s.FeedData(
          1,
          {Tensor::From<int32_t>(DataType::kInt32, {3}, {i, 2, 3}),
           Tensor::From<int32_t>(DataType::kInt32, {3}, {10, 20, 30})},
          in, 1000);
      ASSERT_TRUE(st.ok()) << st.ToString();
    }
    for (int i = 0; i < 20; ++i) {
      std::vector<Tensor> out;
      FlowInfo info;
      st = s.FetchData(1, &out, &info, 5000);
      ASSERT_TRUE(st.ok()) << st.ToString();
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(info.transaction_id, uint64_t(i + 1));
      EXPECT_EQ(out[0].As<int32_t>(),
                (std::vector<int32_t>{2 * (i + 10), 44, 66}));
    }
    std::vector<DeviceReport> reports;
    ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
    ASSERT_EQ(reports.size(), ids.size());
    for (const DeviceReport& r : reports) {
      EXPECT_EQ(r.implicit_bindings, 0u) << "device " << r.id;
    }
  }
  // The feeding thread was never bound, and nothing left it bound.
  EXPECT_EQ(driver_->CurrentOnThisThread(), nullptr);
  for (size_t i = 0; i + 2 < ids.size(); ++i) {
    EXPECT_EQ(driver_->ContextsCreated(static_cast<int>(i)), 0u)
        << "device " << ids[i] << " (GPU " << i << ") was touched";
  }
  ASSERT_TRUE(Finalize().ok());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(driver_->LiveAllocations(static_cast<int>(i)), 0u) << i;
    // Given back by hflow, not reclaimed with a dying context.
    EXPECT_EQ(driver_->AllocationsFreedWithContext(static_cast<int>(i)), 0u)
        << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Sets, CudaSessionTest,
                         ::testing::Values(std::vector<int32_t>{0, 1, 2, 3},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}));

// `hflow devices --backend cuda` shows the GPU behind each device.
TEST(CudaBackendTest, DevicesCommandShowsTheGpus) {
  auto driver = std::make_shared<FakeCudaDriver>(2);
  rt::SetCudaDriverForTesting(driver);
  tools::ClusterArgs args;
  args.devices = "3,6";
  std::ostringstream out, err;
  EXPECT_EQ(tools::RunDevices(args, false, out, err, "cuda"), 0) << err.str();
  EXPECT_NE(out.str().find("GPU 0 (Fake GPU 0)"), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("GPU 1 (Fake GPU 1)"), std::string::npos);
  std::ostringstream json;
  EXPECT_EQ(tools::RunDevices(args, true, json, err, "cuda"), 0);
  EXPECT_NE(json.str().find("\"backend\":\"cuda\""), std::string::npos)
      << json.str();
  EXPECT_NE(json.str().find("\"on\":\"GPU 1 (Fake GPU 1)\""),
            std::string::npos);
  // Three devices on two GPUs: refused, naming both counts.
  args.devices = "2,3,4";
  std::ostringstream none, why;
  EXPECT_EQ(tools::RunDevices(args, false, none, why, "cuda"), 1);
  EXPECT_NE(why.str().find("sees 2 GPU(s)"), std::string::npos) << why.str();
  rt::SetCudaDriverForTesting(nullptr);
}

// A cluster file's "backend" chooses the runtime when the program leaves
// Options::backend at its default, in Initialize and in `hflow devices`.
TEST(CudaBackendTest, ClusterFileChoosesTheBackend) {
  auto driver = std::make_shared<FakeCudaDriver>(2);
  rt::SetCudaDriverForTesting(driver);
  ClusterConfig cluster;
  ASSERT_TRUE(ParseClusterConfig(R"({"devices":[3,6],"backend":"cuda"})",
                                 "gpus.json", &cluster)
                  .ok());
  Options o;
  o.cluster = cluster;
  Status st = Initialize(o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_STREQ(rt::CurrentRuntime()->Name(), "cuda");
  ASSERT_TRUE(Finalize().ok());
  // A program that names a backend keeps it.
  o.backend = "sim";
  ASSERT_TRUE(Initialize(o).ok());
  EXPECT_STREQ(rt::CurrentRuntime()->Name(), "sim");
  ASSERT_TRUE(Finalize().ok());
  char path[] = "/tmp/hflow_gpus_XXXXXX.json";
  int fd = mkstemps(path, 5);
  ASSERT_GE(fd, 0);
  const std::string text = R"({"devices":[3,6],"backend":"cuda"})";
  ASSERT_EQ(write(fd, text.data(), text.size()),
            static_cast<ssize_t>(text.size()));
  close(fd);
  tools::ClusterArgs args;
  args.cluster_file = path;
  std::ostringstream out, err;
  EXPECT_EQ(tools::RunDevices(args, true, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("\"backend\":\"cuda\""), std::string::npos)
      << out.str();
  EXPECT_NE(out.str().find("Fake GPU 1"), std::string::npos);
  // ACL reads the same file ($RESOURCE_CONFIG_PATH) to the same runtime,
  // and Initialize then adopts the one ACL holds (one runtime for both).
  setenv("RESOURCE_CONFIG_PATH", path, 1);
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  rt::DeviceRuntime* acl_runtime = rt::CurrentRuntime();
  EXPECT_STREQ(acl_runtime->Name(), "cuda");
  Options from_file;
  ASSERT_TRUE(ClusterConfigFromEnvironment(&from_file.cluster, nullptr).ok());
  st = Initialize(from_file);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(rt::CurrentRuntime(), acl_runtime);
  ASSERT_TRUE(Finalize().ok());
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  unsetenv("RESOURCE_CONFIG_PATH");
  unlink(path);
  rt::SetCudaDriverForTesting(nullptr);
}

TEST(CudaBackendTest, NoDriverIsAClearError) {
  rt::SetCudaDriverForTesting(nullptr);
  setenv("HFLOW_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  Options o;
  o.backend = "cuda";
  o.cluster = MakeLocalCluster({2, 3});
  Status st = Initialize(o);
  unsetenv("HFLOW_CUDA_DRIVER");
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("'/nonexistent/libcuda.so.1'"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("use the 'sim' backend"), std::string::npos);
}

}  // namespace
}  // namespace hflow
