// GE's session calls on a bridge session id, shared by ge::Session
// (libge_runner) and ge::dflow::DFlowSession (libdflow_runner): the
// conversion of GE's types to the bridge's views and back.
//
// Thread-safety: as the bridge: any thread.
#ifndef HFLOW_GE_API_RUNNER_RUNNER_OPS_H_
#define HFLOW_GE_API_RUNNER_RUNNER_OPS_H_

#include <map>
#include <string>
#include <vector>

#include "ge/ge_api.h"

namespace ge {
namespace runner {

// GEInitialize's work: the options as the bridge's key-value pairs.
Status Initialize(const std::map<AscendString, AscendString>& options);
uint64_t NewSession(const std::map<AscendString, AscendString>& options);
Status AddGraph(uint64_t sid, uint32_t graph_id, const Graph& graph,
                const std::map<AscendString, AscendString>& options);
Status FeedTensors(uint64_t sid, uint32_t graph_id,
                   const std::vector<uint32_t>& indexes,
                   const std::vector<Tensor>& inputs, const DataFlowInfo& info,
                   int32_t timeout);
Status FeedMsgs(uint64_t sid, uint32_t graph_id,
                const std::vector<uint32_t>& indexes,
                const std::vector<FlowMsgPtr>& inputs, int32_t timeout);
Status FeedRaw(uint64_t sid, uint32_t graph_id, const std::vector<RawData>& raw,
               uint32_t index, const DataFlowInfo& info, int32_t timeout);
Status FetchTensors(uint64_t sid, uint32_t graph_id,
                    const std::vector<uint32_t>& indexes,
                    std::vector<Tensor>& outputs, DataFlowInfo& info,
                    int32_t timeout);
Status FetchMsgs(uint64_t sid, uint32_t graph_id,
                 const std::vector<uint32_t>& indexes,
                 std::vector<FlowMsgPtr>& outputs, int32_t timeout);

// A plain ge::Graph (a model graph) as a one-model-node graph
// (run_graph.cc), and its runs.
Status AddModelGraph(uint64_t sid, uint32_t graph_id, const Graph& graph,
                     const std::map<AscendString, AscendString>& options);
void ForgetModelGraph(uint64_t sid, uint32_t graph_id);
void ForgetSession(uint64_t sid);
// Waits until every RunGraphAsync posted so far has called back.
void DrainAsyncRuns();
Status RunGraph(uint64_t sid, uint32_t graph_id,
                const std::vector<Tensor>& inputs,
                std::vector<Tensor>& outputs);
Status RunGraphAsync(uint64_t sid, uint32_t graph_id,
                     const std::vector<Tensor>& inputs,
                     RunAsyncCallback callback);

// GE's parsers: `model_file` parsed by the model library into `graph` (a
// graph of ai.onnx ops over Data and Const ops). GRAPH_FAILED with the
// reason logged (and kept for GEGetErrorMsg) naming `call` and the file.
graphStatus ParseModel(const char* call, const char* framework,
                       const char* model_file,
                       const std::map<AscendString, AscendString>& params,
                       Graph& graph);

std::map<std::string, std::string> ToStd(
    const std::map<AscendString, AscendString>& options);

}  // namespace runner
}  // namespace ge

#endif  // HFLOW_GE_API_RUNNER_RUNNER_OPS_H_
