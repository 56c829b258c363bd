// End-to-end dataflow benchmarks through the public Session API, each next to
// its peer or limit measured in the same run (docs/performance.md, rows 1-5):
//
//   Chain4/1dev  x ─[id]─[id]─[id]─[id]─ out   all on device 2, 64 B, msgs/s
//   Chain4/4dev  the same chain on devices 2, 3, 4, 5
//   TbbChain4    oneTBB flow_graph: 4 serial queueing function_nodes with the
//                same pass-through body, fed by try_put, drained from a
//                queue_node (the fetch)
//   Hop1MiB      x ─[id @2]─[id @3]─[id @2]─ … ─[id @3]─ out  (8 nodes)
//                1 MiB tensors: bytes moved across devices per second
//                (7 hops per message; feed and fetch are not hops)
//   FeedHopFetch1MiB  x ─[id @2]─[id @3]─ out: payload bytes per second
//                end to end (feed and fetch copies included)
//   Memcpy1MiB   single-thread memcpy of 1 MiB
//   RoundTrip    feed → [id @2] → fetch, one 64 B message at a time
//   SpinPingPong two threads handing a 64 B buffer over atomics, spinning
//                (Note [Spin ping-pong]): the machine's hand-off limit
//   Replicas4    x ─[spin ×4 replicas on 2..5]─ out, ~10 µs compute body
//   ReplicasIdeal  4 plain threads (one per replica) running the same body
//                with no communication: what this machine can do at best
//
// Streams keep a window of messages in flight from one thread (feed ahead,
// fetch behind); one benchmark iteration is one batch of messages.
//
// Thread-safety: benchmarks run one at a time; the UDF body is reentrant.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef HFLOW_HAVE_TBB
#include <tbb/flow_graph.h>
#endif

#include <sys/resource.h>

#include "chain4.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"

namespace {

using hflow::DataType;
using hflow::FlowInfo;
using hflow::Status;
using hflow::Tensor;
using hflow::TensorView;

constexpr int kChainBatch = 512;
constexpr int kWindow = 32;
constexpr int kReplicaBatch = 2048;
constexpr int kReplicas = 4;  // the spin node on devices 2..5

// ---- the compute body shared by hflow's UDF and the ideal ------------------

std::atomic<uint64_t> g_spin_iters{1000};

__attribute__((noinline)) uint64_t Spin(uint64_t iters) {
  uint64_t x = 88172645463325252ull;
  for (uint64_t i = 0; i < iters; ++i) {  // xorshift: no memory traffic
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

// Iterations that take ~10 µs on one core of this machine (best of 5).
void CalibrateSpin() {
  constexpr uint64_t kProbe = 1 << 20;
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(Spin(kProbe));
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
  }
  g_spin_iters = static_cast<uint64_t>(kProbe * 10e-6 / best);
}

class SpinFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    benchmark::DoNotOptimize(Spin(g_spin_iters.load()));
    return context_->SetOutput(0, in[0]);
  }
};

}  // namespace

REGISTER_FLOW_FUNC("BenchSpin10us", SpinFunc);

namespace {

// Process CPU seconds (all threads, user + system): with wall time it shows
// how much of the machine a figure cost, which is steadier than wall time on
// a shared machine.
double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// Adds the counter cpu_us_per_msg over the benchmark's lifetime.
class CpuPerMessage {
 public:
  explicit CpuPerMessage(benchmark::State& state)
      : state_(state), start_(ProcessCpuSeconds()) {}
  ~CpuPerMessage() {
    double msgs = double(state_.items_processed());
    if (msgs > 0) {
      state_.counters["cpu_us_per_msg"] =
          1e6 * (ProcessCpuSeconds() - start_) / msgs;
    }
  }

 private:
  benchmark::State& state_;
  const double start_;
};

// ---- graphs
// ------------------------------------------------------------------

using hflow::bench::Chain;

hflow::FlowGraph Replicas() {
  hflow::FlowData x("x", 0);
  hflow::FunctionPp pp("spin_pp");
  pp.SetFunction("BenchSpin10us");
  hflow::FlowNode spin("spin", 1, 1);
  spin.SetInput(0, x).AddPp(pp);
  hflow::FlowGraph g("replicas");
  g.SetInputs({x}).SetOutputs({spin});
  g.SetDeployInfo(R"({"batch_deploy_info": [
      {"flow_node_list": ["spin"], "logic_device_list": "0:0:2~5"}]})");
  return g;
}

// One session for the whole run; each graph is built the first time a
// benchmark asks for it and kept (deploys are benchmarked in deploy_bench).
hflow::Session& S() {
  static hflow::Session* s = new hflow::Session();
  return *s;
}

bool Graph(benchmark::State& state, uint32_t id, hflow::FlowGraph (*make)()) {
  static std::map<uint32_t, Status> built;
  auto it = built.find(id);
  if (it == built.end()) {
    Status st = S().AddGraph(id, make());
    if (st.ok()) st = S().BuildGraph(id);
    it = built.emplace(id, st).first;
  }
  if (!it->second.ok()) state.SkipWithError(it->second.ToString().c_str());
  return it->second.ok();
}

Tensor Bytes(size_t n) {
  Tensor t;
  t.dtype = DataType::kUint8;
  t.shape = {static_cast<int64_t>(n)};
  t.data.assign(n, 7);
  return t;
}

// Feeds `n` copies of `t`, keeping at most `window` in flight, and fetches
// them all. Returns the first error.
// `in` is built once and `out` reused by the caller across iterations: a
// harness that copied the input (two 1 MiB allocations, their page faults
// and copies) or grew a fresh output per call measured itself too.
Status Stream(uint32_t id, const std::vector<Tensor>& in, int n, int window,
              std::vector<Tensor>* out) {
  FlowInfo info;
  int fed = 0;
  for (int got = 0; got < n; ++got) {
    for (; fed < n && fed - got < window; ++fed) {
      Status st = S().FeedData(id, in, FlowInfo{}, 10000);
      if (!st.ok()) return st;
    }
    Status st = S().FetchData(id, out, &info, 10000);
    if (!st.ok()) return st;
  }
  return Status::OK();
}

// Stream with the batch calls: feeds `window` transactions per
// FeedDataBatch, and each FetchDataBatch takes what is ready, feeding as
// many again, so at most `window` are in flight as in Stream.
Status StreamBatched(uint32_t id, const Tensor& t, int n, int window) {
  // Batches of every size, built once: Stream too feeds one prebuilt input.
  static std::map<std::pair<size_t, int>, std::vector<std::vector<Tensor>>>
      batches;
  auto batch = [&](int k) -> const std::vector<std::vector<Tensor>>& {
    auto& b = batches[{t.data.size(), k}];
    if (b.empty()) b.assign(k, std::vector<Tensor>{t});
    return b;
  };
  std::vector<std::vector<Tensor>> out;
  std::vector<FlowInfo> infos;
  int fed = std::min(n, window);
  Status st = S().FeedDataBatch(id, batch(fed), {}, 10000);
  for (int got = 0; st.ok() && got < n;) {
    st = S().FetchDataBatch(id, window, &out, &infos, 10000);
    if (!st.ok()) break;
    got += static_cast<int>(out.size());
    const int more = std::min<int>(n - fed, static_cast<int>(out.size()));
    if (more > 0) {
      st = S().FeedDataBatch(id, batch(more), {}, 10000);
      fed += more;
    }
  }
  return st;
}

void RunStream(benchmark::State& state, uint32_t id, const Tensor& t, int n,
               int window, bool batched = false) {
  const std::vector<Tensor> in{t};
  std::vector<Tensor> out;
  CpuPerMessage cpu(state);
  for (auto _ : state) {
    Status st = batched ? StreamBatched(id, t, n, window)
                        : Stream(id, in, n, window, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetBytesProcessed(state.iterations() * n * int64_t(t.data.size()));
}

// ---- rows 1 and 2: a chain of 4 pass-through nodes
// ---------------------------

void BM_Chain4OneDevice(benchmark::State& state) {
  if (!Graph(state, 1,
             [] { return Chain("chain4_1dev", 4, "_BuiltIn_Identity", {2}); }))
    return;
  RunStream(state, 1, Bytes(64), kChainBatch, kWindow);
}
BENCHMARK(BM_Chain4OneDevice)->UseRealTime();

void BM_Chain4FourDevices(benchmark::State& state) {
  if (!Graph(state, 2, [] {
        return Chain("chain4_4dev", 4, "_BuiltIn_Identity", {2, 3, 4, 5});
      }))
    return;
  RunStream(state, 2, Bytes(64), kChainBatch, kWindow);
}
BENCHMARK(BM_Chain4FourDevices)->UseRealTime();

// The same chains fed and fetched with the batch calls (FeedDataBatch,
// FetchDataBatch): the figure for streams of small messages.
void BM_Chain4OneDeviceBatched(benchmark::State& state) {
  if (!Graph(state, 1,
             [] { return Chain("chain4_1dev", 4, "_BuiltIn_Identity", {2}); }))
    return;
  RunStream(state, 1, Bytes(64), kChainBatch, kWindow, /*batched=*/true);
}
BENCHMARK(BM_Chain4OneDeviceBatched)->UseRealTime();

void BM_Chain4FourDevicesBatched(benchmark::State& state) {
  if (!Graph(state, 2, [] {
        return Chain("chain4_4dev", 4, "_BuiltIn_Identity", {2, 3, 4, 5});
      }))
    return;
  RunStream(state, 2, Bytes(64), kChainBatch, kWindow, /*batched=*/true);
}
BENCHMARK(BM_Chain4FourDevicesBatched)->UseRealTime();

#ifdef HFLOW_HAVE_TBB
void BM_TbbChain4(benchmark::State& state) {
  using Msg = std::shared_ptr<std::vector<uint8_t>>;
  using Node = tbb::flow::function_node<Msg, Msg, tbb::flow::queueing>;
  tbb::flow::graph g;
  auto pass = [](Msg m) { return m; };
  Node n0(g, tbb::flow::serial, pass), n1(g, tbb::flow::serial, pass),
      n2(g, tbb::flow::serial, pass), n3(g, tbb::flow::serial, pass);
  tbb::flow::queue_node<Msg> out(g);
  tbb::flow::make_edge(n0, n1);
  tbb::flow::make_edge(n1, n2);
  tbb::flow::make_edge(n2, n3);
  tbb::flow::make_edge(n3, out);
  const std::vector<uint8_t> payload(64, 7);
  CpuPerMessage cpu(state);
  for (auto _ : state) {
    for (int i = 0; i < kChainBatch; ++i) {
      n0.try_put(std::make_shared<std::vector<uint8_t>>(payload));
    }
    g.wait_for_all();
    Msg m;
    while (out.try_get(m)) benchmark::DoNotOptimize(m->data());
  }
  state.SetItemsProcessed(state.iterations() * kChainBatch);
}
BENCHMARK(BM_TbbChain4)->UseRealTime();
#endif

// ---- row 3: 1 MiB tensors hopping across two devices
// --------------------------

// Note [Hop bandwidth]
// A message through feed → node@2 → node@3 → fetch is copied three times
// (into device 2, across, out of device 3), so end to end it can never reach
// one memcpy's bandwidth. The hop itself is measured by a message hopping
// 2 → 3 → 2 → ... seven times, counting the bytes that crossed devices. It
// is fed and fetched as views of registered memory (Session::FeedViews,
// FetchViews), so the hops are the only copies: fed and fetched by copy, two
// uncounted copies came with every seven counted ones, which capped the
// row at 7/9 of memcpy however fast a hop was. The end-to-end figures, by
// copy and by view, are reported next to it.
constexpr int kHopNodes = 8;

// The same chain fed and fetched without a copy (Session::FeedViews from
// registered host memory, FetchViews): only the hop copies, so end to end
// it can approach one memcpy. Every feed is a view of one registered
// buffer (the nodes only read it) with one shared keep, as a caller
// streaming from a pinned staging buffer would.
Status StreamViews(uint32_t id, const TensorView& v, int n, int window) {
  const std::vector<TensorView> in{v};
  std::vector<TensorView> out;
  FlowInfo info;
  int fed = 0;
  for (int got = 0; got < n; ++got) {
    for (; fed < n && fed - got < window; ++fed) {
      Status st = S().FeedViews(id, in, FlowInfo{}, 10000);
      if (!st.ok()) return st;
    }
    Status st = S().FetchViews(id, &out, &info, 10000);
    if (!st.ok()) return st;
  }
  return Status::OK();
}

// A view of one registered 1 MiB staging buffer (the nodes only read it),
// with one shared keep, as a caller streaming from a pinned buffer would;
// false (and the benchmark skipped) if the registration failed.
bool StagingView(benchmark::State& state, TensorView* v) {
  static Tensor staging = Bytes(1 << 20);
  static Status registered =
      hflow::RegisterHostMemory(staging.data.data(), staging.data.size());
  if (!registered.ok()) {
    state.SkipWithError(registered.ToString().c_str());
    return false;
  }
  v->dtype = staging.dtype;
  v->shape = staging.shape;
  v->data = staging.data.data();
  v->bytes = staging.data.size();
  v->keep = std::shared_ptr<const void>(std::shared_ptr<void>(), v->data);
  return true;
}

// Streams 32 views through graph `id`, four in flight.
void RunViews(benchmark::State& state, uint32_t id) {
  TensorView v;
  if (!StagingView(state, &v)) return;
  CpuPerMessage cpu(state);
  for (auto _ : state) {
    Status st = StreamViews(id, v, 32, 4);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * 32);
}

// Fed and fetched as views (Note [Hop bandwidth]): only the hops copy.
void BM_Hop1MiB(benchmark::State& state) {
  if (!Graph(state, 3, [] {
        return Chain("hop_1mib", kHopNodes, "_BuiltIn_Identity", {2, 3});
      }))
    return;
  RunViews(state, 3);
  state.SetBytesProcessed(state.iterations() * 32 * (kHopNodes - 1) *
                          int64_t(1 << 20));
}
BENCHMARK(BM_Hop1MiB)->UseRealTime();

void BM_FeedHopFetch1MiB(benchmark::State& state) {
  if (!Graph(state, 6, [] {
        return Chain("feed_hop_fetch_1mib", 2, "_BuiltIn_Identity", {2, 3});
      }))
    return;
  RunStream(state, 6, Bytes(1 << 20), 32, 4);
}
BENCHMARK(BM_FeedHopFetch1MiB)->UseRealTime();

void BM_FeedHopFetch1MiBZeroCopy(benchmark::State& state) {
  if (!Graph(state, 7, [] {
        return Chain("feed_hop_fetch_1mib_zc", 2, "_BuiltIn_Identity", {2, 3});
      }))
    return;
  RunViews(state, 7);
  state.SetBytesProcessed(state.iterations() * 32 * int64_t(1 << 20));
}
BENCHMARK(BM_FeedHopFetch1MiBZeroCopy)->UseRealTime();

void BM_Memcpy1MiB(benchmark::State& state) {
  std::vector<char> a(1 << 20, 1), b(1 << 20);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * int64_t(a.size()));
}
BENCHMARK(BM_Memcpy1MiB)->UseRealTime();

// ---- row 4: feed → fetch round trip through one node
// ---------------------------

void BM_RoundTrip(benchmark::State& state) {
  if (!Graph(state, 4,
             [] { return Chain("round_trip", 1, "_BuiltIn_Identity", {2}); }))
    return;
  const std::vector<Tensor> in{Bytes(64)};
  std::vector<Tensor> out;
  for (auto _ : state) {
    Status st = Stream(4, in, 1, 1, &out);
    if (!st.ok()) {
      state.SkipWithError(st.ToString().c_str());
      break;
    }
  }
}
BENCHMARK(BM_RoundTrip)->UseRealTime();

// Note [Spin ping-pong]
// The round trip's baseline is the machine's hand-off limit: two threads
// passing a 64 B buffer back and forth through atomics, each spinning until
// the other's store lands -- no locks, no sleeps, no wake-up syscalls. A
// mutex+condvar ping-pong (the earlier baseline) pays two futex wake-ups
// per trip, tens of us on this VM, so any design looked good next to it.
// A spinner yields after a long fruitless spin so that, if the two threads
// ever share a core, the other gets to run instead of both burning a slice.
struct alignas(64) SpinSlot {
  std::atomic<uint64_t> seq{0};
};

void SpinUntil(const SpinSlot& slot, uint64_t want) {
  for (uint32_t n = 0; slot.seq.load(std::memory_order_acquire) != want;) {
    if (++n % (1u << 14) == 0) {
      std::this_thread::yield();
    } else {
      __builtin_ia32_pause();
    }
  }
}

void BM_SpinPingPong(benchmark::State& state) {
  SpinSlot ping, pong;
  std::atomic<bool> stop{false};
  alignas(64) uint8_t buffer[64] = {};
  std::thread echo([&] {
    for (uint64_t seq = 1;; ++seq) {
      for (uint32_t n = 0; ping.seq.load(std::memory_order_acquire) != seq;) {
        if (stop.load(std::memory_order_relaxed)) return;
        if (++n % (1u << 14) == 0) {
          std::this_thread::yield();
        } else {
          __builtin_ia32_pause();
        }
      }
      benchmark::DoNotOptimize(buffer[seq % sizeof(buffer)]);  // the message
      pong.seq.store(seq, std::memory_order_release);
    }
  });
  uint64_t seq = 0;
  for (auto _ : state) {
    buffer[++seq % sizeof(buffer)] = static_cast<uint8_t>(seq);
    ping.seq.store(seq, std::memory_order_release);
    SpinUntil(pong, seq);
  }
  stop = true;
  echo.join();
}
BENCHMARK(BM_SpinPingPong)->UseRealTime();

// ---- row 5: 4 replicas with a ~10 µs body vs the machine's ideal
// ----------------

void BM_Replicas4(benchmark::State& state) {
  if (!Graph(state, 5, Replicas)) return;
  RunStream(state, 5, Bytes(64), kReplicaBatch, 64);
  state.counters["spin_iters"] = double(g_spin_iters.load());
}
BENCHMARK(BM_Replicas4)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Replicas4Batched(benchmark::State& state) {
  if (!Graph(state, 5, Replicas)) return;
  RunStream(state, 5, Bytes(64), kReplicaBatch, 64, /*batched=*/true);
  state.counters["spin_iters"] = double(g_spin_iters.load());
}
BENCHMARK(BM_Replicas4Batched)->UseRealTime()->Unit(benchmark::kMillisecond);

// Note [Ideal for replicas]
// The ideal runs the replicas' calibrated body on as many runnable threads
// as hflow has replicas (four), each its share of the batch back to back:
// no queues, no copies, no wake-ups. Measured rather than computed so that
// the body's real cost on this machine (and any steal by neighbours) is in
// both figures; thread start-up (~50 µs) is under 1% of a batch. Four
// threads, not min(4, cores): the scheduler (and a host sharing its cores)
// may give a process more CPU the more threads it has runnable, and hflow's
// four replicas get that too, so an ideal with fewer threads could be
// beaten (an earlier run read hflow at 1.52x of a two-thread ideal).
void BM_ReplicasIdeal(benchmark::State& state) {
  const int workers = kReplicas;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([w, workers] {
        for (int i = w; i < kReplicaBatch; i += workers) {
          benchmark::DoNotOptimize(Spin(g_spin_iters.load()));
        }
      });
    }
    for (auto& t : threads) t.join();
  }
  state.SetItemsProcessed(state.iterations() * kReplicaBatch);
  state.counters["workers"] = workers;
}
BENCHMARK(BM_ReplicasIdeal)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  CalibrateSpin();
  hflow::Options o;
  o.cluster = hflow::MakeLocalCluster({2, 3, 4, 5});
  if (const char* t = std::getenv("HFLOW_BENCH_EXEC_THREADS")) {
    o.exec_threads = std::atoi(t);
  }
  Status st = hflow::Initialize(o);
  if (!st.ok()) {
    std::fprintf(stderr, "flow_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  for (uint32_t id : S().GraphIds()) (void)S().RemoveGraph(id);
  (void)hflow::Finalize();
  benchmark::Shutdown();
  return 0;
}
