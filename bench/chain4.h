// The four-stage, one-device chain of row chain4_one_device_64B as a plain
// program's building blocks (chain_instructions.cc, chain_memory.cc): the
// graph (x ─[id]─[id]─[id]─[id]─ out, all on device 2) and a stream that
// keeps a window of messages in flight, as the timed rows do.
//
// Thread-safety: call from one thread.
#ifndef HFLOW_BENCH_CHAIN4_H_
#define HFLOW_BENCH_CHAIN4_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#ifdef HFLOW_HAVE_TBB
#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#endif

#include "hflow/hflow.h"

namespace hflow {
namespace bench {

constexpr int kStages = 4;
constexpr int kWindow = 32;  // messages in flight, as the timed rows

// x ─ n0 ─ n1 ─ … ─ out: `nodes` nodes running `function`, node i on
// devices[i % devices.size()].
// x ─ n0 ─ … ─ out: node i's pp set by `set_pp` (its function or
// compile config), placed at logic device places[i % size] ("0:N:D").
inline FlowGraph ChainAt(const std::string& name, int nodes,
                         const std::function<void(FunctionPp&)>& set_pp,
                         const std::vector<std::string>& places) {
  FlowData x("x", 0);
  std::vector<FlowNode> chain;
  std::string deploy = R"({"deploy_info": [)";
  for (int i = 0; i < nodes; ++i) {
    FunctionPp pp("pp" + std::to_string(i));
    set_pp(pp);
    chain.emplace_back("n" + std::to_string(i), 1, 1);
    if (i == 0) {
      chain.back().SetInput(0, x);
    } else {
      chain.back().SetInput(0, chain[i - 1], 0);
    }
    chain.back().AddPp(pp);
    deploy += std::string(i ? "," : "") + R"({"flow_node_name": "n)" +
              std::to_string(i) + R"(", "logic_device_id": ")" +
              places[i % places.size()] + "\"}";
  }
  FlowGraph g(name);
  g.SetInputs({x}).SetOutputs({chain.back()});
  g.SetDeployInfo(deploy + "]}");
  return g;
}

// This host's devices as logic devices ("0:0:D").
inline std::vector<std::string> LocalPlaces(const std::vector<int>& devices) {
  std::vector<std::string> places;
  for (int d : devices) places.push_back("0:0:" + std::to_string(d));
  return places;
}

inline FlowGraph Chain(const std::string& name, int nodes,
                       const std::string& function,
                       const std::vector<int>& devices) {
  return ChainAt(
      name, nodes, [&](FunctionPp& pp) { pp.SetFunction(function); },
      LocalPlaces(devices));
}

inline FlowGraph Chain4OneDevice() {
  return Chain("chain4", kStages, "_BuiltIn_Identity", {2});
}

// Feeds n 64 B messages to graph `id`, at most kWindow in flight, and
// fetches them all.
inline Status StreamChain(Session& s, uint32_t id, int n) {
  Tensor t;
  t.dtype = DataType::kUint8;
  t.shape = {64};
  t.data.assign(64, 7);
  const std::vector<Tensor> in{t};
  std::vector<Tensor> out;
  FlowInfo info;
  int fed = 0;
  for (int got = 0; got < n; ++got) {
    for (; fed < n && fed - got < kWindow; ++fed) {
      HFLOW_RETURN_IF_ERROR(s.FeedData(id, in, FlowInfo{}, 10000));
    }
    HFLOW_RETURN_IF_ERROR(s.FetchData(id, &out, &info, 10000));
  }
  return Status::OK();
}

// hflow on one device (2) with one executor thread; the caller finalizes.
// `ctxcheck`: Options::ctxcheck ("off" unless a row measures the check).
inline Status InitializeOneDevice(const char* ctxcheck = "off") {
  Options o;
  o.cluster = MakeLocalCluster({2});
  o.exec_threads = 1;
  o.ctxcheck = ctxcheck;
  return Initialize(o);
}

// The chain added and built as graph 1.
inline Status AddChain(Session& s) {
  HFLOW_RETURN_IF_ERROR(s.AddGraph(1, Chain4OneDevice()));
  return s.BuildGraph(1);
}

#ifdef HFLOW_HAVE_TBB
// oneTBB's peer of the chain, shaped as BM_TbbChain4 (flow_bench.cc): four
// serial queueing function_nodes passing a fresh 64 B buffer along, drained
// from a queue_node, with the caller and one worker thread.
class TbbChain4 {
 public:
  using Msg = std::shared_ptr<std::vector<uint8_t>>;

  TbbChain4()
      : one_worker_(tbb::global_control::max_allowed_parallelism, 2),
        out_(g_),
        payload_(64, 7) {
    auto pass = [](Msg m) { return m; };
    for (int i = 0; i < kStages; ++i) {
      nodes_.push_back(std::make_unique<Node>(g_, tbb::flow::serial, pass));
      if (i > 0) tbb::flow::make_edge(*nodes_[i - 1], *nodes_[i]);
    }
    tbb::flow::make_edge(*nodes_.back(), out_);
  }

  // `count` messages, kWindow in flight at a time.
  void Stream(int count) {
    for (int done = 0; done < count;) {
      const int batch = std::min(kWindow, count - done);
      for (int i = 0; i < batch; ++i) {
        nodes_.front()->try_put(
            std::make_shared<std::vector<uint8_t>>(payload_));
      }
      g_.wait_for_all();
      Msg m;
      while (out_.try_get(m)) ++done;
    }
  }

 private:
  using Node = tbb::flow::function_node<Msg, Msg, tbb::flow::queueing>;
  tbb::global_control one_worker_;
  tbb::flow::graph g_;
  std::vector<std::unique_ptr<Node>> nodes_;
  tbb::flow::queue_node<Msg> out_;
  const std::vector<uint8_t> payload_;
};
#endif

}  // namespace bench
}  // namespace hflow

#endif  // HFLOW_BENCH_CHAIN4_H_
