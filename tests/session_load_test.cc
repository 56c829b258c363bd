// Load through the public API ("nothing lost": every message fetched once):
// 8 feeder threads push 8 x 1250 = 10000 messages through a replicated
// pipeline on devices {2,3,4,5} while 2 fetcher threads drain it. Every
// message carries a user-set transaction id encoding (feeder, sequence) and
// a payload encoding the same (and 8 bytes of user data), so each fetched
// message can be checked against what was fed: every message comes back exactly
// once with the right value, nothing is lost or duplicated. Afterwards
// RemoveGraph and Finalize return every device's memory and contexts to zero,
// and no implicit binding ever happened.
//
//   x ── id (replicas on 2..5) ── add(id, id) (device 3) ── out
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "hflow/hflow.h"
#include "rt/sim/sim_runtime.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

constexpr int kFeeders = 8;
constexpr int kPerFeeder = 1250;
constexpr int kTotal = kFeeders * kPerFeeder;  // 10000
constexpr int kFetchers = 2;

// Transaction ids: feeder f, sequence i -> (f + 1) << 32 | (i + 1); never 0.
uint64_t TransId(int feeder, int seq) {
  return (uint64_t(feeder + 1) << 32) | uint64_t(seq + 1);
}

//   x ── id (replicas on 2~5) ── add(id, id)@3 ── out
FlowGraph ReplicatedPipeline() { return testing::ReplicatedDoubler("load"); }

class SessionLoadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    (void)Finalize();
    Options o;
    o.cluster = MakeLocalCluster({2, 3, 4, 5});
    o.queue_depth = 64;
    ASSERT_TRUE(Initialize(o).ok());
    sim_ = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  }
  void TearDown() override { (void)Finalize(); }

  rt::SimRuntime* sim_ = nullptr;
};

struct Fetched {
  uint64_t trans;
  std::vector<int64_t> value;
  std::vector<uint8_t> user_data;
  int32_t ret_code;
};

TEST_F(SessionLoadTest,
       TenThousandMessagesEightFeedersNothingLostOrDuplicated) {
  auto t0 = std::chrono::steady_clock::now();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, ReplicatedPipeline()).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();

  std::atomic<int> fed{0};
  std::atomic<int> fetched{0};
  std::atomic<bool> feed_failed{false};
  std::vector<std::vector<Fetched>> per_fetcher(kFetchers);
  std::vector<Status> feeder_errors(kFeeders);
  std::vector<Status> fetcher_errors(kFetchers);
  // Generous overall bound: a lost message must fail the test, not hang it.
  const auto deadline = t0 + std::chrono::seconds(60);

  std::vector<std::thread> threads;
  for (int f = 0; f < kFeeders; ++f) {
    threads.emplace_back([&, f] {
      for (int i = 0; i < kPerFeeder; ++i) {
        FlowInfo info;
        info.transaction_id = TransId(f, i);
        uint64_t tid = info.transaction_id;
        info.user_data.resize(sizeof(tid));
        std::memcpy(info.user_data.data(), &tid, sizeof(tid));
        Status fs = s.FeedData(
            1, {Tensor::From<int64_t>(DataType::kInt64, {2}, {f, i})}, info,
            10000);
        if (!fs.ok()) {
          feeder_errors[f] = fs;
          feed_failed = true;
          return;
        }
        fed.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  for (int k = 0; k < kFetchers; ++k) {
    threads.emplace_back([&, k] {
      auto& mine = per_fetcher[k];
      mine.reserve(kTotal);
      while (fetched.load() < kTotal && !feed_failed.load() &&
             std::chrono::steady_clock::now() < deadline) {
        std::vector<Tensor> out;
        FlowInfo info;
        Status fs = s.FetchData(1, &out, &info, 100);
        if (fs.IsTimeout()) continue;
        if (!fs.ok()) {
          fetcher_errors[k] = fs;
          return;
        }
        Fetched r;
        r.trans = info.transaction_id;
        r.ret_code = info.ret_code;
        r.user_data = info.user_data;
        if (out.size() == 1) r.value = out[0].As<int64_t>();
        mine.push_back(std::move(r));
        fetched.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  auto t1 = std::chrono::steady_clock::now();

  for (int f = 0; f < kFeeders; ++f) {
    EXPECT_TRUE(feeder_errors[f].ok())
        << "feeder " << f << ": " << feeder_errors[f].ToString();
  }
  for (int k = 0; k < kFetchers; ++k) {
    EXPECT_TRUE(fetcher_errors[k].ok())
        << "fetcher " << k << ": " << fetcher_errors[k].ToString();
  }
  EXPECT_EQ(fed.load(), kTotal);
  EXPECT_EQ(fetched.load(), kTotal);

  // Exactly once, with the right value and user data.
  std::vector<int> seen(kTotal, 0);
  int bad = 0;
  for (const auto& v : per_fetcher) {
    for (const Fetched& r : v) {
      int f = int(r.trans >> 32) - 1;
      int i = int(r.trans & 0xffffffffu) - 1;
      if (f < 0 || f >= kFeeders || i < 0 || i >= kPerFeeder) {
        ADD_FAILURE() << "unknown transaction id " << r.trans;
        continue;
      }
      ++seen[f * kPerFeeder + i];
      // (User data is fed but not checked: whether UDF outputs carry the
      // input's user data back to FetchData is not specified.)
      if (r.ret_code != 0 || r.value != std::vector<int64_t>{2 * f, 2 * i}) {
        if (++bad <= 5) {
          ADD_FAILURE() << "transaction " << r.trans << ": ret " << r.ret_code
                        << ", value size " << r.value.size();
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
  int lost = 0, duplicated = 0;
  for (int n : seen) {
    lost += n == 0;
    duplicated += n > 1;
  }
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(duplicated, 0);

  // Nothing left over.
  {
    std::vector<Tensor> out;
    FlowInfo info;
    EXPECT_EQ(s.FetchData(1, &out, &info, 0).code(), StatusCode::kTimeout);
  }
  std::vector<DeviceReport> reports;
  ASSERT_TRUE(s.DeviceReports(1, &reports).ok());
  for (const auto& r : reports) {
    EXPECT_EQ(r.implicit_bindings, 0u) << r.id;
    EXPECT_GE(r.submodels, 1u) << r.id;  // a replica on every device
  }

  ASSERT_TRUE(s.RemoveGraph(1).ok());
  ASSERT_TRUE(Finalize().ok());
  for (int32_t d : {2, 3, 4, 5}) {
    rt::DeviceStats ds;
    ASSERT_TRUE(sim_->GetDeviceStats(d, &ds).ok());
    EXPECT_EQ(ds.mem_used_bytes, 0u) << "device " << d;
    EXPECT_EQ(ds.live_allocations, 0u) << "device " << d;
    EXPECT_EQ(ds.contexts_alive, 0u) << "device " << d;
    EXPECT_EQ(ds.implicit_bindings, 0u) << "device " << d;
  }
  double secs = std::chrono::duration<double>(t1 - t0).count();
  std::printf(
      "[ load     ] %d messages, %d feeders, %d fetchers: %.2f s "
      "(%.0f msgs/s)\n",
      kTotal, kFeeders, kFetchers, secs, kTotal / secs);
  EXPECT_LT(secs, 20.0);
}

}  // namespace
}  // namespace hflow
