// ResolveFunctions (deployer.h): the host-side checks that turn a graph's
// nodes into the functions their instances run: compile configs loaded,
// UDF libraries built and loaded, names registered, arity matched, and a
// host-registered function's recipe for a worker found.
//
// Thread-safety: reentrant (the UDF library registry has its own lock).
#include "deploy/deployer.h"
#include "flow_func/compile_config.h"
#include "flow_func/udf_library.h"

namespace hflow {
namespace deploy {

namespace {

// A function registered in the process (or by exactly one loaded library),
// with its library found: a node's `function` without a compile config, or
// each entry of its "func_list". `what` says where the name came from and
// `hint` what to do when it is not registered.
Status AddRegistered(flow_func::FuncDesc f, const std::string& where,
                     const std::string& what, const std::string& hint,
                     std::vector<flow_func::FuncDesc>* out) {
  if (!flow_func::IsFunctionRegistered(f.name)) {
    return Status::NotFound(where + "function '" + f.name + "'" + what +
                            " is not registered; " + hint);
  }
  HFLOW_RETURN_IF_ERROR(
      flow_func::FindFunctionLibrary(f.name, &f.library).WithContext(where));
  if (f.library.empty()) (void)flow_func::FindRemoteRecipe(f.name, &f.remote);
  out->push_back(std::move(f));
  return Status::OK();
}

}  // namespace

Status ResolveFunctions(
    const GraphDef& graph, const flow_func::UdfBuildOptions& build,
    std::map<std::string, std::vector<flow_func::FuncDesc>>* out,
    std::vector<std::shared_ptr<void>>* holds) {
  HFLOW_RETURN_IF_ERROR(CheckBuiltinArity(graph));
  for (const NodeDef& n : graph.nodes) {
    const std::string where = graph.source + ": node '" + n.name + "': ";
    std::vector<flow_func::FuncDesc> funcs;
    if (!n.model.graph_file.empty()) {
      flow_func::FuncDesc f;
      std::shared_ptr<void> hold;
      HFLOW_RETURN_IF_ERROR(
          ResolveModelNode(graph, n, &f, holds ? &hold : nullptr));
      if (holds) holds->push_back(std::move(hold));
      funcs.push_back(std::move(f));
    } else if (!n.pp.compile_config.empty()) {
      flow_func::CompileConfig cfg;
      HFLOW_RETURN_IF_ERROR(
          flow_func::LoadCompileConfigFile(n.pp.compile_config, &cfg)
              .WithContext(where));
      std::string library;
      HFLOW_RETURN_IF_ERROR(flow_func::LoadUdfFromConfig(cfg, build, &library)
                                .WithContext(where));
      for (auto f : cfg.funcs) {
        f.library = library;  // Resolved in its own library first.
        f.heavy_load = cfg.heavy_load;
        if (n.pp.function.empty() || f.name == n.pp.function)
          funcs.push_back(f);
      }
      if (funcs.empty()) {
        return Status::NotFound(where + "function '" + n.pp.function +
                                "' is not in the func_list of " + cfg.source);
      }
      if (cfg.input_num >= 0 && uint32_t(cfg.input_num) != PpInputs(n)) {
        return Status::InvalidArgument(where + "the compile config declares " +
                                       std::to_string(cfg.input_num) +
                                       " inputs but the node feeds " +
                                       std::to_string(PpInputs(n)));
      }
      if (cfg.output_num >= 0 && uint32_t(cfg.output_num) != PpOutputs(n)) {
        return Status::InvalidArgument(where + "the compile config declares " +
                                       std::to_string(cfg.output_num) +
                                       " outputs but the node has " +
                                       std::to_string(PpOutputs(n)));
      }
    } else if (!n.pp.funcs.empty()) {
      for (const flow_func::FuncDesc& f : n.pp.funcs) {
        HFLOW_RETURN_IF_ERROR(
            AddRegistered(f, where, " of its func_list",
                          "register it before building the graph", &funcs));
      }
    } else if (n.pp.function.empty()) {
      return Status::InvalidArgument(where +
                                     "needs a function or a compile_config");
    } else {
      flow_func::FuncDesc f;
      f.name = n.pp.function;
      HFLOW_RETURN_IF_ERROR(AddRegistered(
          std::move(f), where, "",
          "give the node a compile_config or use a built-in "
          "(_BuiltIn_Identity, _BuiltIn_Add, _BuiltIn_CountBatch, "
          "_BuiltIn_TimeBatch)",
          &funcs));
    }
    HFLOW_RETURN_IF_ERROR(ResolveInvokedModels(graph, n, holds));
    (*out)[n.name] = std::move(funcs);
  }
  return Status::OK();
}

}  // namespace deploy
}  // namespace hflow
