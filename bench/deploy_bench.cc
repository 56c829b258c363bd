// Deployment parallelism: deploy + undeploy of 32 UDF instances on 4
// devices with a pool of 8, the sim modelling a model-load latency
// (kLoadMs per ModelLoad call), next to the ideal: 8 plain threads
// sleeping out the same 32 loads (ceil(32 / 8) * kLoadMs), measured in the
// same run. Ratio = hflow / ideal (aim <= 1.5).
#include <benchmark/benchmark.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "deploy/deployer.h"
#include "deploy/graph_def.h"
#include "deploy/planner.h"
#include "rt/sim/sim_runtime.h"
#include "services/exchange_service.h"

namespace {

constexpr int kInstances = 32;
constexpr int kPool = 8;
constexpr int kLoadMs = 10;

hflow::deploy::GraphDef WideGraph() {
  nlohmann::json g;
  g["name"] = "wide";
  g["inputs"] = {"a"};
  for (int i = 0; i < kInstances; ++i) {
    g["nodes"].push_back({{"name", "n" + std::to_string(i)},
                          {"inputs", {"a"}},
                          {"outputs", 1},
                          {"function", "_BuiltIn_Identity"}});
    g["outputs"].push_back("n" + std::to_string(i) + ":0");
  }
  hflow::deploy::GraphDef def;
  (void)hflow::deploy::ParseGraphJson(g.dump(), "wide.json", ".", &def);
  return def;
}

void BM_Deploy32(benchmark::State& state) {
  hflow::rt::SimOptions opts;
  opts.cluster = hflow::MakeLocalCluster({2, 3, 4, 5});
  auto sim = std::make_shared<hflow::rt::SimRuntime>(opts);
  sim->SetOpLatency(hflow::rt::Op::kModelLoad,
                    std::chrono::milliseconds(kLoadMs));
  hflow::services::ExchangeService svc(sim.get());
  hflow::deploy::Plan plan;
  (void)hflow::deploy::MakePlan(WideGraph(), opts.cluster, {}, {}, &plan);
  hflow::deploy::DeployOptions dopts;
  dopts.pool_threads = kPool;
  for (auto _ : state) {
    std::unique_ptr<hflow::deploy::Deployment> d;
    hflow::Status s = hflow::deploy::Deploy(plan, &svc, dopts, &d);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    if (d) (void)d->Undeploy();
  }
}
BENCHMARK(BM_Deploy32)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Deploy32Ideal(benchmark::State& state) {
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kPool; ++t) {
      threads.emplace_back([] {
        for (int i = 0; i < kInstances / kPool; ++i) {
          std::this_thread::sleep_for(std::chrono::milliseconds(kLoadMs));
        }
      });
    }
    for (auto& t : threads) t.join();
  }
}
BENCHMARK(BM_Deploy32Ideal)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
