// Exception catch across the worker boundary: a UDF in a worker process
// that calls RaiseException has its transaction come back with the
// exception's code and no data, as in the host (GE ignores what the
// raising UDF emits after it), and the other transactions are untouched;
// in its own worker (heavy_load) and in its device's shared one
// (udf_isolation). On device sets with and without device 0.
//
// Thread-safety: each test drives its session from the test thread.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::I64;

constexpr int32_t kRaised = 7700123;  // the Fragile UDF's "raise" code

class WorkerExceptionTest : public testing::WorkerTest {
 protected:
  // x ── id ── frag (raises on input 3) ── out, exception catch on.
  void Run(bool heavy) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.udf_isolation = !heavy;
    ASSERT_TRUE(Initialize(o).ok());
    const std::string config = testing::FragileConfig(dir_, heavy);
    FlowGraph g = testing::FragileGraph(GetParam(), config, "raise", 3);
    g.SetExceptionCatch(true);
    Session s;
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (uint64_t t = 1; t <= 4; ++t) {
      SCOPED_TRACE("transaction " + std::to_string(t));
      Feed(s, t, int64_t(t));
      std::vector<Tensor> out;
      FlowInfo info;
      st = s.FetchData(1, &out, &info, 10000);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(info.transaction_id, t);
      if (t == 3) {
        EXPECT_EQ(info.ret_code, kRaised);
        ASSERT_EQ(out.size(), 1u);
        EXPECT_EQ(out[0].data.size(), 0u) << "a raised transaction's data";
      } else {
        EXPECT_EQ(info.ret_code, 0);
        ASSERT_EQ(out.size(), 1u);
        const std::vector<int64_t> v = out[0].As<int64_t>();
        EXPECT_EQ(v.at(0), int64_t(2 * t));
        EXPECT_NE(v.at(1), int64_t(getpid())) << "ran in a worker";
      }
    }
  }
};

TEST_P(WorkerExceptionTest, ARaiseInItsOwnWorkerReachesTheFetch) {
  Run(/*heavy=*/true);
}

TEST_P(WorkerExceptionTest, ARaiseInASharedWorkerReachesTheFetch) {
  Run(/*heavy=*/false);
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerExceptionTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
