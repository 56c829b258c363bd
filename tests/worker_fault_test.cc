// The fault sweep, isolated: fail the k-th call of a worker's own runtime
// (HFLOW_WORKER_FAULT=k, Note [Faults in a worker] in worker_server.cc)
// for k = 1, 2, ... until a run sees no fault, on a graph whose UDF runs in
// a worker: x ── id ── frag (heavy_load) ── out, 5 messages. Every run
// must end (bounded waits, a watchdog), every step return OK or an error
// naming the node, results be right or carry a ret code, no worker
// outlive the graph, and a fresh graph afterwards work. At least one k
// must reach the worker (a failed step), so the hook is known to bite.
// On device sets with and without device 0.
//
// Thread-safety: each run drives its session from the test thread.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "test_util.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::I64;
using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr int kMessages = 5;
constexpr int32_t kStepMs = 5000;
constexpr uint64_t kMaxK = 60;  // far beyond the calls one run makes

class WorkerFaultTest : public testing::WorkerTest {
 protected:
  void TearDown() override {
    unsetenv("HFLOW_WORKER_FAULT");
    WorkerTest::TearDown();
  }

  // One run with the k-th worker call failing (0: none); true when every
  // step succeeded.
  bool RunOnce(uint64_t k) {
    SCOPED_TRACE("HFLOW_WORKER_FAULT=" + std::to_string(k));
    if (k > 0) {
      setenv("HFLOW_WORKER_FAULT", std::to_string(k).c_str(), 1);
    } else {
      unsetenv("HFLOW_WORKER_FAULT");
    }
    const std::string pid_file = (dir_ / "worker.pid").string();
    std::remove(pid_file.c_str());
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.init_timeout_ms = kStepMs;
    Status st = Initialize(o);
    EXPECT_TRUE(st.ok()) << st.ToString();
    bool clean = true;
    {
      Session s;
      const std::string config = testing::FragileConfig(dir_, true);
      EXPECT_TRUE(s.AddGraph(1, testing::FragileGraph(GetParam(), config,
                                                      "pass", -1, pid_file))
                      .ok());
      st = s.BuildGraph(1);
      if (!st.ok()) {
        EXPECT_THAT(st.message(), HasSubstr("frag")) << st.ToString();
        clean = false;
      }
      for (int v = 1; st.ok() && v <= kMessages; ++v) {
        FlowInfo in;
        in.transaction_id = uint64_t(v);
        st = s.FeedData(1, {I64(v)}, in, kStepMs);
        if (!st.ok()) break;
        std::vector<Tensor> out;
        FlowInfo info;
        st = s.FetchData(1, &out, &info, kStepMs);
        EXPECT_FALSE(st.IsTimeout()) << "a fault became a stall";
        if (st.ok() && info.ret_code == 0) {
          EXPECT_EQ(out.at(0).As<int64_t>().at(0), 2 * v);
        } else {
          clean = false;
        }
      }
      if (!st.ok()) {
        EXPECT_FALSE(st.message().empty());
        clean = false;
      }
      EXPECT_TRUE(s.RemoveGraph(1).ok());
    }
    EXPECT_TRUE(Finalize().ok());
    int64_t pid = -1;
    if (std::ifstream(pid_file) >> pid) {
      EXPECT_TRUE(testing::Gone(pid)) << "worker " << pid << " outlived it";
    }
    return clean;
  }
};

TEST_P(WorkerFaultTest, EveryFailedWorkerCallEndsCleanly) {
  testing::Watchdog dog(milliseconds(120000), "the isolated fault sweep");
  int faulted = 0;
  uint64_t k = 1;
  for (; k <= kMaxK; ++k) {
    if (RunOnce(k)) break;  // past the last call: nothing failed
    ++faulted;
  }
  EXPECT_LT(k, kMaxK) << "every run failed: the fault never ran out";
  EXPECT_GT(faulted, 0) << "no fault reached the worker";
  std::cerr << "worker fault sweep: " << faulted
            << " calls failed one at a time\n";
  EXPECT_TRUE(RunOnce(0));  // and without faults all is well
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerFaultTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
