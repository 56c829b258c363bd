// Device loss in the middle of a stream (sim MarkDeviceLost), through the
// public API: before a feed, between feeds, while a fetch is blocked, while a
// feed is blocked on a full pipeline, and while a UDF is executing; on
// clusters {2,3,4,5} (losing 3 or 4) and {3,6,7} (losing 6). In every case
// feeds and fetches fail promptly (far under their timeouts) with
// kDeviceLost, nothing hangs (a watchdog aborts a hung test), and
// RemoveGraph and Finalize still release every byte and context.
//
// Thread-safety: helper threads name themselves; the gate UDF's state is
// guarded by its mutex.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "test_graphs.h"
#include "test_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Timeouts every feed and fetch uses, and how fast a device-lost failure
// must come back instead (generous for sanitizer builds).
constexpr int32_t kTimeoutMs = 10000;
constexpr milliseconds kPrompt{2500};

// The gate UDF: Proc announces that it runs, waits until the test opens the
// gate, then passes its input on.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int entered = 0;
  bool open = false;
};
Gate g_gate;

class GateFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    {
      std::unique_lock<std::mutex> lock(g_gate.mu);
      ++g_gate.entered;
      g_gate.cv.notify_all();
      g_gate.cv.wait(lock, [] { return g_gate.open; });
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("DeviceLossTest_Gate", GateFunc);

// x ── n0@d0 ── n1@d1 ── ... ── add(last, last)@dN ── out  (out = 2x).
// `gate_at` (an index into `devices`, or -1) makes that node the gate UDF.
FlowGraph Chain(const std::vector<int32_t>& devices, int gate_at = -1) {
  std::vector<testing::ChainStage> stages;
  for (size_t i = 0; i + 1 < devices.size(); ++i) {
    const std::string n = std::to_string(i);
    stages.push_back(
        {"n" + n,
         int(i) == gate_at ? "DeviceLossTest_Gate" : "_BuiltIn_Identity",
         {devices[i]},
         "pp" + n});
  }
  stages.push_back({"add", "_BuiltIn_Add", {devices.back()}, "add_pp", 2});
  return testing::ChainGraph("loss_chain", stages);
}

using ::hflow::testing::I64;

class DeviceLossTest : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)Finalize();
    std::lock_guard<std::mutex> lock(g_gate.mu);
    g_gate.entered = 0;
    g_gate.open = false;
  }
  void TearDown() override {
    OpenGate();
    (void)Finalize();
  }

  void Init(const std::vector<int32_t>& devices, uint32_t queue_depth = 64) {
    Options o;
    o.cluster = MakeLocalCluster(devices);
    o.queue_depth = queue_depth;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
    sim_ = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  }

  void Build(Session& s, const FlowGraph& g) {
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Feeds and fetches `n` messages that all come back.
  void Stream(Session& s, int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(s.FeedData(1, {I64(i)}, FlowInfo{}, kTimeoutMs).ok());
      std::vector<Tensor> out;
      FlowInfo info;
      Status st = s.FetchData(1, &out, &info, kTimeoutMs);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(out.at(0).As<int64_t>().at(0), 2 * i);
    }
  }

  static void ExpectPromptLoss(const Status& st, Clock::duration spent,
                               const std::string& what) {
    EXPECT_EQ(st.code(), StatusCode::kDeviceLost)
        << what << ": " << st.ToString();
    EXPECT_FALSE(st.message().empty()) << what;
    EXPECT_LT(spent, kPrompt)
        << what << " took "
        << std::chrono::duration_cast<milliseconds>(spent).count() << " ms";
  }

  // A feed and a fetch after the loss: both fail at once, device lost.
  void ExpectFeedAndFetchFail(Session& s) {
    auto t0 = Clock::now();
    Status st = s.FeedData(1, {I64(1000)}, FlowInfo{}, kTimeoutMs);
    ExpectPromptLoss(st, Clock::now() - t0, "FeedData");
    std::vector<Tensor> out;
    FlowInfo info;
    t0 = Clock::now();
    st = s.FetchData(1, &out, &info, kTimeoutMs);
    ExpectPromptLoss(st, Clock::now() - t0, "FetchData");
  }

  // RemoveGraph and Finalize succeed and leave nothing on the sim.
  void ExpectCleanTeardown(Session& s) {
    auto t0 = Clock::now();
    Status st = s.RemoveGraph(1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    st = Finalize();
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_LT(Clock::now() - t0, kPrompt);
    testing::SimHoldings left = testing::Holdings(*sim_);
    EXPECT_TRUE(left.empty()) << "the sim still holds " << left.ToString();
  }

  static void WaitUntilGateEntered() {
    std::unique_lock<std::mutex> lock(g_gate.mu);
    g_gate.cv.wait(lock, [] { return g_gate.entered > 0; });
  }
  static void OpenGate() {
    std::lock_guard<std::mutex> lock(g_gate.mu);
    g_gate.open = true;
    g_gate.cv.notify_all();
  }

  rt::SimRuntime* sim_ = nullptr;
};

const std::vector<int32_t> kTwoToFive = {2, 3, 4, 5};
const std::vector<int32_t> kThreeSixSeven = {3, 6, 7};

TEST_F(DeviceLossTest, BeforeTheFirstFeed) {
  testing::Watchdog dog(std::chrono::seconds(30), "BeforeTheFirstFeed");
  Init(kTwoToFive);
  Session s;
  Build(s, Chain(kTwoToFive));
  sim_->MarkDeviceLost(4);
  ExpectFeedAndFetchFail(s);
  ExpectCleanTeardown(s);
}

TEST_F(DeviceLossTest, BetweenFeedsWithMessagesInFlight) {
  testing::Watchdog dog(std::chrono::seconds(30), "BetweenFeeds");
  Init(kTwoToFive);
  Session s;
  Build(s, Chain(kTwoToFive));
  Stream(s, 10);
  // Three more in flight (fed, not fetched) when the device goes.
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(s.FeedData(1, {I64(i)}, FlowInfo{}, kTimeoutMs).ok());
  }
  sim_->MarkDeviceLost(3);
  // A fetch may still return what already reached the output; after that
  // it fails at once.
  Status st;
  auto t0 = Clock::now();
  int got = 0;
  for (;;) {
    std::vector<Tensor> out;
    FlowInfo info;
    t0 = Clock::now();
    st = s.FetchData(1, &out, &info, kTimeoutMs);
    if (!st.ok()) break;
    ASSERT_LT(++got, 4) << "more outputs than feeds";
  }
  ExpectPromptLoss(st, Clock::now() - t0, "FetchData after the loss");
  EXPECT_THAT(st.message(), HasSubstr("device 3"));
  ExpectFeedAndFetchFail(s);
  ExpectCleanTeardown(s);
}

TEST_F(DeviceLossTest, WhileAFetchIsBlocked) {
  testing::Watchdog dog(std::chrono::seconds(30), "WhileAFetchIsBlocked");
  Init(kTwoToFive);
  Session s;
  Build(s, Chain(kTwoToFive));
  Stream(s, 3);
  std::promise<void> waiting;
  auto fetch = std::async(std::launch::async, [&] {
    util::SetCurrentThreadName("test-fetcher");
    std::vector<Tensor> out;
    FlowInfo info;
    // Read before signalling: a fetcher descheduled between the two would
    // start its clock after the loss's 100 ms had begun.
    auto t0 = Clock::now();
    waiting.set_value();
    Status st = s.FetchData(1, &out, &info, kTimeoutMs);
    return std::make_pair(st, Clock::now() - t0);
  });
  waiting.get_future().wait();
  std::this_thread::sleep_for(milliseconds(100));  // let it block
  auto t_lost = Clock::now();
  sim_->MarkDeviceLost(4);
  auto [st, spent] = fetch.get();
  EXPECT_GE(spent, milliseconds(100)) << "the fetch did not block";
  ExpectPromptLoss(st, Clock::now() - t_lost, "the blocked FetchData");
  ExpectFeedAndFetchFail(s);
  ExpectCleanTeardown(s);
}

TEST_F(DeviceLossTest, WhileAFeedIsBlockedOnAFullPipeline) {
  testing::Watchdog dog(std::chrono::seconds(30), "WhileAFeedIsBlocked");
  Init(kTwoToFive, /*queue_depth=*/2);
  Session s;
  Build(s, Chain(kTwoToFive));
  int fed = 0;
  while (fed < 1000 && s.FeedData(1, {I64(fed)}, FlowInfo{}, 200).ok()) ++fed;
  ASSERT_LT(fed, 1000);
  auto feed = std::async(std::launch::async, [&] {
    util::SetCurrentThreadName("test-feeder");
    return s.FeedData(1, {I64(5000)}, FlowInfo{}, kTimeoutMs);
  });
  std::this_thread::sleep_for(milliseconds(100));
  auto t_lost = Clock::now();
  sim_->MarkDeviceLost(3);
  Status st = feed.get();
  ExpectPromptLoss(st, Clock::now() - t_lost, "the blocked FeedData");
  ExpectFeedAndFetchFail(s);
  ExpectCleanTeardown(s);
}

// The lost device is the one whose UDF is running: its outputs cannot go
// anywhere, and the fetcher hears about it instead of waiting.
TEST_F(DeviceLossTest, WhileAUdfIsExecutingOnTheLostDevice) {
  testing::Watchdog dog(std::chrono::seconds(30), "WhileAUdfIsExecuting");
  Init(kTwoToFive);
  Session s;
  Build(s, Chain(kTwoToFive, /*gate_at=*/2));  // n2 on device 4
  ASSERT_TRUE(s.FeedData(1, {I64(7)}, FlowInfo{}, kTimeoutMs).ok());
  WaitUntilGateEntered();
  sim_->MarkDeviceLost(4);
  auto t0 = Clock::now();
  OpenGate();
  std::vector<Tensor> out;
  FlowInfo info;
  Status st = s.FetchData(1, &out, &info, kTimeoutMs);
  ExpectPromptLoss(st, Clock::now() - t0, "FetchData");
  ExpectFeedAndFetchFail(s);
  ExpectCleanTeardown(s);
}

// A UDF upstream of the lost device is running: it finishes, its output
// meets the loss.
TEST_F(DeviceLossTest, WhileAUdfIsExecutingUpstreamOfTheLostDevice) {
  testing::Watchdog dog(std::chrono::seconds(30),
                        "WhileAUdfIsExecutingUpstream");
  Init(kTwoToFive);
  Session s;
  Build(s, Chain(kTwoToFive, /*gate_at=*/0));  // n0 on device 2
  ASSERT_TRUE(s.FeedData(1, {I64(7)}, FlowInfo{}, kTimeoutMs).ok());
  WaitUntilGateEntered();
  sim_->MarkDeviceLost(3);
  OpenGate();
  std::vector<Tensor> out;
  FlowInfo info;
  auto t0 = Clock::now();
  Status st = s.FetchData(1, &out, &info, kTimeoutMs);
  ExpectPromptLoss(st, Clock::now() - t0, "FetchData");
  ExpectFeedAndFetchFail(s);
  ExpectCleanTeardown(s);
}

TEST_F(DeviceLossTest, ThreeSixSevenLosingSixBetweenFeeds) {
  testing::Watchdog dog(std::chrono::seconds(30), "ThreeSixSeven");
  Init(kThreeSixSeven);
  Session s;
  Build(s, Chain(kThreeSixSeven));
  Stream(s, 5);
  sim_->MarkDeviceLost(6);
  ExpectFeedAndFetchFail(s);
  ExpectCleanTeardown(s);
}

TEST_F(DeviceLossTest, ThreeSixSevenLosingSixWhileAFetchIsBlocked) {
  testing::Watchdog dog(std::chrono::seconds(30), "ThreeSixSevenBlocked");
  Init(kThreeSixSeven);
  Session s;
  Build(s, Chain(kThreeSixSeven));
  Stream(s, 2);
  auto fetch = std::async(std::launch::async, [&] {
    util::SetCurrentThreadName("test-fetcher");
    std::vector<Tensor> out;
    FlowInfo info;
    return s.FetchData(1, &out, &info, kTimeoutMs);
  });
  std::this_thread::sleep_for(milliseconds(100));
  auto t_lost = Clock::now();
  sim_->MarkDeviceLost(6);
  Status st = fetch.get();
  ExpectPromptLoss(st, Clock::now() - t_lost, "the blocked FetchData");
  ExpectCleanTeardown(s);
}

// A device the graph does not use is lost: the graph carries on.
TEST_F(DeviceLossTest, LosingAnUnusedDeviceLeavesTheGraphRunning) {
  testing::Watchdog dog(std::chrono::seconds(30), "UnusedDevice");
  Init({2, 3, 4, 5, 7});
  Session s;
  Build(s, Chain(kTwoToFive));
  Stream(s, 3);
  sim_->MarkDeviceLost(7);
  Stream(s, 3);
  ExpectCleanTeardown(s);
}

// After a loss, a new Initialize gives a working runtime again.
TEST_F(DeviceLossTest, AFreshSessionAfterALossWorks) {
  testing::Watchdog dog(std::chrono::seconds(30), "FreshSession");
  Init(kTwoToFive);
  {
    Session s;
    Build(s, Chain(kTwoToFive));
    sim_->MarkDeviceLost(5);
    ExpectFeedAndFetchFail(s);
    ExpectCleanTeardown(s);
  }
  Init(kTwoToFive);
  Session s;
  Build(s, Chain(kTwoToFive));
  Stream(s, 5);
  ExpectCleanTeardown(s);
}

}  // namespace
}  // namespace hflow
