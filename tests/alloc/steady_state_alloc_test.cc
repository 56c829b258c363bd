// hflow_alloc_tests: a long stream through a built graph allocates nothing
// per message once it runs in steady state (issue 20). A binary of its own,
// because it replaces the global operator new to count every thread's heap
// allocations (bench/counting_new.h); not built with sanitizers, which replace
// it themselves and bypass the recycling lists on purpose.
//
// The streams feed 64 B tensors through chains of built-in identities, a
// window of messages in flight, and fetch into the same output vector each
// time (as a streaming caller does). The count over kCounted messages must
// stay under kBudget, a constant far below one allocation per message: a
// shell, a shape or a queue node made per message would add kCounted.
// The device sets run with and without device 0, one device and four. The
// last test switches the recycling off to show that the count bites.
//
// Thread-safety: the counter is atomic (executor threads allocate too);
// the tests drive hflow from one thread.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "counting_new.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "util/recycling_allocator.h"

namespace hflow {
namespace {

constexpr int kWarmup = 20000;
constexpr int kCounted = 20000;
constexpr int kWindow = 16;
// Allocations allowed over kCounted messages, far below one per message:
// the recycling lists of threads that free more than they make fill up to
// their bound before they trade blocks back (Note [Recycled blocks and
// their threads]), and until then the other side still allocates; a ring
// may reach a new depth once.
constexpr uint64_t kBudget = 500;

Status Stream(Session& s, int n) {
  Tensor t;
  t.dtype = DataType::kUint8;
  t.shape = {64};
  t.data.assign(64, 7);
  const std::vector<Tensor> in{t};
  static std::vector<Tensor> out;  // reused, as a streaming caller does
  static FlowInfo info;
  int fed = 0;
  for (int got = 0; got < n; ++got) {
    for (; fed < n && fed - got < kWindow; ++fed) {
      HFLOW_RETURN_IF_ERROR(s.FeedData(1, in, FlowInfo{}, 10000));
    }
    HFLOW_RETURN_IF_ERROR(s.FetchData(1, &out, &info, 10000));
    if (out.size() != 1 || out[0].data != t.data) {
      return Status::Internal("the stream returned other bytes");
    }
  }
  return Status::OK();
}

// Allocations made while kCounted messages stream through a chain of four
// identities on `devices` (stage i on devices[i % size]).
uint64_t CountSteadyState(const std::vector<int32_t>& devices,
                          int exec_threads) {
  Options o;
  o.cluster = MakeLocalCluster(devices);
  o.exec_threads = exec_threads;
  EXPECT_TRUE(Initialize(o).ok());
  uint64_t counted = ~0ull;
  {
    Session s;
    std::vector<testing::ChainStage> stages;
    for (int i = 0; i < 4; ++i) {
      stages.push_back({"n" + std::to_string(i),
                        "_BuiltIn_Identity",
                        {devices[i % devices.size()]}});
    }
    Status st = s.AddGraph(1, testing::ChainGraph("chain", stages));
    if (st.ok()) st = s.BuildGraph(1);
    if (st.ok()) st = Stream(s, kWarmup);
    const uint64_t before = counting_new::Allocations();
    if (st.ok()) st = Stream(s, kCounted);
    const uint64_t after = counting_new::Allocations();
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (st.ok()) counted = after - before;
  }
  EXPECT_TRUE(Finalize().ok());
  return counted;
}

TEST(SteadyStateAllocTest, OneDeviceOneExecutorThread) {
  const uint64_t n = CountSteadyState({2}, 1);
  EXPECT_LE(n, kBudget) << n << " allocations over " << kCounted << " messages";
}

TEST(SteadyStateAllocTest, OneDeviceDefaultPool) {
  const uint64_t n = CountSteadyState({3}, 0);
  EXPECT_LE(n, kBudget) << n << " allocations over " << kCounted << " messages";
}

TEST(SteadyStateAllocTest, FourDevicesWithoutZero) {
  const uint64_t n = CountSteadyState({2, 3, 4, 5}, 0);
  EXPECT_LE(n, kBudget) << n << " allocations over " << kCounted << " messages";
}

TEST(SteadyStateAllocTest, DevicesWithZero) {
  const uint64_t n = CountSteadyState({0, 1}, 0);
  EXPECT_LE(n, kBudget) << n << " allocations over " << kCounted << " messages";
}

// Without the recycled mbufs, shells and dims every message allocates
// again: the count above is what keeps them.
TEST(SteadyStateAllocTest, TheCountCatchesLostRecycling) {
  util::recycling::SetBypassForTesting(true);
  const uint64_t n = CountSteadyState({2}, 1);
  util::recycling::SetBypassForTesting(false);
  EXPECT_GE(n, uint64_t(kCounted)) << "at least one allocation per message";
}

}  // namespace
}  // namespace hflow
