// `hflow run` (see run_command.h).
//
// Shape of a run: resolve the cluster, load and plan the graph, parse every
// --input and open the outputs (all before Initialize, so bad arguments cost
// nothing, need no cleanup and exit 2), Initialize, add + build the graph,
// feed on a helper thread (run_feeder.h) while the main thread fetches and
// prints (result_printer.h), then tear down and Finalize on every path.
//
// Note [Bounded exit]: --timeout bounds every wait: feeds and fetches here,
// Init during deployment and the teardown in the core (Options). After a
// timeout the results fetched so far are printed (each line is flushed),
// the stuck transaction is named, and the teardown runs under an
// ExitWatchdog: if it does not finish in kTeardownMs + kGraceMs (a UDF that
// never returns cannot be joined), or the core reports that a node would
// not stop, the process ends with std::_Exit(1) instead of hanging in a
// join or in static destructors.
//
// Thread-safety: RunRun runs on the main thread; the feeder thread shares
// only the Session (thread-safe) and its own mutex-guarded counters.
#include "tools/run_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <map>
#include <memory>

#include "deploy/graph_def.h"
#include "hflow/rt.h"
#include "hflow/session.h"
#include "tools/exit_watchdog.h"
#include "tools/input_value.h"
#include "tools/plan_check.h"
#include "tools/result_printer.h"
#include "tools/run_feeder.h"
#include "tools/run_progress.h"
#include "tools/run_report.h"

namespace hflow::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kGraphId = 1;
constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
// Fetches wait in slices this long so the loop notices a feeder that
// stopped early instead of sitting out the whole --timeout.
constexpr int32_t kFetchSliceMs = 100;
// How long the teardown may wait for running UDFs (Options::stop_timeout_ms):
// it runs after the results are in, so waiting longer gains nothing.
constexpr int32_t kTeardownMs = 2000;
constexpr int64_t kGraceMs = 3000;

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

// Everything a run needs, checked before Initialize.
struct Prepared {
  Options options;
  deploy::GraphDef graph;
  deploy::Plan plan;
  std::vector<Tensor> inputs;
  std::unique_ptr<ResultPrinter> printer;
};

// --fetch names each output once, within the graph's outputs.
Status CheckFetch(const std::vector<uint32_t>& fetch,
                  const deploy::GraphDef& graph) {
  const size_t n = graph.outputs.size();
  for (size_t i = 0; i < fetch.size(); ++i) {
    if (fetch[i] >= n) {
      return Status::InvalidArgument(
          "--fetch " + std::to_string(fetch[i]) + ": graph '" + graph.name +
          "' has " + std::to_string(n) + " output" + (n == 1 ? "" : "s") +
          " (0.." + std::to_string(n == 0 ? 0 : n - 1) + ")");
    }
    for (size_t j = 0; j < i; ++j) {
      if (fetch[j] == fetch[i]) {
        return Status::InvalidArgument("--fetch " + std::to_string(fetch[i]) +
                                       ": named twice; name each output once");
      }
    }
  }
  return Status::OK();
}

Status Prepare(const RunArgs& args, std::ostream& out, Prepared* p) {
  HFLOW_RETURN_IF_ERROR(ResolveCluster(args.cluster, &p->options.cluster));
  HFLOW_RETURN_IF_ERROR(ApplyMemoryOptions(args.cluster, &p->options));
  HFLOW_RETURN_IF_ERROR(deploy::LoadGraphFile(args.graph, &p->graph));
  HFLOW_RETURN_IF_ERROR(
      CheckAndPlan(p->graph, args.deploy, p->options, &p->plan));
  HFLOW_RETURN_IF_ERROR(OrderInputs(args.inputs, p->graph, &p->inputs));
  HFLOW_RETURN_IF_ERROR(CheckFetch(args.fetch, p->graph));
  HFLOW_RETURN_IF_ERROR(ResultPrinter::Open(
      {args.output, args.output_npy, args.fetch}, &out, &p->printer));
  p->options.init_timeout_ms = args.timeout_ms;
  p->options.stop_timeout_ms = args.timeout_ms < 0
                                   ? kTeardownMs
                                   : std::min(args.timeout_ms, kTeardownMs);
  p->options.crash_report = true;
  p->options.udf_isolation = args.isolate;
  if (args.restart > 0) {
    p->options.restart_policy = RestartPolicy::kRestart;
    p->options.max_worker_restarts = args.restart;
  }
  return Status::OK();
}

bool Aggregates(const deploy::GraphDef& graph) {
  bool aggregates = false;
  for (const auto& n : graph.nodes) {
    aggregates |= n.pp.function == "_BuiltIn_CountBatch" ||
                  n.pp.function == "_BuiltIn_TimeBatch";
    for (const auto& a : n.input_attrs) aggregates |= !a.empty();
  }
  return aggregates;
}

// What RunSession says before BuildGraph, which has no progress of its own.
std::string BuildMessage(const Prepared& p) {
  bool udfs = false;
  for (const auto& n : p.graph.nodes) udfs |= !n.pp.compile_config.empty();
  std::string devices;
  for (int32_t d : p.plan.devices) {
    devices += (devices.empty() ? "" : ",") + std::to_string(d);
  }
  std::string where = "graph '" + p.graph.name + "' (" +
                      std::to_string(p.plan.instances.size()) +
                      " instances on devices " + devices + ")";
  return udfs ? "building UDFs (a first build takes a while) and deploying " +
                    where + " ..."
              : "deploying " + where + " ...";
}

// How long a batching graph may stay quiet after the last feed before the
// run ends: long enough for batch timeouts of typical graphs, short enough
// not to stall the command.
int64_t DrainMs(int32_t timeout_ms) {
  constexpr int64_t kDrainMs = 500;
  return timeout_ms < 0 ? kDrainMs : std::min<int64_t>(kDrainMs, timeout_ms);
}

// Fetches one message per fed transaction until all are back, the feeder
// stops early, or nothing arrives for --timeout while messages are
// outstanding. A batching graph (fewer results than feeds) is fetched until
// everything is fed and it stays quiet for DrainMs.
Status FetchAll(const RunArgs& args, Session* session, RunFeeder* feeder,
                ResultPrinter* printer, RunProgress* progress, RunResult* r) {
  auto last = Clock::now();  // last progress while messages were outstanding
  int32_t slice = args.timeout_ms < 0
                      ? kFetchSliceMs
                      : std::min(args.timeout_ms, kFetchSliceMs);
  Status s;
  uint64_t next = 1;              // the lowest transaction not fetched yet
  std::map<uint64_t, int> early;  // fetched ahead of `next` (replicas)
  while (r->aggregates || r->fetched < args.repeat) {
    progress->Update(r->fetched);
    if (!r->aggregates && r->fetched >= feeder->fed()) {
      if (feeder->done()) break;  // feeding failed; its error is reported
      feeder->WaitFed(r->fetched, kFetchSliceMs);
      last = Clock::now();
      continue;
    }
    std::vector<Tensor> outputs;
    FlowInfo info;
    s = args.fetch.empty()
            ? session->FetchData(kGraphId, &outputs, &info, slice)
            : session->FetchData(kGraphId, args.fetch, &outputs, &info, slice);
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
                          std::to_string(feeder->fed()) + " fed; transaction " +
                          std::to_string(next) +
                          " has not come back (a node is stuck or too slow)");
    }
    if (!s.ok()) break;
    last = Clock::now();
    ++r->fetched;
    for (++early[info.transaction_id]; early.count(next); ++next) {
      early.erase(next);
    }
    if (info.ret_code == 0) {
      ++r->ok;
    } else if (r->first_failed_code == 0) {
      r->first_failed_code = info.ret_code;
      r->first_failed_trans = info.transaction_id;
      r->first_failed_node = info.error_node;
    }
    s = printer->Add(info, std::move(outputs));
    if (!s.ok()) break;
  }
  Status flushed = printer->FlushAll();
  progress->Finish();
  return s.ok() ? flushed : s;
}

void ArmTeardown(ExitWatchdog* watchdog) {
  watchdog->Arm(kTeardownMs + kGraceMs,
                "hflow run: the graph did not stop within " +
                    std::to_string(kTeardownMs + kGraceMs) +
                    " ms after the run ended (a UDF is still running); "
                    "exiting without teardown (the results fetched are "
                    "printed)");
}

// Adds, builds and runs the graph, then removes it. *teardown is the
// RemoveGraph status (a kTimeout there means a node would not stop).
Status RunSession(const RunArgs& args, Prepared* p, std::ostream& err,
                  ExitWatchdog* watchdog, RunResult* r, Status* teardown) {
  RunProgress progress(&err, isatty(STDERR_FILENO) == 1,
                       r->aggregates ? -1 : args.repeat);
  Session session;
  Status s = session.AddGraphFile(kGraphId, args.graph, args.deploy);
  if (s.ok()) {
    progress.Say(BuildMessage(*p));
    s = session.BuildGraph(kGraphId);
  }
  if (s.ok()) {
    r->built = true;
    auto start = Clock::now();
    RunFeeder feeder(&session, kGraphId, &p->inputs, args.repeat,
                     args.timeout_ms);
    progress.Start();
    feeder.Start();
    s = FetchAll(args, &session, &feeder, p->printer.get(), &progress, r);
    // Said now: the teardown below may be what hangs.
    if (!s.ok()) {
      err << "hflow run: " << s.ToString() << "\n";
      r->run_error = true;
    }
    ArmTeardown(watchdog);
    feeder.Stop();
    feeder.Join();  // within one feed slice
    r->wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    r->fed = feeder.fed();
    s = r->run_error ? Status::OK() : feeder.error();
  } else {
    ArmTeardown(watchdog);
  }
  // Reported even after a failure: --stats shows what the attempt touched.
  (void)session.DeviceReports(kGraphId, &r->devices);
  *teardown = session.RemoveGraph(kGraphId);
  return s;
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
  auto report = [&err](const Status& s) {
    err << "hflow run: " << s.ToString() << "\n";
  };
  // Read before anything of hflow runs: invariant 2 says we leave it so.
  rt::Context* caller_context = rt::GetCurrentContext();
  Prepared p;
  Status s = Prepare(args, out, &p);
  if (!s.ok()) {
    report(s);
    return kExitUsage;
  }
  s = Initialize(p.options);
  if (!s.ok()) {
    report(s.WithContext("Initialize: "));
    return kExitFailed;
  }
  RunResult result;
  result.graph = p.graph.name;
  result.repeat = args.repeat;
  result.aggregates = Aggregates(p.graph);
  ExitWatchdog watchdog;
  Status teardown;
  s = RunSession(args, &p, err, &watchdog, &result, &teardown);
  int code = s.ok() && !result.run_error ? 0 : kExitFailed;
  if (!s.ok()) report(s);
  if (!teardown.ok() && teardown.code() != StatusCode::kNotFound) {
    report(teardown.WithContext("stopping the graph: "));
    // A node that would not stop still runs on a thread nobody can join:
    // leave without Finalize or destructors (Note [Bounded exit]).
    if (teardown.IsTimeout()) FlushAndExit(kExitFailed);
    code = kExitFailed;
  }
  Status fin = Finalize();
  watchdog.Disarm();
  bool context_unchanged = rt::GetCurrentContext() == caller_context;
  if (!fin.ok()) {
    report(fin.WithContext("Finalize: "));
    code = kExitFailed;
  }
  if (result.devices.empty()) result.devices = EmptyReports(p.options.cluster);
  if (!args.stats.empty()) {
    Status w = WriteStats(args.stats, result, context_unchanged);
    if (!w.ok()) {
      report(w);
      code = kExitFailed;
    }
  }
  // A run that never started has no transactions to sum up.
  if (result.built) PrintSummary(result, err);
  return code == 0 && result.built && result.all_ok() ? 0 : kExitFailed;
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
                  "Milliseconds any wait may last: each feed, each fetch "
                  "without a result, each UDF's Init (-1: forever)")
      ->type_name("MS")
      ->check(CLI::Range(-1, std::numeric_limits<int32_t>::max()));
  cmd->add_option("--stats", args->stats, "Write run statistics (JSON) to FILE")
      ->type_name("FILE");
  cmd->add_option("--output", args->output,
                  "Write the result lines to FILE instead of stdout")
      ->type_name("FILE");
  cmd->add_option("--output-npy", args->output_npy,
                  "Write each fetched tensor to DIR/out<k>_t<trans>.npy")
      ->type_name("DIR");
  cmd->add_option("--fetch", args->fetch,
                  "Fetch only these outputs, in this order (indexes from 0, "
                  "comma-separated); outputs not fetched fill up and stop "
                  "their producers after a queue depth of results")
      ->type_name("K,...")
      ->delimiter(',');
  cmd->add_flag("--isolate", args->isolate,
                "Run every UDF from a UDF library in a worker process (one "
                "per device): a crashing UDF fails the run, naming its node, "
                "instead of ending hflow");
  cmd->add_option("--restart", args->restart,
                  "Start a UDF's worker process again when it dies, up to N "
                  "times per worker; the messages it was processing are "
                  "lost (their results are errors, code 564003) and the run "
                  "goes on (default 0: the first death fails the run)")
      ->type_name("N")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([args] {
    int code = RunRun(*args, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace hflow::tools
