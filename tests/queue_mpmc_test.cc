// Scenario: 4 producers and 4 consumers on queues across 2 devices (3 and
// 6), through the exchange service from threads that never bind: every
// message arrives exactly once and in order per producer; afterwards all
// device memory is back and no thread was left bound.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "hflow/rt.h"
#include "services/exchange_service.h"
#include "test_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace {

TEST(QueueMpmcTest, FourProducersFourConsumersTwoDevices) {
  auto sim = testing::InstallSim({3, 6, 7});
  constexpr int kProducers = 4, kConsumers = 4, kPerProducer = 2000;
  const int32_t devices[2] = {3, 6};
  {
    services::ExchangeService svc(sim.get());
    uint32_t q[2];
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(svc.SubmitEventSync(
                         devices[i], services::CreateGroupRequest{"g", 8 << 20},
                         nullptr)
                      .ok());
      ASSERT_TRUE(
          svc.SubmitEventSync(devices[i],
                              services::AllocCacheRequest{"g", 4 << 20, 4096},
                              nullptr)
              .ok());
      ASSERT_TRUE(svc.CreateQueue(devices[i], 16, "mpmc", &q[i]).ok());
    }
    std::atomic<int> errors{0};
    std::vector<std::thread> threads;
    // Producer p writes (p, seq) into queue p % 2, on that queue's device.
    for (int p = 0; p < kProducers; ++p) {
      threads.emplace_back([&, p] {
        util::SetCurrentThreadName("producer-" + std::to_string(p));
        int which = p % 2;
        for (int i = 0; i < kPerProducer; ++i) {
          services::MbufPtr m;
          Status s = svc.AllocMbuf(devices[which], "g", "deployer", 8, &m);
          uint64_t v = (uint64_t(p) << 32) | uint32_t(i);
          if (s.ok()) s = svc.WriteMbuf(m, &v, 8);
          m->head().trans_id = v;
          if (s.ok()) s = svc.Enqueue(q[which], std::move(m), -1);
          if (!s.ok()) {
            ++errors;
            ADD_FAILURE() << s.ToString();
            return;
          }
        }
        if (rt::GetCurrentContext() != nullptr) ++errors;
      });
    }
    // Consumers c read queue c % 2 until they have their share.
    std::vector<std::vector<uint64_t>> got(kConsumers);
    for (int c = 0; c < kConsumers; ++c) {
      threads.emplace_back([&, c] {
        util::SetCurrentThreadName("consumer-" + std::to_string(c));
        int which = c % 2;
        for (int i = 0; i < kPerProducer; ++i) {
          services::MbufPtr m;
          Status s = svc.Dequeue(q[which], &m, 10000);
          uint64_t v = 0;
          if (s.ok()) s = svc.ReadMbuf(m, &v, 8);
          if (!s.ok() || v != m->head().trans_id) {
            ++errors;
            ADD_FAILURE() << s.ToString();
            return;
          }
          got[c].push_back(v);
        }
        if (rt::GetCurrentContext() != nullptr) ++errors;
      });
    }
    for (auto& t : threads) t.join();
    ASSERT_EQ(errors, 0);
    // Exactly once: every (producer, seq) seen once overall. In order per
    // producer: within each consumer's stream, a producer's seqs increase.
    std::map<uint64_t, int> seen;
    for (const auto& stream : got) {
      std::map<uint32_t, int64_t> last;
      for (uint64_t v : stream) {
        ++seen[v];
        uint32_t prod = v >> 32;
        int64_t seq = uint32_t(v);
        auto it = last.find(prod);
        if (it != last.end()) {
          EXPECT_GT(seq, it->second);
        }
        last[prod] = seq;
      }
    }
    EXPECT_EQ(seen.size(), size_t(kProducers * kPerProducer));
    for (const auto& [v, n] : seen) ASSERT_EQ(n, 1) << v;
  }
  for (int32_t d : {3, 6, 7}) {
    rt::DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, 0u) << d;
    EXPECT_EQ(st.implicit_bindings, 0u) << d;
  }
  EXPECT_EQ(testing::ContextsCreated(*sim, {7}), 0u);
}

}  // namespace
}  // namespace hflow
