// The graph executor (exec/graph_runner.h) through the public Session API:
// chains on one device and across devices with every message out in order
// for several pool sizes; backpressure (a fast producer before a slow
// consumer never runs more than one Proc past the queue depth); the device
// binding moving with the work between nodes on one pool thread, and a
// UDF's device switch not leaking into the next run; a blocked
// or slow UDF not holding back work another pool thread could do;
// RemoveGraph and
// Finalize with messages in flight; and multi-input alignment when the two
// inputs see transactions in different orders.
//
// The UDFs are registered in-process (no compile configs). They share
// state with the tests through globals reset by the fixture.
//
// Thread-safety: UDF state is atomics or guarded by a mutex; gates are
// bounded waits so a failing test never hangs (a watchdog aborts on hangs).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
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

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int32_t kTimeoutMs = 5000;

// ---- UDF-side state shared with the tests -----------------------------------

// A gate UDFs block on until the test opens it (bounded: a failing test
// opens it by timing out).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool open = false;

  void Reset() {
    std::lock_guard<std::mutex> l(mu);
    arrived = 0;
    open = false;
  }
  void Open() {
    std::lock_guard<std::mutex> l(mu);
    open = true;
    cv.notify_all();
  }
  bool Pass(milliseconds limit) {
    std::unique_lock<std::mutex> l(mu);
    ++arrived;
    cv.notify_all();
    return cv.wait_for(l, limit, [&] { return open; });
  }
  bool WaitArrived(int n, milliseconds limit) {
    std::unique_lock<std::mutex> l(mu);
    return cv.wait_for(l, limit, [&] { return arrived >= n; });
  }
  bool IsOpen() {
    std::lock_guard<std::mutex> l(mu);
    return open;
  }
};
Gate g_gate;

// Backpressure: messages between the producer's Proc and the consumer's.
std::atomic<int> g_in_flight{0};
std::atomic<int> g_max_in_flight{0};
// Procs of ExecTest_Count.
std::atomic<int> g_counted{0};
// Procs of ExecTest_HoldUntilFetched that waited in vain, and the test's
// progress it waits on.
std::atomic<int> g_hold_timeouts{0};
std::atomic<bool> g_all_fed{false};
std::atomic<int> g_fetched{0};
std::atomic<int> g_hold_procs{0};

// What a Proc saw of its thread's binding.
struct Seen {
  int32_t get_device = -1;  // rt::GetDevice (-1: failed)
  int32_t ctx_device = -1;  // device of rt::GetCurrentContext (-1: none)
  std::string thread;
};
std::mutex g_seen_mu;
std::map<int, std::vector<Seen>> g_seen;  // by recorder slot

void ResetUdfState() {
  g_gate.Reset();
  g_in_flight = 0;
  g_max_in_flight = 0;
  g_counted = 0;
  g_hold_timeouts = 0;
  g_all_fed = false;
  g_fetched = 0;
  g_hold_procs = 0;
  std::lock_guard<std::mutex> l(g_seen_mu);
  g_seen.clear();
}

using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;

// ---- in-process UDFs
// ----------------------------------------------------------

// The producer side of the backpressure test: counts a message in flight
// before emitting it.
class CountProduce : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    int now = g_in_flight.fetch_add(1) + 1;
    int prev = g_max_in_flight.load();
    while (now > prev && !g_max_in_flight.compare_exchange_weak(prev, now)) {
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExecTest_CountProduce", CountProduce);

// The slow consumer: takes its message out of flight, then works ~1 ms.
class SlowConsume : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    g_in_flight.fetch_sub(1);
    std::this_thread::sleep_for(milliseconds(1));
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExecTest_SlowConsume", SlowConsume);

// Records the calling thread's binding in slot `slot`.
void RecordBinding(int slot) {
  Seen s;
  int32_t d = -1;
  if (rt::GetDevice(&d).ok()) s.get_device = d;
  if (rt::Context* ctx = rt::GetCurrentContext()) {
    int32_t cd = -1;
    if (rt::GetContextDevice(ctx, &cd).ok()) s.ctx_device = cd;
  }
  s.thread = util::CurrentThreadName();
  std::lock_guard<std::mutex> l(g_seen_mu);
  g_seen[slot].push_back(s);
}

// Records the binding Proc runs under, in slot `kSlot`.
template <int kSlot>
class BindRecorder : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    RecordBinding(kSlot);
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExecTest_BindA", BindRecorder<0>);
REGISTER_FLOW_FUNC("ExecTest_BindB", BindRecorder<1>);

// Leaves its thread bound to device 4 (a library that switches the
// caller's device and does not switch back), then passes its input on.
// Records the binding it found first (slot 2).
class SwitchAway : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    RecordBinding(2);
    if (!rt::SetDevice(4).ok()) return FlowFunc::FLOW_FUNC_FAILED;
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExecTest_SwitchAway", SwitchAway);

// Blocks on the gate (at most 3 s), then passes its input on.
class GateFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    (void)g_gate.Pass(milliseconds(3000));
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExecTest_Gate", GateFunc);

// Passes its input on first, then blocks on the gate (at most 3 s): a UDF
// that emits a result and keeps working.
class EmitThenBlock : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    int32_t rc = context_->SetOutput(0, in[0]);
    (void)g_gate.Pass(milliseconds(3000));
    return rc;
  }
};
REGISTER_FLOW_FUNC("ExecTest_EmitThenBlock", EmitThenBlock);

// Counts and passes on.
class Count : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    g_counted.fetch_add(1);
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExecTest_Count", Count);

// Sleeps 200 ms, then passes on.
class Sleep200 : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    g_gate.Pass(milliseconds(0));  // counts arrivals only
    std::this_thread::sleep_for(milliseconds(200));
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExecTest_Sleep200", Sleep200);

// A stage that takes a while per message: its first Proc waits until the
// test has fed everything (so later messages are queued behind it); each
// later Proc waits (at most 1 s) until the test has fetched the first
// message, i.e. until the first message's output made it through the rest
// of the graph while this stage keeps working.
class HoldUntilFetched : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    int n = g_hold_procs.fetch_add(1);
    auto deadline = Clock::now() + milliseconds(1000);
    if (n == 0) {
      while (!g_all_fed.load() && Clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(1));
      }
    } else {
      while (g_fetched.load() < 1 && Clock::now() < deadline) {
        std::this_thread::sleep_for(milliseconds(1));
      }
      if (g_fetched.load() < 1) g_hold_timeouts.fetch_add(1);
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExecTest_HoldUntilFetched", HoldUntilFetched);

// Emits its messages in swapped pairs: 1 2 3 4 ... becomes 2 1 4 3 ...
// (an even number of messages is expected).
class SwapPairs : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(const Msgs& in) override {
    if (!held_) {
      held_ = in[0];
      return FlowFunc::FLOW_FUNC_SUCCESS;
    }
    int32_t rc = context_->SetOutput(0, in[0]);
    if (rc == FlowFunc::FLOW_FUNC_SUCCESS) rc = context_->SetOutput(0, held_);
    held_.reset();
    return rc;
  }

 private:
  std::shared_ptr<FlowFunc::FlowMsg> held_;
};
REGISTER_FLOW_FUNC("ExecTest_SwapPairs", SwapPairs);

// ---- graphs
// -------------------------------------------------------------------

// x ── n0 ── n1 ── ... ── out; node i runs funcs[i] on devices[i].
FlowGraph Chain(const std::string& name, const std::vector<std::string>& funcs,
                const std::vector<int32_t>& devices) {
  std::vector<testing::ChainStage> stages;
  for (size_t i = 0; i < funcs.size(); ++i) {
    const std::string n = std::to_string(i);
    stages.push_back({"n" + n, funcs[i], {devices[i]}, "pp" + n});
  }
  return testing::ChainGraph(name, stages);
}

Tensor Pair(int64_t i) {
  return Tensor::From<int64_t>(DataType::kInt64, {2}, {i, 1000000 - i});
}

// ---- fixture
// ------------------------------------------------------------------

class ExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)Finalize();
    ResetUdfState();
  }
  void TearDown() override {
    g_gate.Open();
    (void)Finalize();
  }

  void Init(const std::vector<int32_t>& cluster, int exec_threads,
            uint32_t queue_depth = 64,
            std::optional<int32_t> default_device = std::nullopt,
            bool handoff = true) {
    Options o;
    o.cluster = MakeLocalCluster(cluster);
    o.exec_threads = exec_threads;
    o.exec_handoff = handoff;
    o.queue_depth = queue_depth;
    o.default_device = default_device;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  void Build(Session& s, uint32_t id, const FlowGraph& g) {
    ASSERT_TRUE(s.AddGraph(id, g).ok());
    Status st = s.BuildGraph(id);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Feeds Pair(0..n-1) from another thread while this one fetches and
  // checks every message in order; returns the feeder's first error.
  void StreamInOrder(Session& s, uint32_t id, int n) {
    auto feeder = std::async(std::launch::async, [&] {
      for (int i = 0; i < n; ++i) {
        Status st = s.FeedData(id, {Pair(i)}, FlowInfo{}, kTimeoutMs);
        if (!st.ok()) return st;
      }
      return Status::OK();
    });
    for (int i = 0; i < n; ++i) {
      std::vector<Tensor> out;
      FlowInfo info;
      Status st = s.FetchData(id, &out, &info, kTimeoutMs);
      ASSERT_TRUE(st.ok()) << "message " << i << ": " << st.ToString();
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(info.ret_code, 0) << i;
      ASSERT_EQ(info.transaction_id, uint64_t(i + 1)) << "out of order";
      ASSERT_EQ(out[0].As<int64_t>(), (std::vector<int64_t>{i, 1000000 - i}))
          << i;
    }
    Status fed = feeder.get();
    EXPECT_TRUE(fed.ok()) << fed.ToString();
    // Nothing more comes out.
    std::vector<Tensor> out;
    FlowInfo info;
    EXPECT_EQ(s.FetchData(id, &out, &info, 0).code(), StatusCode::kTimeout);
  }

  testing::Watchdog watchdog_{std::chrono::seconds(60), "executor_test"};
};

// ---- chains
// -------------------------------------------------------------------

struct ChainCase {
  std::string name;
  std::vector<int32_t> cluster;
  std::vector<int32_t> nodes;  // device of each of the 4 nodes
  int threads;
};

class ExecutorChainTest : public ExecutorTest,
                          public ::testing::WithParamInterface<ChainCase> {};

TEST_P(ExecutorChainTest, ThousandMessagesOutInOrder) {
  const ChainCase& c = GetParam();
  Init(c.cluster, c.threads);
  Session s;
  Build(s, 1,
        Chain("chain4", std::vector<std::string>(4, "_BuiltIn_Identity"),
              c.nodes));
  StreamInOrder(s, 1, 1000);
}

std::vector<ChainCase> ChainCases() {
  std::vector<ChainCase> cases;
  for (int threads : {1, 2, 8}) {
    std::string t = "_Threads" + std::to_string(threads);
    cases.push_back({"OneDevice" + t, {2, 3, 4, 5}, {2, 2, 2, 2}, threads});
    cases.push_back({"Devices2345" + t, {2, 3, 4, 5}, {2, 3, 4, 5}, threads});
    cases.push_back({"Devices367" + t, {3, 6, 7}, {3, 6, 7, 3}, threads});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Chains, ExecutorChainTest,
                         ::testing::ValuesIn(ChainCases()),
                         [](const ::testing::TestParamInfo<ChainCase>& info) {
                           return info.param.name;
                         });

// ---- backpressure
// -------------------------------------------------------------

// x ── produce@2 ── consume@3 (~1 ms per message) ── out, queue depth 4. A
// pool thread pushes over the depth but does not run a producer whose
// output queue is full: at most one Proc's output past the depth is ever
// in flight between the two. With hand-off on, a message handed to the
// idle consumer counts as in flight too; with one pool thread the producer
// then rarely gets ahead, so only the bound is checked there.
class ExecutorBackpressureTest
    : public ExecutorTest,
      public ::testing::WithParamInterface<std::tuple<int, bool>> {};

TEST_P(ExecutorBackpressureTest, FastProducerStaysWithinTheDepth) {
  constexpr uint32_t kDepth = 4;
  const auto [threads, handoff] = GetParam();
  Init({2, 3, 4, 5}, threads, kDepth, std::nullopt, handoff);
  Session s;
  Build(s, 1,
        Chain("backpressure", {"ExecTest_CountProduce", "ExecTest_SlowConsume"},
              {2, 3}));
  StreamInOrder(s, 1, 200);
  EXPECT_EQ(g_in_flight.load(), 0);
  // In flight = queued + at most one dequeued but not yet in Proc + the
  // producer's message being emitted: depth + 1 at most.
  EXPECT_LE(g_max_in_flight.load(), int(kDepth) + 1)
      << "the producer ran while its output queue was full";
  // Whether the queue fills with one thread and hand-off depends on timing
  // (the consumer is sometimes queued when its output drains, and then the
  // producer's messages go through the queue); the bound above holds
  // either way.
  if (threads > 1 || !handoff) {
    EXPECT_GE(g_max_in_flight.load(), int(kDepth))
        << "the queue never filled: the test did not exercise backpressure";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Threads, ExecutorBackpressureTest,
    ::testing::Combine(::testing::Values(1, 2, 8), ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<int, bool>>& info) {
      return std::to_string(std::get<0>(info.param)) +
             (std::get<1>(info.param) ? "_Handoff" : "_Queued");
    });

// ---- binding
// ------------------------------------------------------------------

// One pool thread runs both nodes: each Proc must see its own node's
// device bound (the binding moves with the work), and nothing may use the
// default device's implicit context (device 2 is the default here, so a
// forgotten binding would be counted).
TEST_F(ExecutorTest, BindingMovesWithTheWork) {
  Init({2, 3, 4, 5}, /*exec_threads=*/1, 64, /*default_device=*/2);
  Session s;
  Build(s, 1, Chain("binding", {"ExecTest_BindA", "ExecTest_BindB"}, {2, 5}));
  rt::Context* before = rt::GetCurrentContext();
  StreamInOrder(s, 1, 50);
  EXPECT_EQ(rt::GetCurrentContext(), before);
  std::lock_guard<std::mutex> l(g_seen_mu);
  ASSERT_EQ(g_seen[0].size(), 50u);
  ASSERT_EQ(g_seen[1].size(), 50u);
  std::set<std::string> threads;
  for (const Seen& seen : g_seen[0]) {
    EXPECT_EQ(seen.get_device, 2);
    EXPECT_EQ(seen.ctx_device, 2);
    threads.insert(seen.thread);
  }
  for (const Seen& seen : g_seen[1]) {
    EXPECT_EQ(seen.get_device, 5);
    EXPECT_EQ(seen.ctx_device, 5);
    threads.insert(seen.thread);
  }
  EXPECT_EQ(threads, (std::set<std::string>{"exec-0"}))
      << "one executor thread, named exec-<i>, runs both nodes";
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
  for (const auto& r : reports) {
    EXPECT_EQ(r.implicit_bindings, 0u) << "device " << r.id;
  }
  auto* sim = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  EXPECT_EQ(testing::ImplicitBindings(*sim, {2, 3, 4, 5}), 0u);
}

// Pool threads keep their binding between runs (Note [Pool threads keep
// their binding]); a UDF that switched its thread to device 4 must not
// leak that into the next run, even of a node on the same device.
TEST_F(ExecutorTest, NextRunUndoesAUdfsDeviceSwitch) {
  Init({2, 3, 4, 5}, /*exec_threads=*/1, 64, /*default_device=*/2);
  Session s;
  Build(s, 1,
        Chain("switch", {"ExecTest_SwitchAway", "ExecTest_BindB"}, {3, 3}));
  StreamInOrder(s, 1, 50);
  std::lock_guard<std::mutex> l(g_seen_mu);
  ASSERT_EQ(g_seen[1].size(), 50u);
  for (const Seen& seen : g_seen[1]) {
    EXPECT_EQ(seen.get_device, 3);
    EXPECT_EQ(seen.ctx_device, 3);
  }
  auto* sim = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  EXPECT_EQ(testing::ImplicitBindings(*sim, {2, 3, 4, 5}), 0u);
}

// The same within one run: with no hand-off, a gate holds the only pool
// thread while 40 messages queue behind it, so the switching node then
// runs many Procs back to back in one run; each must start on device 3.
// Its outputs are queued after the switch: the run's binding is no proof
// then (Router's Current() check; without it this test fails).
TEST_F(ExecutorTest, NextProcInTheSameRunUndoesAUdfsDeviceSwitch) {
  Init({2, 3, 4, 5}, /*exec_threads=*/1, 64, /*default_device=*/2,
       /*handoff=*/false);
  Session s;
  Build(s, 1,
        Chain("switch_run",
              {"ExecTest_Gate", "ExecTest_SwitchAway", "ExecTest_BindB"},
              {3, 3, 3}));
  constexpr int kN = 40;
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(s.FeedData(1, {Pair(i)}, FlowInfo{}, kTimeoutMs).ok());
  }
  ASSERT_TRUE(g_gate.WaitArrived(1, milliseconds(kTimeoutMs)));
  g_gate.Open();
  for (int i = 0; i < kN; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    ASSERT_TRUE(s.FetchData(1, &out, &info, kTimeoutMs).ok()) << i;
    ASSERT_EQ(info.transaction_id, uint64_t(i + 1));
  }
  std::lock_guard<std::mutex> l(g_seen_mu);
  ASSERT_EQ(g_seen[2].size(), size_t(kN));
  for (size_t i = 0; i < g_seen[2].size(); ++i) {
    EXPECT_EQ(g_seen[2][i].get_device, 3) << "Proc " << i;
  }
  for (const Seen& seen : g_seen[1]) EXPECT_EQ(seen.ctx_device, 3);
}

// ---- blocking UDFs
// ------------------------------------------------------------

//        ┌─ gate@3 (blocks) ─┐
//   x ── id@2                ├─ out (gate, count)
//        └─ count@4 ─────────┘
// With two pool threads, the branch beside a blocked UDF keeps flowing.
TEST_F(ExecutorTest, SiblingBranchFlowsWhileAUdfBlocks) {
  Init({2, 3, 4, 5}, /*exec_threads=*/2);
  FlowData x("x", 0);
  FlowNode id = testing::FuncNode("id", "_BuiltIn_Identity");
  FlowNode gate = testing::FuncNode("gate", "ExecTest_Gate");
  FlowNode count = testing::FuncNode("count", "ExecTest_Count");
  id.SetInput(0, x);
  gate.SetInput(0, id, 0);
  count.SetInput(0, id, 0);
  FlowGraph g("sibling");
  g.SetInputs({x}).SetOutputs({gate, count});
  testing::Place(g, {{"id", {2}}, {"gate", {3}}, {"count", {4}}});
  Session s;
  Build(s, 1, g);
  std::this_thread::sleep_for(milliseconds(100));  // pool threads idle
  constexpr int kN = 10;
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(s.FeedData(1, {Pair(i)}, FlowInfo{}, kTimeoutMs).ok());
  }
  ASSERT_TRUE(g_gate.WaitArrived(1, milliseconds(2000)));
  auto deadline = Clock::now() + milliseconds(2000);
  while (g_counted.load() < kN && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  EXPECT_EQ(g_counted.load(), kN)
      << "the other branch stalled while a UDF blocked a pool thread";
  EXPECT_FALSE(g_gate.IsOpen());
  g_gate.Open();
  for (int i = 0; i < kN; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, kTimeoutMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(info.transaction_id, uint64_t(i + 1));
    EXPECT_EQ(out[0].As<int64_t>(), Pair(i).As<int64_t>());
    EXPECT_EQ(out[1].As<int64_t>(), Pair(i).As<int64_t>());
  }
}

//   x ── emit-then-block@2 ── id@3 ── out,   exec_threads = 2
// The UDF emits its output, then blocks: the output must reach the fetcher
// on the other pool thread meanwhile. Regression test: before a924240,
// work a pool thread scheduled itself did not wake a parked thread, so the
// message waited for the blocked Proc although the second thread was idle.
TEST_F(ExecutorTest, OutputOfABlockedUdfFlowsOnTheOtherThread) {
  Init({2, 3, 4, 5}, /*exec_threads=*/2);
  Session s;
  Build(s, 1,
        Chain("emit_block", {"ExecTest_EmitThenBlock", "_BuiltIn_Identity"},
              {2, 3}));
  // Let both pool threads go idle (they park after a few yields).
  std::this_thread::sleep_for(milliseconds(100));
  ASSERT_TRUE(s.FeedData(1, {Pair(7)}, FlowInfo{}, kTimeoutMs).ok());
  ASSERT_TRUE(g_gate.WaitArrived(1, milliseconds(2000)));
  std::vector<Tensor> out;
  FlowInfo info;
  Status st = s.FetchData(1, &out, &info, 1500);
  EXPECT_TRUE(st.ok() && !g_gate.IsOpen())
      << "the output of a blocked UDF did not reach the fetcher while the "
         "UDF blocked (the other pool thread stayed parked): "
      << st.ToString();
  g_gate.Open();
  if (!st.ok()) st = s.FetchData(1, &out, &info, kTimeoutMs);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(out[0].As<int64_t>(), Pair(7).As<int64_t>());
}

//   x ── hold@2 ── id@3 ── out,   exec_threads = 2
// A slow stage with messages queued keeps its pool thread for up to 32
// Procs per run; the outputs of its first Proc must flow on the other
// thread meanwhile. The stage's later Procs wait (1 s each at most) for the
// first message to be fetched. Regression test (same cause as above, fixed
// in a924240): each of those waits timed out.
TEST_F(ExecutorTest, SlowStageDoesNotHoldBackItsEarlierOutputs) {
  Init({2, 3, 4, 5}, /*exec_threads=*/2);
  Session s;
  Build(s, 1,
        Chain("hold", {"ExecTest_HoldUntilFetched", "_BuiltIn_Identity"},
              {2, 3}));
  std::this_thread::sleep_for(milliseconds(100));  // pool threads idle
  constexpr int kN = 3;
  for (int i = 0; i < kN; ++i) {
    ASSERT_TRUE(s.FeedData(1, {Pair(i)}, FlowInfo{}, kTimeoutMs).ok());
  }
  g_all_fed = true;
  for (int i = 0; i < kN; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, kTimeoutMs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(info.transaction_id, uint64_t(i + 1));
    EXPECT_EQ(out[0].As<int64_t>(), Pair(i).As<int64_t>());
    g_fetched.fetch_add(1);
  }
  EXPECT_EQ(g_hold_timeouts.load(), 0)
      << "the first message's output waited behind later Procs of the same "
         "stage while a pool thread was idle";
}

// ---- stopping with messages in flight
// ----------------------------------------

// x ── sleep200@2 ── id@3 ── out, 20 messages queued behind a 200 ms Proc:
// RemoveGraph returns promptly (the running Proc finishes, nothing else
// runs) and leaves the caller's context (a user context) as it was.
TEST_F(ExecutorTest, RemoveGraphWithMessagesInFlightIsPrompt) {
  Init({2, 3, 4, 5}, /*exec_threads=*/2, 64);
  Session s;
  Build(s, 1,
        Chain("sleepy", {"ExecTest_Sleep200", "_BuiltIn_Identity"}, {2, 3}));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(s.FeedData(1, {Pair(i)}, FlowInfo{}, kTimeoutMs).ok());
  }
  ASSERT_TRUE(g_gate.WaitArrived(1, milliseconds(2000)));
  testing::RunOnFreshThread([&] {
    rt::Context* mine = nullptr;
    ASSERT_TRUE(rt::CreateContext(3, &mine).ok());
    auto t0 = Clock::now();
    Status st = s.RemoveGraph(1);
    auto spent = Clock::now() - t0;
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_LT(spent, milliseconds(2000));
    EXPECT_EQ(rt::GetCurrentContext(), mine);
    ASSERT_TRUE(rt::DestroyContext(mine).ok());
  });
  int arrived;
  {
    std::lock_guard<std::mutex> l(g_gate.mu);
    arrived = g_gate.arrived;
  }
  std::this_thread::sleep_for(milliseconds(250));
  std::lock_guard<std::mutex> l(g_gate.mu);
  EXPECT_EQ(g_gate.arrived, arrived) << "a Proc ran after RemoveGraph";
  EXPECT_LE(arrived, 2);
}

TEST_F(ExecutorTest, FinalizeWithMessagesInFlightIsPrompt) {
  Init({3, 6, 7}, /*exec_threads=*/2, 4);
  auto* sim = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  {
    Session s;
    Build(s, 1,
          Chain("sleepy",
                {"_BuiltIn_Identity", "ExecTest_Sleep200", "_BuiltIn_Identity"},
                {3, 6, 7}));
    // Fill until feeding times out (nobody fetches).
    Status st;
    int fed = 0;
    while (fed < 100 &&
           (st = s.FeedData(1, {Pair(fed)}, FlowInfo{}, 50)).ok()) {
      ++fed;
    }
    EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
    ASSERT_TRUE(g_gate.WaitArrived(1, milliseconds(2000)));
    rt::Context* before = rt::GetCurrentContext();
    auto t0 = Clock::now();
    ASSERT_TRUE(Finalize().ok());
    EXPECT_LT(Clock::now() - t0, milliseconds(2000));
    EXPECT_EQ(rt::GetCurrentContext(), before);
  }
  EXPECT_TRUE(testing::Holdings(*sim).empty())
      << testing::Holdings(*sim).ToString();
}

// ---- multi-input alignment
// ----------------------------------------------------

//   x ── a@2 ─────────────────────────┐
//                                      add@5 ── out    (out = 2x)
//   x ── b0@3 ── swap@4 ── b2@3 ──────┘
// The branches differ in length, and the swap stage makes one input see the
// transactions as 2 1 4 3 ...: the add must still pair messages by
// transaction. `swap_first` puts the swap on the add's first input instead.
struct AlignCase {
  std::string name;
  bool swap_first;
  int threads;
};

class ExecutorAlignTest : public ExecutorTest,
                          public ::testing::WithParamInterface<AlignCase> {};

TEST_P(ExecutorAlignTest, AddPairsInputsByTransaction) {
  const AlignCase& c = GetParam();
  Init({2, 3, 4, 5}, c.threads);
  FlowData x("x", 0);
  const auto& pp = testing::Pp;
  FlowNode a("a", 1, 1), b0("b0", 1, 1), swap("swap", 1, 1), b2("b2", 1, 1),
      add("add", 2, 1);
  a.SetInput(0, x).AddPp(pp("a_pp", "_BuiltIn_Identity"));
  b0.SetInput(0, x).AddPp(pp("b0_pp", "_BuiltIn_Identity"));
  swap.SetInput(0, b0, 0).AddPp(pp("swap_pp", "ExecTest_SwapPairs"));
  b2.SetInput(0, swap, 0).AddPp(pp("b2_pp", "_BuiltIn_Identity"));
  if (c.swap_first) {
    add.SetInput(0, b2, 0).SetInput(1, a, 0);
  } else {
    add.SetInput(0, a, 0).SetInput(1, b2, 0);
  }
  add.AddPp(pp("add_pp", "_BuiltIn_Add"));
  FlowGraph g("align");
  g.SetInputs({x}).SetOutputs({add});
  testing::Place(
      g, {{"a", {2}}, {"b0", {3}}, {"swap", {4}}, {"b2", {3}}, {"add", {5}}});
  Session s;
  Build(s, 1, g);
  constexpr int kN = 1000;  // even: the swap stage emits pairs
  auto feeder = std::async(std::launch::async, [&] {
    for (int i = 0; i < kN; ++i) {
      Status st =
          s.FeedData(1, {Tensor::From<int32_t>(DataType::kInt32, {2}, {i, 3})},
                     FlowInfo{}, kTimeoutMs);
      if (!st.ok()) return st;
    }
    return Status::OK();
  });
  std::set<uint64_t> seen;
  int out_of_order = 0;
  uint64_t last = 0;
  for (int k = 0; k < kN; ++k) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(1, &out, &info, kTimeoutMs);
    ASSERT_TRUE(st.ok()) << "message " << k << ": " << st.ToString();
    ASSERT_EQ(info.ret_code, 0) << "transaction " << info.transaction_id;
    ASSERT_GE(info.transaction_id, 1u);
    ASSERT_LE(info.transaction_id, uint64_t(kN));
    EXPECT_TRUE(seen.insert(info.transaction_id).second)
        << "transaction " << info.transaction_id << " came out twice";
    int32_t i = int32_t(info.transaction_id - 1);
    ASSERT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{2 * i, 6}))
        << "transaction " << info.transaction_id
        << " was added to another transaction's message";
    if (info.transaction_id < last) ++out_of_order;
    last = info.transaction_id;
  }
  Status fed = feeder.get();
  EXPECT_TRUE(fed.ok()) << fed.ToString();
  EXPECT_EQ(seen.size(), size_t(kN));
  // The add follows its first input's order.
  if (c.swap_first) {
    EXPECT_EQ(out_of_order, kN / 2);
  } else {
    EXPECT_EQ(out_of_order, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Orders, ExecutorAlignTest,
    ::testing::Values(AlignCase{"SwapOnSecondInput_Threads1", false, 1},
                      AlignCase{"SwapOnSecondInput_Threads8", false, 8},
                      AlignCase{"SwapOnFirstInput_Threads2", true, 2},
                      AlignCase{"SwapOnFirstInput_Threads8", true, 8}),
    [](const ::testing::TestParamInfo<AlignCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace hflow
