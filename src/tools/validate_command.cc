// `hflow validate` (see validate_command.h).
//
// Order: the static checks first (cluster, graph file, placement, plan,
// memory, functions; each failure exits 2), then the plan is printed, then
// (unless --no-init) the graph is deployed on the simulated cluster, which
// runs every instance's Init as `hflow run` would, and removed again; a
// failing or stuck Init exits 1 naming the node.
//
// Thread-safety: main thread only (it owns Initialize/Finalize).
#include "tools/validate_command.h"

#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>

#include "deploy/deployer.h"
#include "deploy/graph_def.h"
#include "deploy/planner.h"
#include "hflow/session.h"
#include "tools/exit_watchdog.h"
#include "tools/plan_check.h"

namespace hflow::tools {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;
constexpr int32_t kTeardownMs = 2000;
constexpr int64_t kGraceMs = 3000;

Status StaticChecks(const ValidateArgs& args, Options* options,
                    deploy::Plan* plan) {
  HFLOW_RETURN_IF_ERROR(ResolveCluster(args.cluster, &options->cluster));
  HFLOW_RETURN_IF_ERROR(ApplyMemoryOptions(args.cluster, options));
  deploy::GraphDef graph;
  HFLOW_RETURN_IF_ERROR(deploy::LoadGraphFile(args.graph, &graph));
  HFLOW_RETURN_IF_ERROR(CheckAndPlan(graph, args.deploy, *options, plan));
  std::map<std::string, std::vector<flow_func::FuncDesc>> funcs;
  return deploy::ResolveFunctions(plan->graph, flow_func::UdfBuildOptions{},
                                  &funcs);
}

// Deploys the graph (every Init runs, bounded by --timeout) and removes it.
Status RunInits(const ValidateArgs& args, Options options) {
  options.init_timeout_ms = args.timeout_ms;
  options.stop_timeout_ms = args.timeout_ms < 0
                                ? kTeardownMs
                                : std::min(args.timeout_ms, kTeardownMs);
  HFLOW_RETURN_IF_ERROR(Initialize(options).WithContext("Initialize: "));
  Status s;
  {
    Session session;
    s = session.AddGraphFile(1, args.graph, args.deploy);
    if (s.ok()) s = session.BuildGraph(1).WithContext("running Init: ");
    Status rm = session.RemoveGraph(1);
    // A node stuck in Init cannot be joined (Note [Bounded exit] of run).
    if (rm.IsTimeout()) {
      std::cerr << "hflow validate: " << (s.ok() ? rm : s).ToString() << "\n";
      FlushAndExit(kExitFailed);
    }
  }
  Status fin = Finalize();
  return s.ok() ? fin.WithContext("Finalize: ") : s;
}

}  // namespace

int RunValidate(const ValidateArgs& args, std::ostream& out,
                std::ostream& err) {
  auto fail = [&err](const Status& s, int code) {
    err << "hflow validate: " << s.ToString() << "\n";
    return code;
  };
  Options options;
  deploy::Plan plan;
  Status s = StaticChecks(args, &options, &plan);
  if (!s.ok()) return fail(s, kExitUsage);
  out << plan.ToText();
  out.flush();
  if (!args.dot.empty()) {
    std::ofstream dot(args.dot);
    dot << plan.ToDot();
    dot.close();
    if (!dot) {
      return fail(Status::NotFound(args.dot + ": cannot write the DOT file"),
                  kExitUsage);
    }
    err << "hflow validate: wrote " << args.dot << "\n";
  }
  if (args.no_init) return 0;
  ExitWatchdog watchdog;
  if (args.timeout_ms >= 0) {
    // Init is bounded by the core; this catches a teardown that is not.
    watchdog.Arm(int64_t{args.timeout_ms} + kTeardownMs + kGraceMs,
                 "hflow validate: deploying and removing the graph did not "
                 "finish within --timeout plus " +
                     std::to_string(kTeardownMs + kGraceMs) +
                     " ms (a UDF's Init is stuck); exiting");
  }
  s = RunInits(args, options);
  watchdog.Disarm();
  if (!s.ok()) return fail(s, kExitFailed);
  err << "hflow validate: " << plan.graph.name << ": ok ("
      << plan.instances.size() << " instances ran Init)\n";
  return 0;
}

void AddValidateCommand(CLI::App* app) {
  CLI::App* cmd = app->add_subcommand(
      "validate",
      "Check a graph, its configs, placement, memory and Init; print the plan");
  auto args = std::make_shared<ValidateArgs>();
  cmd->add_option("GRAPH", args->graph, "Graph file (JSON)")->required();
  AddClusterOptions(cmd, &args->cluster);
  cmd->add_option("--deploy", args->deploy,
                  "Deploy info file (overrides the graph's)")
      ->type_name("FILE");
  cmd->add_option("--dot", args->dot, "Write the plan as Graphviz DOT to FILE")
      ->type_name("FILE");
  cmd->add_option("--timeout", args->timeout_ms,
                  "Milliseconds each UDF's Init may take (-1: forever)")
      ->type_name("MS")
      ->check(CLI::Range(-1, std::numeric_limits<int32_t>::max()));
  cmd->add_flag("--no-init", args->no_init,
                "Skip deploying the graph (no UDF Init runs)");
  cmd->callback([args] {
    int code = RunValidate(*args, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace hflow::tools
