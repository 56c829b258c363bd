// Device reports cover worker processes: each hflow-worker binds in a
// runtime of its own, and its counters (contexts created, implicit
// bindings) reach the host's DeviceReports and `--stats`, live and after
// the worker ended, so "no stray contexts" is checked across processes.
// The same graph in the host and isolated differs by exactly the worker's
// context on its node's device (one more per restart); no device sees an
// implicit binding. On device sets with and without device 0.
//
// Thread-safety: each test drives its session from the test thread.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "test_util.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::I64;

constexpr int32_t kIoMs = 10000;

struct Counts {
  uint64_t contexts = 0;
  uint64_t implicit = 0;
};
using PerDevice = std::map<int32_t, Counts>;

PerDevice Rows(const std::vector<DeviceReport>& reports) {
  PerDevice out;
  for (const DeviceReport& r : reports) {
    out[r.id] = {r.contexts_created, r.implicit_bindings};
  }
  return out;
}

class WorkerReportsTest : public testing::WorkerTest {
 protected:
  struct Run {
    PerDevice live;   // Session::DeviceReports while the graph runs
    PerDevice after;  // hflow::DeviceReports after RemoveGraph
    PerDevice final;  // hflow::DeviceReports after Finalize
  };

  // Runs x ── id ── frag ── out for three transactions in a fresh
  // Initialize; `kill_worker` kills frag's worker after the first (under
  // RestartPolicy::kRestart it is started again).
  Run Measure(bool heavy, bool kill_worker = false) {
    Run run;
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.restart_policy = RestartPolicy::kRestart;
    Status st = Initialize(o);
    EXPECT_TRUE(st.ok()) << st.ToString();
    {
      Session s;
      const std::string config = testing::FragileConfig(dir_, heavy);
      EXPECT_TRUE(
          s.AddGraph(1, testing::FragileGraph(GetParam(), config, "pass", -1))
              .ok());
      st = s.BuildGraph(1);
      EXPECT_TRUE(st.ok()) << st.ToString();
      for (int64_t v = 1; v <= 3; ++v) {
        FlowInfo in;
        in.transaction_id = uint64_t(v);
        EXPECT_TRUE(s.FeedData(1, {I64(v)}, in, kIoMs).ok());
        std::vector<Tensor> out;
        FlowInfo info;
        st = s.FetchData(1, &out, &info, kIoMs);
        EXPECT_TRUE(st.ok()) << st.ToString();
        const int64_t pid = out.empty() ? -1 : out[0].As<int64_t>().at(1);
        if (v == 1 && kill_worker) {
          EXPECT_NE(pid, int64_t(getpid()));
          EXPECT_TRUE(testing::SignalWorker(pid, SIGKILL));
          EXPECT_TRUE(testing::Gone(pid));
        }
      }
      std::vector<DeviceReport> reports;
      EXPECT_TRUE(s.DeviceReports(1, &reports).ok());
      run.live = Rows(reports);
      EXPECT_TRUE(s.RemoveGraph(1).ok());
      EXPECT_TRUE(DeviceReports(&reports).ok());
      run.after = Rows(reports);
    }
    EXPECT_TRUE(Finalize().ok());
    std::vector<DeviceReport> reports;
    EXPECT_TRUE(DeviceReports(&reports).ok());
    run.final = Rows(reports);
    return run;
  }

  // `isolated` has `extra` more contexts than `host` on frag's device and
  // the same elsewhere; neither has an implicit binding.
  void ExpectWorkerContexts(const PerDevice& host, const PerDevice& isolated,
                            uint64_t extra) {
    const int32_t frag = GetParam().back();
    ASSERT_EQ(host.size(), isolated.size());
    for (const auto& [d, h] : host) {
      SCOPED_TRACE("device " + std::to_string(d));
      const Counts& i = isolated.at(d);
      EXPECT_EQ(i.contexts, h.contexts + (d == frag ? extra : 0));
      EXPECT_EQ(h.implicit, 0u);
      EXPECT_EQ(i.implicit, 0u);
    }
  }
};

TEST_P(WorkerReportsTest, AWorkersContextCountsOnItsDevice) {
  const Run host = Measure(/*heavy=*/false);
  const Run isolated = Measure(/*heavy=*/true);
  ExpectWorkerContexts(host.live, isolated.live, 1);
  ExpectWorkerContexts(host.after, isolated.after, 1);
  ExpectWorkerContexts(host.final, isolated.final, 1);
  EXPECT_GE(isolated.live.at(GetParam().back()).contexts, 2u);
}

TEST_P(WorkerReportsTest, ARestartedWorkerCountsTwice) {
  const Run host = Measure(/*heavy=*/false);
  const Run restarted = Measure(/*heavy=*/true, /*kill_worker=*/true);
  ExpectWorkerContexts(host.after, restarted.after, 2);
  ExpectWorkerContexts(host.final, restarted.final, 2);
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerReportsTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
