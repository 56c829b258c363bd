// hflow_chain_instructions: the deterministic half of row
// chain4_one_device_64B (docs/performance.md, "Instructions per message").
// Streams N 64 B messages through a chain of four pass-through stages,
// either hflow's (x ─[id]─[id]─[id]─[id]─ out on one device, one executor
// thread) or oneTBB's (four serial queueing function_nodes, the caller and
// one worker thread), after a warm-up of kWarmup messages, and exits.
// scripts/bench_instructions runs it under callgrind for two values of N:
// the difference of the totals over the difference of N is the marginal
// instructions per message, start-up and teardown cancelling out.
//
// Usage: hflow_chain_instructions hflow|tbb MESSAGES
//
// Thread-safety: single-threaded driver; the chain runs on its runtime's
// threads.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#ifdef HFLOW_HAVE_TBB
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#endif

#include "hflow/hflow.h"

namespace {

constexpr int kStages = 4;
constexpr int kWindow = 32;  // messages in flight, as the timed rows
constexpr int kWarmup = 256;

hflow::FlowGraph Chain() {
  hflow::FlowData x("x", 0);
  std::vector<hflow::FlowNode> nodes;
  std::string deploy = R"({"deploy_info": [)";
  for (int i = 0; i < kStages; ++i) {
    hflow::FunctionPp pp("pp" + std::to_string(i));
    pp.SetFunction("_BuiltIn_Identity");
    nodes.emplace_back("n" + std::to_string(i), 1, 1);
    if (i == 0) {
      nodes.back().SetInput(0, x);
    } else {
      nodes.back().SetInput(0, nodes[i - 1], 0);
    }
    nodes.back().AddPp(pp);
    deploy += std::string(i ? "," : "") + R"({"flow_node_name": "n)" +
              std::to_string(i) + R"(", "logic_device_id": "0:0:2"})";
  }
  hflow::FlowGraph g("chain4");
  g.SetInputs({x}).SetOutputs({nodes.back()});
  g.SetDeployInfo(deploy + "]}");
  return g;
}

hflow::Status StreamHflow(hflow::Session& s, int n) {
  hflow::Tensor t;
  t.dtype = hflow::DataType::kUint8;
  t.shape = {64};
  t.data.assign(64, 7);
  const std::vector<hflow::Tensor> in{t};
  std::vector<hflow::Tensor> out;
  hflow::FlowInfo info;
  int fed = 0;
  for (int got = 0; got < n; ++got) {
    for (; fed < n && fed - got < kWindow; ++fed) {
      HFLOW_RETURN_IF_ERROR(s.FeedData(1, in, hflow::FlowInfo{}, 10000));
    }
    HFLOW_RETURN_IF_ERROR(s.FetchData(1, &out, &info, 10000));
  }
  return hflow::Status::OK();
}

int RunHflow(int n) {
  hflow::Options o;
  o.cluster = hflow::MakeLocalCluster({2});
  o.exec_threads = 1;
  hflow::Status st = hflow::Initialize(o);
  {
    hflow::Session s;
    if (st.ok()) st = s.AddGraph(1, Chain());
    if (st.ok()) st = s.BuildGraph(1);
    if (st.ok()) st = StreamHflow(s, kWarmup);
    if (st.ok()) st = StreamHflow(s, n);
  }
  (void)hflow::Finalize();
  if (!st.ok()) {
    std::fprintf(stderr, "hflow_chain_instructions: %s\n",
                 st.ToString().c_str());
    return 1;
  }
  return 0;
}

#ifdef HFLOW_HAVE_TBB
// The same shape as BM_TbbChain4 (flow_bench.cc): a fresh 64 B buffer per
// message, drained from a queue_node, a window in flight at a time.
int RunTbb(int n) {
  tbb::global_control one_worker(
      tbb::global_control::max_allowed_parallelism, 2);
  using Msg = std::shared_ptr<std::vector<uint8_t>>;
  using Node = tbb::flow::function_node<Msg, Msg, tbb::flow::queueing>;
  tbb::flow::graph g;
  auto pass = [](Msg m) { return m; };
  std::vector<std::unique_ptr<Node>> nodes;
  for (int i = 0; i < kStages; ++i) {
    nodes.push_back(std::make_unique<Node>(g, tbb::flow::serial, pass));
    if (i > 0) tbb::flow::make_edge(*nodes[i - 1], *nodes[i]);
  }
  tbb::flow::queue_node<Msg> out(g);
  tbb::flow::make_edge(*nodes.back(), out);
  const std::vector<uint8_t> payload(64, 7);
  auto stream = [&](int count) {
    for (int done = 0; done < count;) {
      const int batch = std::min(kWindow, count - done);
      for (int i = 0; i < batch; ++i) {
        nodes.front()->try_put(std::make_shared<std::vector<uint8_t>>(payload));
      }
      g.wait_for_all();
      Msg m;
      while (out.try_get(m)) ++done;
    }
  };
  stream(kWarmup);
  stream(n);
  return 0;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  const int n = argc == 3 ? std::atoi(argv[2]) : 0;
  const std::string which = argc == 3 ? argv[1] : "";
  if (n <= 0 || (which != "hflow" && which != "tbb")) {
    std::fprintf(stderr,
                 "usage: hflow_chain_instructions hflow|tbb MESSAGES (> 0)\n");
    return 2;
  }
  if (which == "hflow") return RunHflow(n);
#ifdef HFLOW_HAVE_TBB
  return RunTbb(n);
#else
  std::fprintf(stderr,
               "hflow_chain_instructions: built without oneTBB; only "
               "'hflow' is available\n");
  return 3;
#endif
}
