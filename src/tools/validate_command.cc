// `hflow validate` (see validate_command.h).
#include "tools/validate_command.h"

#include <fstream>
#include <iostream>
#include <memory>

#include "deploy/deployer.h"
#include "deploy/graph_def.h"
#include "deploy/planner.h"

namespace hflow::tools {

int RunValidate(const ValidateArgs& args, std::ostream& out,
                std::ostream& err) {
  auto fail = [&err](const Status& s) {
    err << "hflow validate: " << s.ToString() << "\n";
    return 1;
  };
  ClusterConfig cluster;
  Status s = ResolveCluster(args.cluster, &cluster);
  if (!s.ok()) return fail(s);
  deploy::GraphDef graph;
  s = deploy::LoadGraphFile(args.graph, &graph);
  if (!s.ok()) return fail(s);
  s = deploy::ExpandInputAttrs(&graph);
  if (!s.ok()) return fail(s);
  deploy::DeployInfo info;
  s = deploy::DeployInfoForGraph(graph, args.deploy, cluster, &info);
  if (!s.ok()) return fail(s);
  std::map<std::string, std::vector<flow_func::FuncDesc>> funcs;
  s = deploy::ResolveFunctions(graph, flow_func::UdfBuildOptions{}, &funcs);
  if (!s.ok()) return fail(s);
  deploy::Plan plan;
  s = deploy::MakePlan(graph, cluster, info, deploy::PlanOptions{}, &plan);
  if (!s.ok()) return fail(s);
  out << plan.ToText();
  if (!args.dot.empty()) {
    std::ofstream dot(args.dot);
    if (!dot) {
      return fail(Status::NotFound(args.dot + ": cannot write the DOT file"));
    }
    dot << plan.ToDot();
    err << "hflow validate: wrote " << args.dot << "\n";
  }
  return 0;
}

void AddValidateCommand(CLI::App* app) {
  CLI::App* cmd = app->add_subcommand(
      "validate", "Check a graph, its configs and placement; print the plan");
  auto args = std::make_shared<ValidateArgs>();
  cmd->add_option("GRAPH", args->graph, "Graph file (JSON)")->required();
  AddClusterOptions(cmd, &args->cluster);
  cmd->add_option("--deploy", args->deploy, "Deploy info file (overrides the graph's)");
  cmd->add_option("--dot", args->dot, "Write the plan as Graphviz DOT to FILE");
  cmd->callback([args] {
    int code = RunValidate(*args, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace hflow::tools
