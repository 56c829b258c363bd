// Services benchmarks, each next to its baseline in the same run:
//   QueueRoundTrip/<bytes>       Enqueue+Dequeue through the exchange service
//                                (thread bound to the queue's device)
//   QueueHandleRoundTrip/<b>     the same on a queue handle (executors' path)
//   QueueRoundTripUnbound/<b>    the same from an unbound thread (binds per
//   call) PlainQueueRoundTrip          baseline: std::mutex + condvar deque of
//   shared_ptr QueuePingPong, PlainPingPong two-thread round trip (wake-ups
//   included) CrossDeviceRoundTrip/<b>     Enqueue on device 2, CopyMbuf to 3,
//   Enqueue,
//                                Dequeue on 3
//   PlainCrossRoundTrip/<b>      baseline: plain queue + memcpy of the payload
//   CopyMbuf/<b>, Memcpy/<b>     bandwidth of a cross-device copy vs memcpy
#include <benchmark/benchmark.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "hflow/rt.h"
#include "plain_queue.h"
#include "rt/sim/sim_runtime.h"
#include "services/exchange_service.h"

namespace {

using hflow::Status;
using hflow::services::MbufPtr;

struct Fixture {
  std::shared_ptr<hflow::rt::SimRuntime> sim;
  std::unique_ptr<hflow::services::ExchangeService> svc;
  uint32_t q2 = 0, q3 = 0;

  Fixture() {
    hflow::rt::SimOptions opts;
    opts.cluster = hflow::MakeLocalCluster({2, 3});
    sim = std::make_shared<hflow::rt::SimRuntime>(opts);
    svc = std::make_unique<hflow::services::ExchangeService>(sim.get());
    for (int32_t d : {2, 3}) {
      (void)svc->SubmitEventSync(
          d, hflow::services::CreateGroupRequest{"g", 64ull << 20}, nullptr);
      (void)svc->SubmitEventSync(
          d, hflow::services::AllocCacheRequest{"g", 32ull << 20, 2 << 20},
          nullptr);
    }
    (void)svc->CreateQueue(2, 64, "q2", &q2);
    (void)svc->CreateQueue(3, 64, "q3", &q3);
  }
};

Fixture& F() {
  static Fixture* f = new Fixture();
  return *f;
}

// The baseline a user would write (plain_queue.h).
using PlainQueue = hflow::bench::PlainQueue<std::shared_ptr<std::vector<char>>>;

void BM_QueueRoundTrip(benchmark::State& state) {
  Fixture& f = F();
  (void)f.sim->SetDevice(2);
  MbufPtr m;
  (void)f.svc->AllocMbuf(2, "g", "deployer", state.range(0), &m);
  for (auto _ : state) {
    (void)f.svc->Enqueue(f.q2, std::move(m), -1);
    (void)f.svc->Dequeue(f.q2, &m, -1);
  }
  m.reset();
  (void)f.sim->ResetDevice(2);
}
BENCHMARK(BM_QueueRoundTrip)->Arg(64)->Arg(1 << 20);

void BM_QueueHandleRoundTrip(benchmark::State& state) {
  Fixture& f = F();
  (void)f.sim->SetDevice(2);
  std::shared_ptr<hflow::services::DeviceQueue> q;
  (void)f.svc->OpenQueue(f.q2, &q);
  MbufPtr m;
  (void)f.svc->AllocMbuf(2, "g", "deployer", state.range(0), &m);
  for (auto _ : state) {
    (void)f.svc->Enqueue(*q, std::move(m), -1);
    (void)f.svc->Dequeue(*q, &m, -1);
  }
  m.reset();
  (void)f.sim->ResetDevice(2);
}
BENCHMARK(BM_QueueHandleRoundTrip)->Arg(64)->Arg(1 << 20);

void BM_QueueRoundTripUnbound(benchmark::State& state) {
  Fixture& f = F();
  MbufPtr m;
  (void)f.svc->AllocMbuf(2, "g", "deployer", state.range(0), &m);
  for (auto _ : state) {
    (void)f.svc->Enqueue(f.q2, std::move(m), -1);
    (void)f.svc->Dequeue(f.q2, &m, -1);
  }
}
BENCHMARK(BM_QueueRoundTripUnbound)->Arg(64)->Arg(1 << 20);

void BM_PlainQueueRoundTrip(benchmark::State& state) {
  PlainQueue q;
  auto v = std::make_shared<std::vector<char>>(state.range(0));
  for (auto _ : state) {
    q.Push(std::move(v));
    v = q.Pop();
  }
}
BENCHMARK(BM_PlainQueueRoundTrip)->Arg(64)->Arg(1 << 20);

// Two threads: the benchmark thread enqueues on q2 and waits on q3; an echo
// thread (bound to device 3 by the service at each call) moves each mbuf from
// q2 to q3. Wake-ups included: the round trip a pipeline stage pays.
void BM_QueuePingPong(benchmark::State& state) {
  Fixture& f = F();
  std::shared_ptr<hflow::services::DeviceQueue> q2, q3;
  (void)f.svc->OpenQueue(f.q2, &q2);
  (void)f.svc->OpenQueue(f.q3, &q3);
  std::atomic<bool> stop{false};
  std::thread echo([&] {
    MbufPtr m;
    while (f.svc->Dequeue(*q2, &m, -1).ok() && !stop.load()) {
      (void)f.svc->Enqueue(*q3, std::move(m), -1);
    }
  });
  MbufPtr m;
  (void)f.svc->AllocMbuf(2, "g", "deployer", 64, &m);
  for (auto _ : state) {
    (void)f.svc->Enqueue(*q2, std::move(m), -1);
    (void)f.svc->Dequeue(*q3, &m, -1);
  }
  stop = true;
  (void)f.svc->Enqueue(*q2, std::move(m), -1);  // wakes the echo to stop
  echo.join();
}
BENCHMARK(BM_QueuePingPong)->UseRealTime();

void BM_PlainPingPong(benchmark::State& state) {
  PlainQueue a, b;
  std::thread echo([&] {
    for (;;) {
      auto v = a.Pop();
      if (!v) break;
      b.Push(std::move(v));
    }
  });
  auto v = std::make_shared<std::vector<char>>(64);
  for (auto _ : state) {
    a.Push(std::move(v));
    v = b.Pop();
  }
  a.Push(nullptr);
  echo.join();
}
BENCHMARK(BM_PlainPingPong)->UseRealTime();

void BM_CrossDeviceRoundTrip(benchmark::State& state) {
  Fixture& f = F();
  MbufPtr m, c;
  (void)f.svc->AllocMbuf(2, "g", "deployer", state.range(0), &m);
  for (auto _ : state) {
    (void)f.svc->Enqueue(f.q2, std::move(m), -1);
    (void)f.svc->Dequeue(f.q2, &m, -1);
    (void)f.svc->CopyMbuf(m, 3, "g", "deployer", &c);
    (void)f.svc->Enqueue(f.q3, std::move(c), -1);
    (void)f.svc->Dequeue(f.q3, &c, -1);
    c.reset();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CrossDeviceRoundTrip)->Arg(64)->Arg(1 << 20);

void BM_PlainCrossRoundTrip(benchmark::State& state) {
  PlainQueue a, b;
  auto v = std::make_shared<std::vector<char>>(state.range(0));
  for (auto _ : state) {
    a.Push(std::move(v));
    v = a.Pop();
    auto w = std::make_shared<std::vector<char>>(v->size());
    std::memcpy(w->data(), v->data(), v->size());
    b.Push(std::move(w));
    benchmark::DoNotOptimize(b.Pop());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PlainCrossRoundTrip)->Arg(64)->Arg(1 << 20);

void BM_CopyMbuf(benchmark::State& state) {
  Fixture& f = F();
  MbufPtr m, c;
  (void)f.svc->AllocMbuf(2, "g", "deployer", state.range(0), &m);
  for (auto _ : state) {
    (void)f.svc->CopyMbuf(m, 3, "g", "deployer", &c);
    c.reset();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CopyMbuf)->Arg(1 << 20);

void BM_Memcpy(benchmark::State& state) {
  std::vector<char> a(state.range(0), 1), b(state.range(0));
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Memcpy)->Arg(1 << 20);

}  // namespace

BENCHMARK_MAIN();
