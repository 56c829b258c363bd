// `hflow run` (see run_command.h).
//
// Shape of a run: resolve the cluster, read the graph file for its input
// names, parse every --input (all before Initialize, so bad arguments cost
// nothing and need no cleanup), Initialize, add + build the graph, feed on a
// helper thread while the main thread fetches, then Finalize on every path.
//
// Thread-safety: RunRun runs on the main thread; the feeder thread shares
// only the Session (thread-safe) and the Feeder's mutex-guarded counters.
#include "tools/run_command.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "deploy/graph_def.h"
#include "hflow/rt.h"
#include "hflow/session.h"
#include "rt/thread_util.h"
#include "tools/input_value.h"

namespace hflow::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kGraphId = 1;
constexpr auto kProgressEvery = std::chrono::seconds(2);
// Fetches wait in slices this long so the loop notices a feeder that
// stopped early instead of sitting out the whole --timeout.
constexpr int32_t kFetchSliceMs = 100;

std::string JoinNames(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "(none)" : s;
}

// Parses the --input arguments and orders them by graph input index; every
// graph input must be given exactly once.
Status OrderInputs(const std::vector<std::string>& args,
                   const deploy::GraphDef& graph, std::vector<Tensor>* out) {
  std::string known = "; graph '" + graph.name +
                      "' has inputs: " + JoinNames(graph.inputs) +
                      " (give each once as --input NAME=VALUE)";
  std::map<std::string, Tensor> given;
  for (const std::string& arg : args) {
    std::string name;
    Tensor t;
    HFLOW_RETURN_IF_ERROR(ParseInputArg(arg, &name, &t));
    if (!graph.IsGraphInput(name)) {
      return Status::InvalidArgument("--input '" + arg + "': no input named '" +
                                     name + "'" + known);
    }
    if (!given.emplace(name, std::move(t)).second) {
      return Status::InvalidArgument("--input '" + name + "' is given twice" +
                                     known);
    }
  }
  std::vector<std::string> missing;
  for (const std::string& name : graph.inputs) {
    if (!given.count(name)) missing.push_back(name);
  }
  if (!missing.empty()) {
    return Status::InvalidArgument("missing --input for " + JoinNames(missing) +
                                   known);
  }
  out->clear();
  for (const std::string& name : graph.inputs) out->push_back(given[name]);
  return Status::OK();
}

// Feeds transactions 1..n on its own thread; the fetch loop polls it.
class Feeder {
 public:
  Feeder(Session* session, const std::vector<Tensor>* inputs, int64_t n,
         int32_t timeout_ms)
      : session_(session), inputs_(inputs), n_(n), timeout_ms_(timeout_ms) {}
  ~Feeder() { Join(); }

  void Start() {
    thread_ = std::thread([this] { Loop(); });
  }
  // Stops after the feed in progress (which ends within its timeout).
  void Join() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int64_t fed() {
    std::lock_guard<std::mutex> lock(mu_);
    return fed_;
  }
  bool done() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }
  Status error() {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }
  // Waits up to `ms` until more than `count` are fed or feeding is over.
  void WaitFed(int64_t count, int32_t ms) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms),
                 [&] { return fed_ > count || done_; });
  }

 private:
  void Loop() {
    // No device work happens here directly: FeedData binds what it needs.
    SetCurrentThreadName("run-feeder");
    Status s;
    for (int64_t i = 1; i <= n_ && !stop_ && s.ok(); ++i) {
      FlowInfo info;
      info.transaction_id = static_cast<uint64_t>(i);
      s = session_->FeedData(kGraphId, *inputs_, info, timeout_ms_);
      std::lock_guard<std::mutex> lock(mu_);
      if (s.ok()) fed_ = i;
      cv_.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu_);
    if (!s.ok())
      error_ = s.WithContext("feeding transaction " + std::to_string(fed_ + 1) +
                             ": ");
    done_ = true;
    cv_.notify_all();
  }

  Session* const session_;
  const std::vector<Tensor>* const inputs_;
  const int64_t n_;
  const int32_t timeout_ms_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t fed_ = 0;  // guarded by mu_
  bool done_ = false;
  Status error_;
  std::thread thread_;
};

// What a run produced, for the summary and --stats.
struct RunResult {
  std::string graph;
  // The graph batches (CountBatch/TimeBatch): fewer results than feeds.
  bool aggregates = false;
  int64_t fed = 0;
  int64_t fetched = 0;
  int64_t ok = 0;  // fetched with ret code 0
  uint64_t first_failed_trans = 0;
  int32_t first_failed_code = 0;
  double wall_s = 0;
  std::vector<DeviceReport> devices;
};

// Prints fetched messages in transaction order: replicas may return them
// out of order, so each waits until its predecessors are printed.
class OrderedPrinter {
 public:
  explicit OrderedPrinter(std::ostream& out) : out_(out) {}
  void Add(const FlowInfo& info, std::vector<Tensor> outputs) {
    pending_.emplace(info.transaction_id,
                     std::make_pair(info.ret_code, std::move(outputs)));
    while (!pending_.empty() && pending_.begin()->first <= next_) PrintFirst();
  }
  // Prints whatever is left (after a lost message), still in order.
  void FlushAll() {
    while (!pending_.empty()) PrintFirst();
    out_.flush();
  }

 private:
  void PrintFirst() {
    auto it = pending_.begin();
    const auto& [code, outputs] = it->second;
    for (size_t k = 0; k < outputs.size(); ++k) {
      out_ << OutputJsonLine(k, it->first, code, outputs[k]) << '\n';
    }
    next_ = std::max(next_, it->first + 1);
    pending_.erase(it);
  }

  std::ostream& out_;
  uint64_t next_ = 1;
  std::multimap<uint64_t, std::pair<int32_t, std::vector<Tensor>>> pending_;
};

// How long a batching graph may stay quiet after the last feed before the
// run ends: long enough for batch timeouts of typical graphs, short enough
// not to stall the command.
int64_t DrainMs(int32_t timeout_ms) {
  constexpr int64_t kDrainMs = 500;
  return timeout_ms < 0 ? kDrainMs : std::min<int64_t>(kDrainMs, timeout_ms);
}

// Fetches one message per fed transaction until all `n` are back, the
// feeder stops early, or nothing arrives for --timeout while messages are
// outstanding. A batching graph (fewer results than feeds) is fetched until
// everything is fed and it stays quiet for DrainMs.
Status FetchAll(const RunArgs& args, Session* session, Feeder* feeder,
                std::ostream& out, std::ostream& err, RunResult* r) {
  OrderedPrinter printer(out);
  auto progress_at = Clock::now() + kProgressEvery;
  auto last = Clock::now();  // last progress while messages were outstanding
  int32_t slice = args.timeout_ms < 0
                      ? kFetchSliceMs
                      : std::min(args.timeout_ms, kFetchSliceMs);
  Status s;
  while (r->aggregates || r->fetched < args.repeat) {
    if (Clock::now() >= progress_at) {
      err << "hflow run: fetched " << r->fetched << "/" << args.repeat << "\n";
      out.flush();
      progress_at = Clock::now() + kProgressEvery;
    }
    if (!r->aggregates && r->fetched >= feeder->fed()) {
      if (feeder->done()) break;  // feeding failed; its error is reported
      feeder->WaitFed(r->fetched, kFetchSliceMs);
      last = Clock::now();
      continue;
    }
    std::vector<Tensor> outputs;
    FlowInfo info;
    s = session->FetchData(kGraphId, &outputs, &info, slice);
    if (s.IsTimeout()) {
      auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
          Clock::now() - last);
      // A batching graph is drained once everything is fed and nothing has
      // come for a short while (a partial batch never completes by itself).
      if (r->aggregates && feeder->done() &&
          waited.count() >= DrainMs(args.timeout_ms)) {
        s = r->fetched > 0
                ? Status::OK()
                : Status::Timeout(
                      "no result for " + std::to_string(waited.count()) +
                      " ms after the last feed; the graph batches, and no "
                      "batch completed (feed more, or give the batch a "
                      "timeout)");
        break;
      }
      if (args.timeout_ms < 0 || waited.count() < args.timeout_ms) continue;
      s = Status::Timeout("no result for " + std::to_string(waited.count()) +
                          " ms (--timeout " + std::to_string(args.timeout_ms) +
                          "); fetched " + std::to_string(r->fetched) + " of " +
                          std::to_string(feeder->fed()) + " fed");
    }
    if (!s.ok()) break;
    last = Clock::now();
    ++r->fetched;
    if (info.ret_code == 0) {
      ++r->ok;
    } else if (r->first_failed_code == 0) {
      r->first_failed_code = info.ret_code;
      r->first_failed_trans = info.transaction_id;
    }
    printer.Add(info, std::move(outputs));
  }
  printer.FlushAll();
  return s;
}

// Adds, builds and runs the graph; the Session is gone when this returns,
// so Finalize finds nothing left to remove.
Status RunSession(const RunArgs& args, const std::vector<Tensor>& inputs,
                  std::ostream& out, std::ostream& err, RunResult* r) {
  Session session;
  HFLOW_RETURN_IF_ERROR(
      session.AddGraphFile(kGraphId, args.graph, args.deploy));
  Status s = session.BuildGraph(kGraphId);
  if (s.ok()) {
    auto start = Clock::now();
    Feeder feeder(&session, &inputs, args.repeat, args.timeout_ms);
    feeder.Start();
    s = FetchAll(args, &session, &feeder, out, err, r);
    feeder.Join();
    r->wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    r->fed = feeder.fed();
    if (s.ok()) s = feeder.error();
  }
  // Reported even after a failure: --stats shows what the attempt touched.
  (void)session.DeviceReports(kGraphId, &r->devices);
  return s;
}

Status WriteStats(const std::string& path, const RunResult& r, int64_t repeat,
                  bool context_unchanged) {
  using Json = nlohmann::ordered_json;
  Json devices = Json::array();
  for (const DeviceReport& d : r.devices) {
    devices.push_back({{"id", d.id},
                       {"contexts_created", d.contexts_created},
                       {"implicit_bindings", d.implicit_bindings},
                       {"submodels", d.submodels},
                       {"queues", d.queues},
                       {"peak_mem_bytes", d.peak_mem_bytes}});
  }
  Json doc = {{"graph", r.graph},
              {"fed", r.fed},
              {"fetched", r.fetched},
              {"failed", r.aggregates ? r.fetched - r.ok : repeat - r.ok},
              {"wall_s", r.wall_s},
              {"msgs_per_s", r.wall_s > 0 ? double(r.fetched) / r.wall_s : 0.0},
              {"devices", std::move(devices)},
              {"caller_context_unchanged", context_unchanged}};
  std::ofstream file(path);
  file << doc.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
  file.close();
  if (!file) return Status::NotFound(path + ": cannot write the --stats file");
  return Status::OK();
}

void PrintSummary(const RunArgs& args, const RunResult& r, std::ostream& err) {
  char rate[64];
  std::snprintf(rate, sizeof(rate), "%.3f s, %.1f msgs/s", r.wall_s,
                r.wall_s > 0 ? double(r.fetched) / r.wall_s : 0.0);
  err << "hflow run: " << r.graph << ": " << r.ok << "/" << args.repeat
      << " transactions ok (fed " << r.fed << ", fetched " << r.fetched
      << ", failed "
      << (r.aggregates ? r.fetched - r.ok : args.repeat - r.ok) << ") in "
      << rate << "\n";
  if (r.first_failed_code != 0) {
    err << "hflow run: first failure: transaction " << r.first_failed_trans
        << " came back with ret code " << r.first_failed_code << "\n";
  }
}

// Devices the cluster has, as empty rows, for a run that never built.
std::vector<DeviceReport> EmptyReports(const ClusterConfig& cluster) {
  std::vector<DeviceReport> rows;
  for (int32_t id : cluster.LocalDeviceIds()) {
    DeviceReport d;
    d.id = id;
    rows.push_back(d);
  }
  return rows;
}

}  // namespace

int RunRun(const RunArgs& args, std::ostream& out, std::ostream& err) {
  auto fail = [&err](const Status& s) {
    err << "hflow run: " << s.ToString() << "\n";
    return 1;
  };
  // Read before anything of hflow runs: invariant 2 says we leave it so.
  rt::Context* caller_context = rt::GetCurrentContext();
  Options options;
  Status s = ResolveCluster(args.cluster, &options.cluster);
  if (s.ok()) s = ApplyMemoryOptions(args.cluster, &options);
  if (!s.ok()) return fail(s);
  deploy::GraphDef graph;
  s = deploy::LoadGraphFile(args.graph, &graph);
  if (!s.ok()) return fail(s);
  std::vector<Tensor> inputs;
  s = OrderInputs(args.inputs, graph, &inputs);
  if (!s.ok()) return fail(s);

  s = Initialize(options);
  if (!s.ok()) return fail(s.WithContext("Initialize: "));
  RunResult result;
  result.graph = graph.name;
  for (const auto& n : graph.nodes) {
    bool batch_fn = n.pp.function == "_BuiltIn_CountBatch" ||
                    n.pp.function == "_BuiltIn_TimeBatch";
    bool batch_attr = false;
    for (const auto& a : n.input_attrs) batch_attr |= !a.empty();
    result.aggregates |= batch_fn || batch_attr;
  }
  s = RunSession(args, inputs, out, err, &result);
  Status fin = Finalize();
  bool context_unchanged = rt::GetCurrentContext() == caller_context;

  int code = 0;
  if (!s.ok()) code = fail(s);
  if (!fin.ok()) code = fail(fin.WithContext("Finalize: "));
  if (result.devices.empty()) result.devices = EmptyReports(options.cluster);
  if (!args.stats.empty()) {
    Status w = WriteStats(args.stats, result, args.repeat, context_unchanged);
    if (!w.ok()) code = fail(w);
  }
  PrintSummary(args, result, err);
  // Every result must carry ret code 0; a batching graph returns fewer
  // results than feeds, so there it is every result that came back.
  bool all_ok = result.aggregates
                    ? result.fetched > 0 && result.ok == result.fetched
                    : result.ok == args.repeat;
  return code == 0 && all_ok ? 0 : 1;
}

void AddRunCommand(CLI::App* app) {
  CLI::App* cmd = app->add_subcommand(
      "run", "Deploy a graph, feed its inputs N times, print the outputs");
  auto args = std::make_shared<RunArgs>();
  cmd->add_option("GRAPH", args->graph, "Graph file (JSON)")->required();
  AddClusterOptions(cmd, &args->cluster);
  cmd->add_option("--deploy", args->deploy,
                  "Deploy info file (overrides the graph's)")
      ->type_name("FILE");
  cmd->add_option("--input", args->inputs,
                  "NAME=VALUE; VALUE is DTYPE:v1,v2,..., "
                  "DTYPE[d0,d1,...]:v1,... or @file.npy")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--repeat", args->repeat,
                  "Feed the inputs N times (transactions 1..N)")
      ->type_name("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--timeout", args->timeout_ms,
                  "Milliseconds to wait for each feed and fetch (-1: forever)")
      ->type_name("MS")
      ->check(CLI::Range(-1, std::numeric_limits<int32_t>::max()));
  cmd->add_option("--stats", args->stats, "Write run statistics (JSON) to FILE")
      ->type_name("FILE");
  cmd->callback([args] {
    int code = RunRun(*args, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace hflow::tools
