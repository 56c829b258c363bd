// The fault sweep: fail the k-th runtime call for every k (docs/reliability).
//
// One representative flow — Initialize on a sim cluster {2,3,4,5}, a session
// deploying a chain that spans all four devices, 100 messages fed and
// fetched one by one, RemoveGraph, Finalize — makes N device-runtime calls.
// A counting run learns N; then, for every k in 1..N, a run fails the k-th
// call (rt::kAnyOp) with a device-lost, out-of-memory or internal status (by k)
// and asserts:
//   - it ends: every feed/fetch has a finite timeout and a watchdog aborts
//     the process if a run hangs;
//   - each step returns OK or an error Status with a message; no fetch
//     times out (a fault must surface as an error, not as a silent stall);
//   - nothing is lost or duplicated: fetched values are fed values, in
//     order, each at most once; a run whose steps all succeeded got all 100;
//   - the caller's context (a user context on device 5) is unchanged after
//     every step;
//   - after Finalize the sim holds no device memory and no context;
//   - a fresh Initialize + session afterwards deploys, feeds and fetches.
//
// The sweep is sharded (kShards parameterized cases, each its own ctest) so
// ctest runs shards in parallel. HFLOW_FAULT_SWEEP_STRIDE=s samples every
// s-th k (sanitizer builds).
//
// Thread-safety: the flow runs on the test's thread; the runtime's own
// threads are hflow's.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::DoublingChain;
using Clock = std::chrono::steady_clock;

const std::vector<int32_t> kDevices = {2, 3, 4, 5};
constexpr int kMessages = 100;
constexpr int32_t kStepTimeoutMs = 2000;
constexpr int kShards = 4;
// A run touches every step's timeout at most a few times; far beyond that
// it hangs.
constexpr std::chrono::seconds kRunLimit{30};

//   x ── a@2 ── b@3 ── c@4 ── add(c, c)@5 ── out   (out = 2x, in order)
FlowGraph Chain() {
  return DoublingChain("sweep_chain", "_BuiltIn_Identity", "id_pp");
}

using ::hflow::testing::I64;

// Pools sized for the flow's 100 small messages, not the 256 MiB default:
// a sanitized run maps, poisons and frees every pool byte, which made each
// of the sweep's runs take 1.4 s under ASan (25 ms plain).
Options SweepOptions() {
  Options o;
  o.cluster = MakeLocalCluster(kDevices);
  o.mbuf_pool_bytes = 4ull << 20;
  o.max_message_bytes = 1ull << 20;
  return o;
}

// The failing status for the k-th call: the codes a real runtime returns.
Status FaultFor(uint64_t k) {
  switch (k % 3) {
    case 0:
      return Status::DeviceLost("injected: device lost");
    case 1:
      return Status::OutOfMemory("injected: out of device memory");
    default:
      return Status::Internal("injected: driver internal error");
  }
}

struct RunResult {
  uint64_t calls = 0;       // faultable calls the run made (counting run)
  int fed = 0;              // feeds that returned OK
  int fetched = 0;          // outputs fetched with the right data
  int failed_messages = 0;  // outputs fetched with a UDF ret code
  int errors = 0;           // steps that returned an error
  std::map<StatusCode, int> codes;
  std::vector<std::string> problems;  // invariant violations
  std::string faulted;  // the call that failed: "op on device d by thread"
};

std::string Describe(const RunResult& r) {
  std::string s = "fed " + std::to_string(r.fed) + ", fetched " +
                  std::to_string(r.fetched) + ", failed messages " +
                  std::to_string(r.failed_messages) + ", errors " +
                  std::to_string(r.errors);
  for (const auto& p : r.problems) s += "\n    " + p;
  return s;
}

// One run of the flow. `arm` runs once the runtime exists and the caller's
// context is bound, right before the first counted call.
// `fault_k` > 0: the call log names the k-th call in RunResult::faulted.
RunResult RunFlow(const std::function<void(rt::SimRuntime&)>& arm,
                  testing::Watchdog* dog, uint64_t fault_k = 0) {
  RunResult r;
  auto problem = [&r](std::string p) { r.problems.push_back(std::move(p)); };
  Status init = Initialize(SweepOptions());
  if (!init.ok()) {
    problem("Initialize: " + init.ToString());
    return r;
  }
  auto* sim = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  // The caller works in its own context on a device the graph uses.
  rt::Context* mine = nullptr;
  Status cs = rt::CreateContext(5, &mine);
  if (!cs.ok()) problem("CreateContext: " + cs.ToString());
  if (fault_k > 0) {
    sim->ClearCallLog();
    sim->SetRecordCalls(true);
  }
  arm(*sim);

  auto step = [&](const std::string& what, const Status& s) {
    dog->SetWhat(what);
    if (rt::GetCurrentContext() != mine) {
      problem(what + " changed the caller's context");
      (void)rt::SetCurrentContext(mine);
    }
    if (!s.ok()) {
      ++r.errors;
      ++r.codes[s.code()];
      if (s.message().empty()) problem(what + ": error without a message");
    }
    return s.ok();
  };

  {
    Session session;
    bool built = step("AddGraph", session.AddGraph(1, Chain())) &&
                 step("BuildGraph", session.BuildGraph(1));
    if (built) {
      int64_t last = -1;
      auto take = [&](const std::string& what, const std::vector<Tensor>& out,
                      const FlowInfo& info, int64_t fed_upto) {
        if (info.ret_code != 0) {
          ++r.failed_messages;
          return;
        }
        if (out.size() != 1 || out[0].As<int64_t>().size() != 1) {
          problem(what + ": malformed output");
          return;
        }
        int64_t v = out[0].As<int64_t>()[0];
        if (v % 2 != 0 || v / 2 <= last || v / 2 > fed_upto) {
          problem(what + ": got " + std::to_string(v) + " after " +
                  std::to_string(2 * last) +
                  " (lost order, duplicate or "
                  "never fed)");
        }
        last = v / 2;
        ++r.fetched;
      };
      for (int i = 0; i < kMessages; ++i) {
        const std::string n = std::to_string(i);
        Status f = session.FeedData(1, {I64(i)}, FlowInfo{}, kStepTimeoutMs);
        if (!step("FeedData " + n, f)) {
          if (f.IsTimeout()) problem("FeedData " + n + " timed out");
          continue;  // not fed: nothing to fetch
        }
        ++r.fed;
        std::vector<Tensor> out;
        FlowInfo info;
        Status g = session.FetchData(1, &out, &info, kStepTimeoutMs);
        if (!step("FetchData " + n, g)) {
          if (g.IsTimeout()) {
            problem("FetchData " + n + " timed out: " + g.ToString());
            break;  // the graph stalled; the rest would only time out too
          }
          continue;
        }
        take("FetchData " + n, out, info, i);
      }
      // Whatever an error left behind comes out now, or never.
      for (;;) {
        std::vector<Tensor> out;
        FlowInfo info;
        Status g = session.FetchData(1, &out, &info, 50);
        if (!g.ok()) {
          if (!g.IsTimeout()) (void)step("FetchData (drain)", g);
          break;
        }
        take("FetchData (drain)", out, info, kMessages - 1);
      }
      (void)step("RemoveGraph", session.RemoveGraph(1));
    }
  }
  (void)step("Finalize", Finalize());
  r.calls = sim->CallCount(rt::kAnyOp);
  if (uint64_t k = fault_k; k > 0) {
    uint64_t seen = 0;
    for (const rt::CallRecord& c : sim->CallLog()) {
      if (c.op == rt::Op::kSetCurrentContext || ++seen != k) continue;
      r.faulted = std::string(rt::OpName(c.op)) + " on device " +
                  std::to_string(c.device) + " by thread '" + c.thread + "'";
      break;
    }
  }
  sim->SetRecordCalls(false);
  sim->ClearFaults();
  sim->SetCountCalls(false);

  if (r.errors == 0 && r.fetched + r.failed_messages != kMessages) {
    problem("every step succeeded but only " +
            std::to_string(r.fetched + r.failed_messages) + " of " +
            std::to_string(kMessages) + " outputs came back");
  }
  if (r.fetched + r.failed_messages > r.fed) {
    problem("more outputs than accepted feeds");
  }
  // Release the caller's context, then nothing may be left.
  if (rt::GetCurrentContext() != mine) problem("caller's context changed");
  (void)rt::SetCurrentContext(nullptr);
  if (mine != nullptr) {
    Status d = rt::DestroyContext(mine);
    if (!d.ok()) problem("DestroyContext: " + d.ToString());
  }
  testing::SimHoldings left = testing::Holdings(*sim);
  if (!left.empty()) problem("after Finalize the sim holds " + left.ToString());
  return r;
}

// A fresh Initialize + session deploys, feeds and fetches.
std::string FreshSessionWorks() {
  if (Status s = Initialize(SweepOptions()); !s.ok()) return s.ToString();
  std::string err;
  {
    Session session;
    Status s = session.AddGraph(1, Chain());
    if (s.ok()) s = session.BuildGraph(1);
    if (s.ok()) s = session.FeedData(1, {I64(21)}, FlowInfo{}, kStepTimeoutMs);
    std::vector<Tensor> out;
    FlowInfo info;
    if (s.ok()) s = session.FetchData(1, &out, &info, kStepTimeoutMs);
    if (!s.ok()) {
      err = s.ToString();
    } else if (out.size() != 1 ||
               out[0].As<int64_t>() != std::vector<int64_t>{42}) {
      err = "wrong output";
    }
    if (Status rm = session.RemoveGraph(1); !rm.ok() && err.empty()) {
      err = rm.ToString();
    }
  }
  auto* sim = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  if (Status f = Finalize(); !f.ok() && err.empty()) err = f.ToString();
  if (err.empty() && !testing::Holdings(*sim).empty()) {
    err = "holds " + testing::Holdings(*sim).ToString();
  }
  return err;
}

uint64_t Stride() {
  const char* s = std::getenv("HFLOW_FAULT_SWEEP_STRIDE");
  if (s == nullptr || *s == '\0') return 1;
  long v = std::strtol(s, nullptr, 10);
  return v > 0 ? static_cast<uint64_t>(v) : 1;
}

class FaultSweepCountTest : public ::testing::Test {
 protected:
  void SetUp() override { (void)Finalize(); }
  void TearDown() override { (void)Finalize(); }
};

class FaultSweepTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { (void)Finalize(); }
  void TearDown() override { (void)Finalize(); }
};

TEST_F(FaultSweepCountTest, CountingRunIsClean) {
  testing::Watchdog dog(kRunLimit, "counting run");
  RunResult r = RunFlow(
      [](rt::SimRuntime& sim) {
        sim.ResetCallCounts();
        sim.SetCountCalls(true);
      },
      &dog);
  EXPECT_TRUE(r.problems.empty()) << Describe(r);
  EXPECT_EQ(r.errors, 0) << Describe(r);
  EXPECT_EQ(r.fetched, kMessages);
  EXPECT_GT(r.calls, uint64_t(kMessages));
  std::cout << "[ sweep    ] the flow makes N = " << r.calls
            << " faultable device-runtime calls\n";
}

TEST_P(FaultSweepTest, FailKthCall) {
  const int shard = GetParam();
  const uint64_t stride = Stride();
  // HFLOW_FAULT_SWEEP_ONLY=k runs that one k (in the shard that has it).
  const char* only_env = std::getenv("HFLOW_FAULT_SWEEP_ONLY");
  const uint64_t only = only_env ? std::strtoull(only_env, nullptr, 10) : 0;
  uint64_t n = 0;
  {
    testing::Watchdog dog(kRunLimit, "counting run");
    RunResult count = RunFlow(
        [](rt::SimRuntime& sim) {
          sim.ResetCallCounts();
          sim.SetCountCalls(true);
        },
        &dog);
    ASSERT_TRUE(count.problems.empty()) << Describe(count);
    n = count.calls;
  }
  ASSERT_GT(n, 0u);
  // Thread interleavings move a call or two between runs: sweep a little
  // past N (a k that never fires must leave a clean run).
  const uint64_t last = n + 4;
  auto t0 = Clock::now();
  int swept = 0, fired = 0, failing = 0;
  std::map<StatusCode, int> codes;
  for (uint64_t k = 1; k <= last; ++k) {
    if ((k - 1) % stride != 0) continue;
    if (((k - 1) / stride) % kShards != static_cast<uint64_t>(shard)) continue;
    if (only > 0 && k != only) continue;
    ++swept;
    const std::string label = "fail call " + std::to_string(k) + " of " +
                              std::to_string(n) + " with " +
                              FaultFor(k).ToString();
    testing::Watchdog dog(kRunLimit, label);
    RunResult r = RunFlow(
        [k](rt::SimRuntime& sim) {
          sim.ResetCallCounts();
          sim.SetCountCalls(true);
          sim.InjectFault(rt::kAnyOp, k, FaultFor(k));
        },
        &dog, k);
    if (r.calls >= k) ++fired;
    for (const auto& [c, m] : r.codes) codes[c] += m;
    dog.SetWhat(label + ": fresh session afterwards");
    std::string fresh = FreshSessionWorks();
    if (!r.problems.empty() || !fresh.empty()) {
      // Every failing k is listed (the first few in full).
      if (++failing <= 10) {
        ADD_FAILURE() << label << " (" << r.faulted << "): " << Describe(r)
                      << (fresh.empty() ? "" : "\n    fresh session: " + fresh);
      } else {
        ADD_FAILURE() << label << " (" << r.faulted << ")";
      }
    }
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::cout << "[ sweep    ] shard " << shard << "/" << kShards << ": N = " << n
            << ", stride " << stride << ", " << swept << " runs (" << fired
            << " with the fault fired) in " << secs << " s; errors seen:";
  for (const auto& [c, m] : codes)
    std::cout << " " << StatusCodeName(c) << "=" << m;
  std::cout << "\n";
  if (only == 0) {
    EXPECT_GT(swept, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Shards, FaultSweepTest, ::testing::Range(0, kShards));

}  // namespace
}  // namespace hflow
