// Scenario: 8 threads interleave SetDevice / CreateContext /
// SetCurrentContext / Malloc / Memcpy / Free / ResetDevice on a {2,3,4,5}
// cluster. Afterwards every counter is consistent: no memory, no allocation,
// no context and no reference left; no implicit binding anywhere; devices
// outside the cluster's used set untouched. Run under TSan by
// scripts/check-sanitizers.
#include <gtest/gtest.h>

#include <random>
#include <thread>
#include <vector>

#include "hflow/context_guard.h"
#include "hflow/rt.h"
#include "test_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace {

TEST(RtStressTest, EightThreadsInterleavedLeaveNothingBehind) {
  const std::vector<int32_t> used = {2, 3, 4, 5};
  auto sim = testing::InstallSim({0, 1, 2, 3, 4, 5, 6, 7});
  constexpr int kThreads = 8;
  constexpr int kIters = 3000;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      util::SetCurrentThreadName("stress-" + std::to_string(t));
      std::mt19937 rng(1234 + t);
      std::vector<std::pair<int32_t, void*>> live;
      std::vector<rt::Context*> users;
      std::vector<int32_t> refs;
      auto check = [&](const Status& s) {
        if (!s.ok()) {
          ++failures;
          ADD_FAILURE() << s.ToString();
        }
      };
      for (int i = 0; i < kIters; ++i) {
        int32_t d = used[rng() % used.size()];
        switch (rng() % 6) {
          case 0:
            check(rt::SetDevice(d));
            refs.push_back(d);
            break;
          case 1: {
            rt::Context* c = nullptr;
            check(rt::CreateContext(d, &c));
            users.push_back(c);
            break;
          }
          case 2:
            if (!users.empty()) {
              check(rt::SetCurrentContext(users[rng() % users.size()]));
            }
            break;
          case 3: {
            int32_t bound;
            if (!rt::GetDevice(&bound).ok()) break;
            void* p = nullptr;
            check(rt::Malloc(bound, 1 + rng() % 4096, &p));
            uint64_t v = i;
            check(rt::Memcpy(bound, p, &v, 1, rt::MemcpyKind::kHostToDevice));
            live.emplace_back(bound, p);
            break;
          }
          case 4:
            if (!live.empty()) {
              auto [dev, p] = live.back();
              live.pop_back();
              ContextGuard guard;
              check(rt::SetDevice(dev));
              check(rt::Free(dev, p));
              check(rt::ResetDevice(dev));
            }
            break;
          case 5:
            check(rt::SetCurrentContext(nullptr));
            break;
        }
      }
      for (auto [dev, p] : live) {
        check(rt::SetDevice(dev));
        check(rt::Free(dev, p));
        check(rt::ResetDevice(dev));
      }
      check(rt::SetCurrentContext(nullptr));
      for (rt::Context* c : users) check(rt::DestroyContext(c));
      for (int32_t d : refs) check(rt::ResetDevice(d));
      EXPECT_EQ(rt::GetCurrentContext(), nullptr);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, 0);
  for (int32_t d = 0; d < 8; ++d) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    bool is_used = d >= 2 && d <= 5;
    EXPECT_EQ(st.mem_used_bytes, 0u) << d;
    EXPECT_EQ(st.live_allocations, 0u) << d;
    EXPECT_EQ(st.contexts_alive, 0u) << d;
    EXPECT_EQ(st.default_context_refs, 0) << d;
    EXPECT_EQ(st.implicit_bindings, 0u) << d;
    if (is_used) {
      EXPECT_GT(st.contexts_created, 0u) << d;
    } else {
      EXPECT_EQ(st.contexts_created, 0u) << d;
    }
  }
}

}  // namespace
}  // namespace hflow
