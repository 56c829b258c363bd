// A graph end to end on a real GPU (the CUDA backend through Initialize):
// feed, two UDF stages on logical devices without 0, fetch with values
// checked. Skipped, visibly, without a GPU (cuda_gpu_fixture.h).
#include "cuda/cuda_gpu_fixture.h"
#include "hflow/hflow.h"
#include "test_graphs.h"

namespace hflow {
namespace testing {
namespace {

TEST_F(CudaGpuTest, GraphEndToEnd) {
  Options o;
  o.backend = "cuda";
  o.cluster = MakeLocalCluster(ids_, 1ull << 30);
  Status st = Initialize(o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  {
    Session s;
    ASSERT_TRUE(s.AddGraph(1, AddPipeline(ids_.front(), ids_.back())).ok());
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
    std::vector<DeviceReport> reports;
    ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
    for (const DeviceReport& r : reports) EXPECT_EQ(r.implicit_bindings, 0u);
  }
  EXPECT_TRUE(Finalize().ok());
}

}  // namespace
}  // namespace testing
}  // namespace hflow
