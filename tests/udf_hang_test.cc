// Hung UDFs through the public API: a UDF that never returns from Init makes
// BuildGraph fail within Options::init_timeout_ms with a timeout naming the
// node; one that never returns from Proc makes RemoveGraph, Finalize and the
// Session's destructor return within Options::stop_timeout_ms, naming the
// node and transaction, after the results already produced were fetched.
// The stuck thread is abandoned, never joined: a new Initialize and graph
// work afterwards, and the thread may return later into the state hflow
// kept for it. On device sets with and without device 0; a watchdog aborts
// a test that hangs (what today's code did).
//
// Thread-safety: the gate UDFs' state is guarded by its mutex; it lives on
// the heap, never freed, because a stuck thread may still wait on it when
// the process exits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int32_t kStopMs = 300;
// How much later than its timeout a bounded call may return (slow CI).
constexpr milliseconds kSlack{2500};
constexpr int32_t kIoMs = 10000;

struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int entered = 0;
  bool open = false;
};
Gate& TheGate() {
  static Gate* g = new Gate();  // never freed: Note in the file comment
  return *g;
}
void WaitAtGate() {
  Gate& g = TheGate();
  std::unique_lock<std::mutex> lock(g.mu);
  ++g.entered;
  g.cv.notify_all();
  g.cv.wait(lock, [&] { return g.open; });
}
int Entered() {
  std::lock_guard<std::mutex> lock(TheGate().mu);
  return TheGate().entered;
}
void SetGate(bool open) {
  Gate& g = TheGate();
  std::lock_guard<std::mutex> lock(g.mu);
  g.open = open;
  if (!open) g.entered = 0;
  g.cv.notify_all();
}

// Init waits at the gate; Proc passes its input on.
class InitBlocks : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override {
    WaitAtGate();
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("HangTest_InitBlocks", InitBlocks);

// Passes its input on, except the value 2, for which it waits at the gate.
class ProcBlocksOnTwo : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    const auto* v = static_cast<const int64_t*>(in[0]->GetTensor()->GetData());
    if (*v == 2) WaitAtGate();
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("HangTest_ProcBlocksOnTwo", ProcBlocksOnTwo);

//   x ── id (devices.front()) ── stuck (devices.back()) ── out
FlowGraph WithStuckNode(const std::vector<int32_t>& devices,
                        const std::string& function) {
  return testing::IdentityThen("hang", "stuck", function, devices);
}

using ::hflow::testing::I64;

class UdfHangTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    (void)Finalize();
    SetGate(false);
  }
  void TearDown() override {
    // The stuck thread returns into what hflow kept for it (nothing may
    // crash), then the environment goes.
    SetGate(true);
    (void)Finalize();
  }

  void Init(int32_t init_timeout_ms = -1) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.init_timeout_ms = init_timeout_ms;
    o.stop_timeout_ms = kStopMs;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Feeds 1, 2, 3 to a graph whose node 'stuck' hangs on 2; fetches 1.
  void StartStuck(Session& s) {
    ASSERT_TRUE(
        s.AddGraph(1, WithStuckNode(GetParam(), "HangTest_ProcBlocksOnTwo"))
            .ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int64_t v : {1, 2, 3}) {
      ASSERT_TRUE(s.FeedData(1, {I64(v)}, FlowInfo{}, kIoMs).ok());
    }
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, kIoMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(out.at(0).As<int64_t>().at(0), 1);
    ASSERT_TRUE(testing::WaitFor([] { return Entered() == 1; }));
  }

  // hflow still works after a thread was abandoned: a fresh environment
  // and graph stream as usual.
  void ExpectFreshStartWorks() {
    Init();
    Session s;
    ASSERT_TRUE(
        s.AddGraph(7, WithStuckNode(GetParam(), "HangTest_ProcBlocksOnTwo"))
            .ok());
    Status st = s.BuildGraph(7);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int64_t v : {5, 6}) {
      ASSERT_TRUE(s.FeedData(7, {I64(v)}, FlowInfo{}, kIoMs).ok());
      std::vector<Tensor> out;
      FlowInfo info;
      st = s.FetchData(7, &out, &info, kIoMs);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(out.at(0).As<int64_t>().at(0), v);
    }
    EXPECT_TRUE(s.RemoveGraph(7).ok());
    EXPECT_TRUE(Finalize().ok());
  }

  static void ExpectNamesStuckProc(const Status& st) {
    EXPECT_TRUE(st.IsTimeout()) << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr("node 'stuck'"));
    EXPECT_THAT(st.message(), HasSubstr("'HangTest_ProcBlocksOnTwo'"));
    EXPECT_THAT(st.message(),
                HasSubstr("on device " + std::to_string(GetParam().back())));
    EXPECT_THAT(st.message(), HasSubstr("in Proc of transaction 2"));
  }
};

TEST_P(UdfHangTest, InitThatNeverReturnsFailsBuildWithinInitTimeout) {
  testing::Watchdog dog(milliseconds(20000), "BuildGraph with a hung Init");
  Init(/*init_timeout_ms=*/kStopMs);
  {
    Session s;
    ASSERT_TRUE(
        s.AddGraph(1, WithStuckNode(GetParam(), "HangTest_InitBlocks")).ok());
    auto t0 = Clock::now();
    Status st = s.BuildGraph(1);
    EXPECT_LT(Clock::now() - t0, milliseconds(kStopMs) + kSlack);
    EXPECT_TRUE(st.IsTimeout()) << st.ToString();
    EXPECT_THAT(st.message(), HasSubstr("node 'stuck'"));
    EXPECT_THAT(st.message(),
                HasSubstr("on device " + std::to_string(GetParam().back())));
    EXPECT_THAT(st.message(), HasSubstr("Init did not return"));
    EXPECT_EQ(Entered(), 1);
    // Nothing was deployed: the graph can go, and feeding it says why.
    EXPECT_FALSE(s.FeedData(1, {I64(1)}, FlowInfo{}, 0).ok());
  }
  auto t0 = Clock::now();
  EXPECT_TRUE(Finalize().ok());
  EXPECT_LT(Clock::now() - t0, kSlack);
  ExpectFreshStartWorks();
}

TEST_P(UdfHangTest, RemoveGraphWithStuckProcTimesOutNamingNode) {
  testing::Watchdog dog(milliseconds(20000), "RemoveGraph with a hung Proc");
  Init();
  Session s;
  StartStuck(s);
  auto t0 = Clock::now();
  Status st = s.RemoveGraph(1);
  auto spent = Clock::now() - t0;
  ExpectNamesStuckProc(st);
  EXPECT_THAT(st.message(), HasSubstr("graph 1"));
  EXPECT_GE(spent, milliseconds(kStopMs));
  EXPECT_LT(spent, milliseconds(kStopMs) + kSlack);
  // The graph is gone from the session; Finalize has nothing left to wait
  // for.
  EXPECT_EQ(s.RemoveGraph(1).code(), StatusCode::kNotFound);
  t0 = Clock::now();
  EXPECT_TRUE(Finalize().ok());
  EXPECT_LT(Clock::now() - t0, kSlack);
  ExpectFreshStartWorks();
}

TEST_P(UdfHangTest, FinalizeWithStuckProcTimesOutNamingNode) {
  testing::Watchdog dog(milliseconds(20000), "Finalize with a hung Proc");
  Init();
  {
    Session s;
    StartStuck(s);
    auto t0 = Clock::now();
    Status st = Finalize();
    EXPECT_LT(Clock::now() - t0, milliseconds(kStopMs) + kSlack);
    ExpectNamesStuckProc(st);
    // Later calls on the session fail clearly; its destructor returns.
    EXPECT_FALSE(s.FeedData(1, {I64(4)}, FlowInfo{}, 0).ok());
  }
  ExpectFreshStartWorks();
}

TEST_P(UdfHangTest, SessionDestructorWithStuckProcReturnsWithinStopTimeout) {
  testing::Watchdog dog(milliseconds(20000), "~Session with a hung Proc");
  Init();
  auto t0 = Clock::now();
  {
    Session s;
    StartStuck(s);
    t0 = Clock::now();
  }
  EXPECT_LT(Clock::now() - t0, milliseconds(kStopMs) + kSlack);
  EXPECT_TRUE(Finalize().ok());
  ExpectFreshStartWorks();
}

// The stuck thread returns after the graph was abandoned and finalized: it
// runs into the kept state (its output goes to a closed queue) and nothing
// crashes.
TEST_P(UdfHangTest, AbandonedThreadReturningLateIsHarmless) {
  testing::Watchdog dog(milliseconds(20000), "late return of a hung Proc");
  Init();
  {
    Session s;
    StartStuck(s);
    EXPECT_TRUE(s.RemoveGraph(1).IsTimeout());
  }
  EXPECT_TRUE(Finalize().ok());
  SetGate(true);
  ExpectFreshStartWorks();
}

TEST_P(UdfHangTest, BadTimeoutOptionsAreRejected) {
  Options o;
  o.cluster = MakeLocalCluster(GetParam());
  o.stop_timeout_ms = -2;
  Status st = Initialize(o);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("stop_timeout_ms"));
  o.stop_timeout_ms = 10;
  o.init_timeout_ms = -7;
  st = Initialize(o);
  EXPECT_THAT(st.message(), HasSubstr("init_timeout_ms"));
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, UdfHangTest,
                         ::testing::Values(std::vector<int32_t>{0, 1},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
