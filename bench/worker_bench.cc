// Worker-process benchmarks (docs/performance.md, "Worker processes"),
// each next to its peer in the same run:
//
//   Chain4Isolated   x ─[pass]─[pass]─[pass]─[pass]─ out  on device 2, 64 B,
//                    under Options::udf_isolation: the four stages in the
//                    device's one shared worker process
//   Chain4HeavyLoad  the same, every stage in a worker of its own
//                    (heavy_load)
//   Chain4IsolatedUnbatched  Chain4Isolated with batched calls off
//                    ($HFLOW_WORKER_BATCH=1): what batches buy
//   Chain4InProcess  the same chain and library, in the host
//   Hop1MiBIsolated  x ─[pass @2]─[pass @3]─ … ─ out (8 nodes, workers),
//                    1 MiB views: bytes moved across devices per second
//   WorkerMemcpy1MiB single-thread memcpy of 1 MiB (this run's peer)
//   WorkerStart      BuildGraph + RemoveGraph of one heavy_load node: a
//                    worker started, loaded, Init'ed and stopped
//   InProcessStart   the same graph in the host
//
// Thread-safety: benchmarks run one at a time.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "chain4.h"
#include "hflow/hflow.h"

namespace {

using hflow::DataType;
using hflow::FlowInfo;
using hflow::Status;
using hflow::Tensor;
using hflow::TensorView;

constexpr int kBatch = 512;
constexpr int kWindow = 32;
constexpr int kHopNodes = 8;

// A compile config of the bench library, heavy_load or not.
std::string Config(bool heavy) {
  namespace fs = std::filesystem;
  const fs::path lib = HFLOW_BENCH_UDFS;
  const fs::path dir = fs::temp_directory_path() /
                       ("hflow_worker_bench_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / (heavy ? "heavy.json" : "light.json");
  std::ofstream(file) << R"({"func_list": [{"func_name": "BenchPass"}],)"
                      << R"( "input_num": 1, "output_num": 1, "workspace": ")"
                      << lib.parent_path().string() << R"(", "target_bin": ")"
                      << lib.filename().string() << R"(", "heavy_load": )"
                      << (heavy ? "true" : "false") << "}";
  return file.string();
}

// x ─ n0 ─ … ─ out, node i on devices[i % size], every node BenchPass.
hflow::FlowGraph Chain(const std::string& name, int nodes, bool heavy,
                       const std::vector<int>& devices) {
  const std::string config = Config(heavy);
  return hflow::bench::ChainAt(
      name, nodes, [&](hflow::FunctionPp& pp) { pp.SetCompileConfig(config); },
      hflow::bench::LocalPlaces(devices));
}

// The session of the benchmarks, under udf_isolation or not: switching
// finalizes hflow and initializes it again (outside the timed loops), and
// forgets the graphs built so far.
std::map<uint32_t, Status>& BuiltGraphs() {
  static std::map<uint32_t, Status> built;
  return built;
}

hflow::Session& S(bool isolate = false) {
  static hflow::Session* s = nullptr;
  static bool isolated = false;
  if (s == nullptr || isolated != isolate) {
    delete s;
    (void)hflow::Finalize();
    hflow::Options o;
    o.udf_isolation = isolate;
    (void)hflow::Initialize(o);
    s = new hflow::Session();
    isolated = isolate;
    BuiltGraphs().clear();
  }
  return *s;
}

bool Built(benchmark::State& state, uint32_t id, hflow::FlowGraph (*make)(),
           bool isolate = false) {
  hflow::Session& s = S(isolate);
  auto& built = BuiltGraphs();
  auto it = built.find(id);
  if (it == built.end()) {
    Status st = s.AddGraph(id, make());
    if (st.ok()) st = s.BuildGraph(id);
    it = built.emplace(id, st).first;
  }
  if (!it->second.ok()) state.SkipWithError(it->second.ToString().c_str());
  return it->second.ok();
}

void RunChain(benchmark::State& state, uint32_t id, bool isolate = false) {
  hflow::Session& s = S(isolate);
  Tensor t;
  t.dtype = DataType::kUint8;
  t.shape = {64};
  t.data.assign(64, 7);
  const std::vector<Tensor> in{t};
  std::vector<Tensor> out;
  FlowInfo info;
  for (auto _ : state) {
    int fed = 0;
    for (int got = 0; got < kBatch; ++got) {
      for (; fed < kBatch && fed - got < kWindow; ++fed) {
        Status st = s.FeedData(id, in, FlowInfo{}, 10000);
        if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
      }
      Status st = s.FetchData(id, &out, &info, 10000);
      if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}

void BM_Chain4Isolated(benchmark::State& state) {
  if (!Built(
          state, 4, [] { return Chain("chain4_shared", 4, false, {2}); },
          /*isolate=*/true))
    return;
  RunChain(state, 4, /*isolate=*/true);
}
BENCHMARK(BM_Chain4Isolated)->UseRealTime();

// $HFLOW_WORKER_BATCH is read as the graph's instances are made: set
// around the build only.
void BM_Chain4IsolatedUnbatched(benchmark::State& state) {
  setenv("HFLOW_WORKER_BATCH", "1", 1);
  const bool ok = Built(
      state, 7, [] { return Chain("chain4_unbatched", 4, false, {2}); },
      /*isolate=*/true);
  unsetenv("HFLOW_WORKER_BATCH");
  if (!ok) return;
  RunChain(state, 7, /*isolate=*/true);
}
BENCHMARK(BM_Chain4IsolatedUnbatched)->UseRealTime();

void BM_Chain4HeavyLoad(benchmark::State& state) {
  if (!Built(state, 1, [] { return Chain("chain4_heavy", 4, true, {2}); }))
    return;
  RunChain(state, 1);
}
BENCHMARK(BM_Chain4HeavyLoad)->UseRealTime();

void BM_Chain4InProcess(benchmark::State& state) {
  if (!Built(state, 2, [] { return Chain("chain4_host", 4, false, {2}); }))
    return;
  RunChain(state, 2);
}
BENCHMARK(BM_Chain4InProcess)->UseRealTime();

// 32 views of one registered 1 MiB buffer through the isolated hop chain,
// four in flight.
void BM_Hop1MiBIsolated(benchmark::State& state) {
  if (!Built(state, 3, [] {
        return Chain("hop_iso", kHopNodes, true, {2, 3});
      }))
    return;
  static std::vector<uint8_t> staging(1 << 20, 7);
  static Status registered =
      hflow::RegisterHostMemory(staging.data(), staging.size());
  if (!registered.ok())
    return state.SkipWithError(registered.ToString().c_str());
  TensorView v;
  v.dtype = DataType::kUint8;
  v.shape = {int64_t(staging.size())};
  v.data = staging.data();
  v.bytes = staging.size();
  v.keep = std::shared_ptr<const void>(std::shared_ptr<void>(), v.data);
  const std::vector<TensorView> in{v};
  std::vector<TensorView> out;
  FlowInfo info;
  for (auto _ : state) {
    int fed = 0;
    for (int got = 0; got < 32; ++got) {
      for (; fed < 32 && fed - got < 4; ++fed) {
        Status st = S().FeedViews(3, in, FlowInfo{}, 10000);
        if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
      }
      Status st = S().FetchViews(3, &out, &info, 10000);
      if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
    }
  }
  state.SetBytesProcessed(state.iterations() * 32 * (kHopNodes - 1) *
                          int64_t(1 << 20));
}
BENCHMARK(BM_Hop1MiBIsolated)->UseRealTime();

void BM_WorkerMemcpy1MiB(benchmark::State& state) {
  std::vector<char> a(1 << 20, 1), b(1 << 20);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * int64_t(a.size()));
}
BENCHMARK(BM_WorkerMemcpy1MiB)->UseRealTime();

void RunStart(benchmark::State& state, bool heavy) {
  const hflow::FlowGraph g =
      Chain(heavy ? "start_iso" : "start_host", 1, heavy, {2});
  for (auto _ : state) {
    Status st = S().AddGraph(100, g);
    if (st.ok()) st = S().BuildGraph(100);
    if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
    st = S().RemoveGraph(100);
    if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
  }
}

void BM_WorkerStart(benchmark::State& state) { RunStart(state, true); }
BENCHMARK(BM_WorkerStart)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_InProcessStart(benchmark::State& state) { RunStart(state, false); }
BENCHMARK(BM_InProcessStart)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
