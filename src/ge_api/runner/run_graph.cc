// A plain ge::Graph (a model graph, not a DataFlow graph) in a GE session:
// Session::AddGraph writes it as a GE graph file and adds a DataFlow graph
// of one model node running it (its Data ops the graph's inputs, its
// outputs the graph's); RunGraph feeds the inputs and fetches the outputs
// of one run, RunGraphAsync does the same on the session's async thread
// and calls back. Part of libge_runner.so (old string ABI).
//
//   Data 0..n-1 ── node "<graph name>" (GraphPp: the graph) ── outputs
//
// Thread-safety: any thread. Runs of one graph are serialized (a feed and
// its fetch pair up); async runs go in order, one at a time, on one
// thread ("ge-run-async") that names itself and makes only bridge calls,
// which bind and restore device contexts themselves. A session's
// destructor and GEFinalize wait for the async runs posted before them.
#include <pthread.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "ge_api/flow_graph/flow_graph_internal.h"
#include "ge_api/runner/bridge.h"
#include "ge_api/runner/runner_internal.h"
#include "ge_api/runner/runner_ops.h"

namespace ge {
namespace runner {
namespace gb = hflow::gebridge;
using Json = nlohmann::json;
namespace {

// The model graphs added to sessions, each with the lock of its runs.
class PlainGraphs {
 public:
  static PlainGraphs& Get() {
    static PlainGraphs* g = new PlainGraphs;  // used until exit
    return *g;
  }
  void Add(uint64_t sid, uint32_t gid) {
    std::lock_guard<std::mutex> lock(mu_);
    graphs_[{sid, gid}] = std::make_shared<std::mutex>();
  }
  void Remove(uint64_t sid, uint32_t gid) {
    std::lock_guard<std::mutex> lock(mu_);
    graphs_.erase({sid, gid});
  }
  void RemoveSession(uint64_t sid) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = graphs_.begin(); it != graphs_.end();) {
      it = it->first.first == sid ? graphs_.erase(it) : std::next(it);
    }
  }
  std::shared_ptr<std::mutex> Find(uint64_t sid, uint32_t gid) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = graphs_.find({sid, gid});
    return it == graphs_.end() ? nullptr : it->second;
  }

 private:
  std::mutex mu_;
  std::map<std::pair<uint64_t, uint32_t>, std::shared_ptr<std::mutex>> graphs_;
};

// Input and output counts of a model graph: its SetInputs (else every Data
// op) and its SetOutputs (an op without indexes gives all its outputs).
void Arity(const GraphImpl& g, const Graph& graph, size_t* in, size_t* out) {
  *in = g.inputs.size();
  if (*in == 0) {
    std::vector<Operator> data;
    graph.FindOpByType("Data", data);
    *in = data.size();
  }
  *out = 0;
  for (const auto& o : g.outputs) {
    const auto& impl = OperatorAccess::Impl(o.first);
    const size_t all =
        impl ? std::max<size_t>(impl->output_names.size(), 1) : 1;
    *out += o.second.empty() ? all : o.second.size();
  }
}

thread_local bool t_async_thread = false;

// Async runs, in order, on one named thread started on first use.
class AsyncRunner {
 public:
  static AsyncRunner& Get() {
    static AsyncRunner* r = new AsyncRunner;  // its thread runs until exit
    return *r;
  }
  void Post(std::function<void()> run) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!started_) {
      std::thread([this] { Loop(); }).detach();
      started_ = true;
    }
    queue_.push_back(std::move(run));
    cv_.notify_all();
  }
  // Returns once every posted run has called back (at once on the async
  // thread itself: a callback may destroy its session).
  void Drain() {
    if (t_async_thread) return;
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
  }

 private:
  void Loop() {
    pthread_setname_np(pthread_self(), "ge-run-async");
    t_async_thread = true;
    for (;;) {
      std::function<void()> run;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return !queue_.empty(); });
        run = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
      }
      run();
      std::lock_guard<std::mutex> lock(mu_);
      busy_ = false;
      cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool started_ = false;
  bool busy_ = false;  // a run is in progress
};

}  // namespace

Status AddModelGraph(uint64_t sid, uint32_t graph_id, const Graph& graph,
                     const std::map<AscendString, AscendString>& options) {
  const std::string call = Call("AddGraph", graph_id);
  const auto& impl = GraphAccess::Impl(graph);
  std::string bytes, error, path;
  if (!impl || !GraphToBytes(graph, &bytes, &error)) {
    return gb::Fail(call.c_str(), ACL_ERROR_GE_PARAM_INVALID,
                    ("the graph: " + (impl ? error : "it is empty")).c_str());
  }
  const std::string name = impl->name.empty() ? "graph" : impl->name;
  if (!dflow::WriteGraphFile(bytes, name, &path, &error)) {
    return gb::Fail(call.c_str(), ACL_ERROR_GE_PARAM_INVALID, error.c_str());
  }
  size_t in = 0, out = 0;
  Arity(*impl, graph, &in, &out);
  Json inputs = Json::array();
  for (size_t i = 0; i < in; ++i) inputs.push_back("x" + std::to_string(i));
  Json outputs = Json::array();
  for (size_t i = 0; i < out; ++i) {
    outputs.push_back(name + ":" + std::to_string(i));
  }
  Json node = {{"name", name},
               {"inputs", inputs},
               {"outputs", out},
               {"model_pp",
                {{"name", name},
                 {"type", "GraphPp"},
                 {"graph_file", path},
                 {"framework", "ge_graph"}}}};
  const Json doc = {{"name", name},
                    {"inputs", inputs},
                    {"nodes", Json::array({node})},
                    {"outputs", outputs}};
  const std::string json =
      doc.dump(-1, ' ', false, Json::error_handler_t::replace);
  const std::string source = "Graph '" + name + "'";
  KeyValues kv(options);
  const Status s = gb::AddGraph(sid, graph_id, json.c_str(), source.c_str(),
                                kv.kv.data(), kv.kv.size());
  if (s == SUCCESS) PlainGraphs::Get().Add(sid, graph_id);
  return s;
}

void ForgetModelGraph(uint64_t sid, uint32_t graph_id) {
  PlainGraphs::Get().Remove(sid, graph_id);
}

void ForgetSession(uint64_t sid) { PlainGraphs::Get().RemoveSession(sid); }

void DrainAsyncRuns() { AsyncRunner::Get().Drain(); }

Status RunGraph(uint64_t sid, uint32_t graph_id,
                const std::vector<Tensor>& inputs,
                std::vector<Tensor>& outputs) {
  std::shared_ptr<std::mutex> lock = PlainGraphs::Get().Find(sid, graph_id);
  if (!lock) {
    return gb::Fail(Call("RunGraph", graph_id).c_str(),
                    ACL_ERROR_GE_PARAM_INVALID,
                    "no model graph of that id in the session: RunGraph "
                    "runs a ge::Graph given to AddGraph; a DataFlow graph "
                    "runs with FeedDataFlowGraph / FetchDataFlowGraph");
  }
  std::lock_guard<std::mutex> one_run(*lock);
  DataFlowInfo info;
  Status s = FeedTensors(sid, graph_id, {}, inputs, info, -1);
  if (s != SUCCESS) return s;
  DataFlowInfo got;
  return FetchTensors(sid, graph_id, {}, outputs, got, -1);
}

Status RunGraphAsync(uint64_t sid, uint32_t graph_id,
                     const std::vector<Tensor>& inputs,
                     RunAsyncCallback callback) {
  if (!PlainGraphs::Get().Find(sid, graph_id)) {
    std::vector<Tensor> none;
    return RunGraph(sid, graph_id, inputs, none);  // reports the error
  }
  AsyncRunner::Get().Post([sid, graph_id, inputs, callback] {
    std::vector<Tensor> outputs;
    const Status s = RunGraph(sid, graph_id, inputs, outputs);
    if (!callback) return;
    // The callback is the user's code on hflow's thread: checked for
    // context leaks as a UDF's Proc is.
    struct Call {
      const RunAsyncCallback* callback;
      Status s;
      std::vector<Tensor>* outputs;
    } call{&callback, s, &outputs};
    const std::string what =
        "GE's RunGraphAsync callback (graph " + std::to_string(graph_id) + ")";
    hflow::gebridge::RunUserCallback(
        what.c_str(),
        [](void* arg) {
          auto* c = static_cast<Call*>(arg);
          (*c->callback)(c->s, *c->outputs);
        },
        &call);
  });
  return SUCCESS;
}

}  // namespace runner
}  // namespace ge
