// Graphs across hosts (docs/performance.md, "Across hosts"), each next to
// its peer in the same run, with three hflowd processes on loopback
// (127.0.0.2..4, started here, token credentials) and the benchmarks' UDF
// library (BenchPass, the input message itself):
//
//   Chain4CrossHost  x ─[n0]─[n1]─[n2]─[n3]─ out, 64 B: n0, n1 on host 1,
//                    n2, n3 on host 2
//   Chain4OneHost    the same chain and library on this host (device 0)
//   Hop1MiBCrossHost x ─[n0 @host 1]─[n1 @host 2]─ out, 1 MiB: bytes of
//                    the hop from host 1 to host 2 per second
//   OneStageCrossHost  x ─[n0 @host 1]─ out, 64 B: one call's round trip
//   Deploy32ThreeHosts  BuildGraph + RemoveGraph of a 32-node chain spread
//                    round robin over the three hosts
//   Deploy32OneHost  the same graph on this host's devices
//
// Thread-safety: benchmarks run one at a time.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chain4.h"
#include "hflow/hflow.h"

namespace {

namespace fs = std::filesystem;
using hflow::DataType;
using hflow::FlowInfo;
using hflow::Status;
using hflow::Tensor;

constexpr int kBatch = 256;
constexpr int kWindow = 32;
constexpr int kHosts = 3;

fs::path Dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() /
                 ("hflow_hosts_bench_" + std::to_string(getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One hflowd on 127.0.0.<2 + i>, dying with this process; its address.
std::string StartDaemon(int i, const std::string& token) {
  const std::string ready = (Dir() / ("d" + std::to_string(i))).string();
  const std::string log = ready + ".log";
  std::vector<std::string> args = {HFLOW_HFLOWD_PATH,
                                   "--listen",
                                   "127.0.0." + std::to_string(2 + i) + ":0",
                                   "--devices",
                                   "0,1",
                                   "--node-id",
                                   std::to_string(i + 1),
                                   "--token-file",
                                   token,
                                   "--ready-file",
                                   ready};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  for (int waited = 0; waited < 2000; ++waited) {
    const std::string a = Slurp(ready);
    if (!a.empty() && a.back() == '\n') return a.substr(0, a.size() - 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "";
}

// hflow over this host (devices 0..3) and the three daemons (nodes 1..3,
// devices 0 and 1 each), started once.
Status InitializeOnce() {
  static const Status status = []() -> Status {
    const std::string token = (Dir() / "token").string();
    std::ofstream(token) << "hflow-bench-token-0123456789abcdef\n";
    fs::permissions(token, fs::perms::owner_read | fs::perms::owner_write);
    std::string nodes =
        R"({"node_id":0,"is_local":true,"item_list":[{"device_id":0},)"
        R"({"device_id":1},{"device_id":2},{"device_id":3}]})";
    for (int i = 0; i < kHosts; ++i) {
      const std::string a = StartDaemon(i, token);
      if (a.empty()) return Status::Internal("hflowd did not start");
      const size_t colon = a.rfind(':');
      nodes += R"(,{"node_id":)" + std::to_string(i + 1) + R"(,"ipaddr":")" +
               a.substr(0, colon) + R"(","port":)" + a.substr(colon + 1) +
               R"(,"item_list":[{"device_id":0},{"device_id":1}]})";
    }
    const std::string config = R"({"cluster":[{"cluster_nodes":[)" + nodes +
                               R"(]}],"credentials":{"token_file":")" + token +
                               "\"}}";
    hflow::Options o;
    HFLOW_RETURN_IF_ERROR(
        hflow::ParseClusterConfig(config, "bench cluster", &o.cluster));
    return hflow::Initialize(o);
  }();
  return status;
}

std::string Config() {
  const fs::path lib = HFLOW_BENCH_UDFS;
  const fs::path file = Dir() / "pass.json";
  std::ofstream(file) << R"({"func_list": [{"func_name": "BenchPass"}],)"
                      << R"( "input_num": 1, "output_num": 1, "workspace": ")"
                      << lib.parent_path().string() << R"(", "target_bin": ")"
                      << lib.filename().string() << "\"}";
  return file.string();
}

// x ─ n0 ─ … ─ out of BenchPass, node i at logic device places[i % size].
hflow::FlowGraph Chain(const std::string& name, int nodes,
                       const std::vector<std::string>& places) {
  const std::string config = Config();
  return hflow::bench::ChainAt(
      name, nodes, [&](hflow::FunctionPp& pp) { pp.SetCompileConfig(config); },
      places);
}

hflow::Session& S() {
  static hflow::Session* s = new hflow::Session();
  return *s;
}

bool Built(benchmark::State& state, uint32_t id, const hflow::FlowGraph& g) {
  static std::map<uint32_t, Status> built;
  Status st = InitializeOnce();
  auto it = built.find(id);
  if (st.ok() && it == built.end()) {
    st = S().AddGraph(id, g);
    if (st.ok()) st = S().BuildGraph(id);
    it = built.emplace(id, st).first;
  }
  if (it != built.end()) st = it->second;
  if (!st.ok()) state.SkipWithError(st.ToString().c_str());
  return st.ok();
}

// kBatch messages of `bytes`, kWindow (1 MiB: 4) in flight.
void Stream(benchmark::State& state, uint32_t id, int64_t bytes) {
  Tensor t;
  t.dtype = DataType::kUint8;
  t.shape = {bytes};
  t.data.assign(size_t(bytes), 7);
  const std::vector<Tensor> in{t};
  const int window = bytes > 4096 ? 4 : kWindow;
  const int batch = bytes > 4096 ? 32 : kBatch;
  std::vector<Tensor> out;
  FlowInfo info;
  for (auto _ : state) {
    int fed = 0;
    for (int got = 0; got < batch; ++got) {
      for (; fed < batch && fed - got < window; ++fed) {
        Status st = S().FeedData(id, in, FlowInfo{}, 10000);
        if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
      }
      Status st = S().FetchData(id, &out, &info, 10000);
      if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
    }
  }
  state.SetItemsProcessed(state.iterations() * batch);
  state.SetBytesProcessed(state.iterations() * batch * bytes);
}

void BM_Chain4CrossHost(benchmark::State& state) {
  if (!Built(state, 1,
             Chain("chain4_hosts", 4, {"0:1:0", "0:1:1", "0:2:0", "0:2:1"})))
    return;
  Stream(state, 1, 64);
}
BENCHMARK(BM_Chain4CrossHost)->UseRealTime();

void BM_Chain4OneHost(benchmark::State& state) {
  if (!Built(state, 2, Chain("chain4_local", 4, {"0:0:0"}))) return;
  Stream(state, 2, 64);
}
BENCHMARK(BM_Chain4OneHost)->UseRealTime();

// One stage on host 1, 64 B: the round trip of one call.
void BM_OneStageCrossHost(benchmark::State& state) {
  if (!Built(state, 4, Chain("one_hosts", 1, {"0:1:0"}))) return;
  Stream(state, 4, 64);
}
BENCHMARK(BM_OneStageCrossHost)->UseRealTime();

void BM_Hop1MiBCrossHost(benchmark::State& state) {
  if (!Built(state, 3, Chain("hop_hosts", 2, {"0:1:0", "0:2:0"}))) return;
  Stream(state, 3, 1 << 20);
}
BENCHMARK(BM_Hop1MiBCrossHost)->UseRealTime();

void RunDeploy(benchmark::State& state, uint32_t id,
               const std::vector<std::string>& places) {
  if (Status st = InitializeOnce(); !st.ok()) {
    return state.SkipWithError(st.ToString().c_str());
  }
  const hflow::FlowGraph g =
      Chain("deploy32_" + std::to_string(id), 32, places);
  for (auto _ : state) {
    Status st = S().AddGraph(id, g);
    if (st.ok()) st = S().BuildGraph(id);
    if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
    st = S().RemoveGraph(id);
    if (!st.ok()) return state.SkipWithError(st.ToString().c_str());
  }
}

void BM_Deploy32ThreeHosts(benchmark::State& state) {
  RunDeploy(state, 10, {"0:1:0", "0:2:0", "0:3:0", "0:1:1", "0:2:1", "0:3:1"});
}
BENCHMARK(BM_Deploy32ThreeHosts)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Deploy32OneHost(benchmark::State& state) {
  RunDeploy(state, 11, {"0:0:0", "0:0:1", "0:0:2", "0:0:3"});
}
BENCHMARK(BM_Deploy32OneHost)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
