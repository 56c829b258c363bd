// Outputs an isolated UDF sets outside Proc (Note [Outputs outside Proc]
// in src/worker/worker_data.cc): Fragile in mode "thread" sets each
// output from a thread of its own after Proc has returned. In a worker
// such an output goes to the host as an Emit and is delivered as the same
// output of a UDF in the host is; the results must match the in-host run
// of the same graph: every input once, in order, under its transaction.
// The pid in each output says where the UDF ran. On device sets with and
// without device 0.
//
//   x ── id@first ── frag@last (mode "thread") ── out
//
// Thread-safety: each test drives its session from the test thread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "hflow/hflow.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

constexpr uint64_t kCount = 30;  // within the queues' depth (64)

class WorkerEmitTest : public testing::WorkerTest {
 protected:
  // Feeds 1..kCount and fetches them; returns the pid the outputs name
  // (all the same), or -1 after a failed check.
  int64_t RunThrough(bool heavy) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    Status st = Initialize(o);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return -1;
    Session s;
    st = s.AddGraph(
        1, testing::FragileGraph(
               GetParam(), testing::FragileConfig(dir_, heavy), "thread", -1));
    EXPECT_TRUE(st.ok()) << st.ToString();
    st = s.BuildGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return -1;
    for (uint64_t t = 1; t <= kCount; ++t) Feed(s, t, int64_t(t));
    int64_t pid = -1;
    for (uint64_t t = 1; t <= kCount; ++t) {
      const Result r = Fetch(s);
      EXPECT_TRUE(r.status.ok())
          << "fetch " << t << ": " << r.status.ToString();
      if (!r.status.ok()) return -1;
      EXPECT_EQ(r.ret_code, 0) << "fetch " << t;
      EXPECT_EQ(r.trans, t);
      EXPECT_EQ(r.value, 2 * int64_t(t));
      if (t == 1) pid = r.pid;
      EXPECT_EQ(r.pid, pid) << "fetch " << t;
    }
    // Nothing more: each input gave exactly one output.
    const Result extra = Fetch(s, 200);
    EXPECT_FALSE(extra.status.ok()) << "an output too many: " << extra.value;
    st = s.RemoveGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return pid;
  }
};

// The reference: in the host, an output from the UDF's thread is
// delivered as any other.
TEST_P(WorkerEmitTest, InTheHostOutputsFromTheUdfsThreadArrive) {
  EXPECT_EQ(RunThrough(/*heavy=*/false), int64_t(getpid()));
}

// In a worker, the same outputs arrive the same way, from the worker.
TEST_P(WorkerEmitTest, InAWorkerOutputsFromTheUdfsThreadArrive) {
  const int64_t pid = RunThrough(/*heavy=*/true);
  EXPECT_GT(pid, 0);
  EXPECT_NE(pid, int64_t(getpid())) << "frag ran in the host";
}

// A second graph in the same session after one that emitted: the seat's
// emitter and the worker's waits left nothing behind that stops it.
TEST_P(WorkerEmitTest, TheNextGraphWorksAfterAnEmittingOne) {
  EXPECT_GT(RunThrough(/*heavy=*/true), 0);
  ASSERT_TRUE(Finalize().ok());
  EXPECT_GT(RunThrough(/*heavy=*/true), 0);
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerEmitTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()));

}  // namespace
}  // namespace hflow
