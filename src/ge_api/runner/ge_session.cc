// GEInitialize, GEFinalize and ge::Session (ge/ge_api.h). Part of
// libge_runner.so (old string ABI); every call goes through the bridge,
// which guards the caller's device context.
//
// Thread-safety: as GE's (ge_api.h).
#include "ge/ge_api.h"
#include "ge_api/runner/runner_internal.h"
#include "ge_api/runner/runner_ops.h"

namespace ge {
namespace gb = hflow::gebridge;

namespace {
std::map<AscendString, AscendString> ToAscend(
    const std::map<std::string, std::string>& options) {
  std::map<AscendString, AscendString> out;
  for (const auto& o : options) {
    out[AscendString(o.first.c_str(), o.first.size())] =
        AscendString(o.second.c_str(), o.second.size());
  }
  return out;
}

}  // namespace

Status GEInitialize(const std::map<std::string, std::string>& options) {
  return runner::Initialize(ToAscend(options));
}
Status GEInitialize(const std::map<AscendString, AscendString>& options) {
  return runner::Initialize(options);
}
Status GEFinalize() {
  runner::DrainAsyncRuns();  // their callbacks still use the sessions
  return gb::Finalize();
}
std::string GEGetErrorMsg() { return gb::LastError(); }
AscendString GEGetErrorMsgV2() { return AscendString(gb::LastError()); }
std::string GEGetWarningMsg() { return ""; }
AscendString GEGetWarningMsgV2() { return AscendString(""); }

Session::Session(const std::map<std::string, std::string>& options)
    : sessionId_(runner::NewSession(ToAscend(options))) {}
Session::Session(const std::map<AscendString, AscendString>& options)
    : sessionId_(runner::NewSession(options)) {}
Session::~Session() {
  runner::DrainAsyncRuns();
  runner::ForgetSession(sessionId_);
  gb::DestroySession(sessionId_);
}

Status Session::AddGraph(uint32_t graph_id, const Graph& graph) {
  return runner::AddGraph(sessionId_, graph_id, graph, {});
}
Status Session::AddGraph(uint32_t graph_id, const Graph& graph,
                         const std::map<std::string, std::string>& options) {
  return runner::AddGraph(sessionId_, graph_id, graph, ToAscend(options));
}
Status Session::AddGraph(uint32_t graph_id, const Graph& graph,
                         const std::map<AscendString, AscendString>& options) {
  return runner::AddGraph(sessionId_, graph_id, graph, options);
}
// hflow converts the graph when it is added, so a copy is what it keeps
// either way.
Status Session::AddGraphWithCopy(uint32_t graph_id, const Graph& graph) {
  return runner::AddGraph(sessionId_, graph_id, graph, {});
}
Status Session::AddGraphWithCopy(
    uint32_t graph_id, const Graph& graph,
    const std::map<AscendString, AscendString>& options) {
  return runner::AddGraph(sessionId_, graph_id, graph, options);
}
Status Session::RemoveGraph(uint32_t graph_id) {
  runner::ForgetModelGraph(sessionId_, graph_id);
  return gb::RemoveGraph(sessionId_, graph_id);
}
Status Session::BuildGraph(uint32_t graph_id,
                           const std::vector<InputTensorInfo>&) {
  return gb::BuildGraph(sessionId_, graph_id);
}
Status Session::BuildGraph(uint32_t graph_id, const std::vector<Tensor>&) {
  return gb::BuildGraph(sessionId_, graph_id);
}
Status Session::CompileGraph(uint32_t graph_id) {
  return gb::BuildGraph(sessionId_, graph_id);
}
Status Session::RunGraph(uint32_t graph_id, const std::vector<Tensor>& inputs,
                         std::vector<Tensor>& outputs) {
  return runner::RunGraph(sessionId_, graph_id, inputs, outputs);
}
Status Session::RunGraphAsync(uint32_t graph_id,
                              const std::vector<Tensor>& inputs,
                              RunAsyncCallback callback) {
  return runner::RunGraphAsync(sessionId_, graph_id, inputs, callback);
}
bool Session::IsGraphNeedRebuild(uint32_t) { return false; }
uint64_t Session::GetSessionId() const { return sessionId_; }

Status Session::FeedDataFlowGraph(uint32_t graph_id,
                                  const std::vector<Tensor>& inputs,
                                  const DataFlowInfo& info, int32_t timeout) {
  return runner::FeedTensors(sessionId_, graph_id, {}, inputs, info, timeout);
}
Status Session::FeedDataFlowGraph(uint32_t graph_id,
                                  const std::vector<uint32_t>& indexes,
                                  const std::vector<Tensor>& inputs,
                                  const DataFlowInfo& info, int32_t timeout) {
  return runner::FeedTensors(sessionId_, graph_id, indexes, inputs, info,
                             timeout);
}
Status Session::FeedRawData(uint32_t graph_id,
                            const std::vector<RawData>& raw_data_list,
                            const uint32_t index, const DataFlowInfo& info,
                            int32_t timeout) {
  return runner::FeedRaw(sessionId_, graph_id, raw_data_list, index, info,
                         timeout);
}
Status Session::FetchDataFlowGraph(uint32_t graph_id,
                                   std::vector<Tensor>& outputs,
                                   DataFlowInfo& info, int32_t timeout) {
  return runner::FetchTensors(sessionId_, graph_id, {}, outputs, info, timeout);
}
Status Session::FetchDataFlowGraph(uint32_t graph_id,
                                   const std::vector<uint32_t>& indexes,
                                   std::vector<Tensor>& outputs,
                                   DataFlowInfo& info, int32_t timeout) {
  return runner::FetchTensors(sessionId_, graph_id, indexes, outputs, info,
                              timeout);
}
Status Session::FeedDataFlowGraph(uint32_t graph_id,
                                  const std::vector<FlowMsgPtr>& inputs,
                                  int32_t timeout) {
  return runner::FeedMsgs(sessionId_, graph_id, {}, inputs, timeout);
}
Status Session::FeedDataFlowGraph(uint32_t graph_id,
                                  const std::vector<uint32_t>& indexes,
                                  const std::vector<FlowMsgPtr>& inputs,
                                  int32_t timeout) {
  return runner::FeedMsgs(sessionId_, graph_id, indexes, inputs, timeout);
}
Status Session::FetchDataFlowGraph(uint32_t graph_id,
                                   std::vector<FlowMsgPtr>& outputs,
                                   int32_t timeout) {
  return runner::FetchMsgs(sessionId_, graph_id, {}, outputs, timeout);
}
Status Session::FetchDataFlowGraph(uint32_t graph_id,
                                   const std::vector<uint32_t>& indexes,
                                   std::vector<FlowMsgPtr>& outputs,
                                   int32_t timeout) {
  return runner::FetchMsgs(sessionId_, graph_id, indexes, outputs, timeout);
}

}  // namespace ge
