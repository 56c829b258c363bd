// ge::dflow::DFlowInitialize/DFlowFinalize and DFlowSession
// (dflow/dflow_api.h): the same calls as ge::Session, on the same state.
// libdflow_runner.so (old string ABI), linking libge_runner.so.
//
// Thread-safety: as ge::Session.
#include "dflow/dflow_api.h"
#include "ge/ge_api.h"
#include "ge_api/runner/bridge.h"
#include "ge_api/runner/runner_ops.h"

namespace ge {
namespace gb = hflow::gebridge;

class DFlowSessionImpl {
 public:
  explicit DFlowSessionImpl(const std::map<AscendString, AscendString>& o)
      : id(runner::NewSession(o)) {}
  ~DFlowSessionImpl() { gb::DestroySession(id); }
  uint64_t id;
};

namespace dflow {
Status DFlowInitialize(const std::map<AscendString, AscendString>& options) {
  return GEInitialize(options);
}
Status DFlowFinalize() { return GEFinalize(); }

DFlowSession::DFlowSession(const std::map<AscendString, AscendString>& options)
    : dflow_session_impl_(std::make_shared<DFlowSessionImpl>(options)) {}
DFlowSession::~DFlowSession() = default;

Status DFlowSession::AddGraph(
    uint32_t graph_id, const FlowGraph& graph,
    const std::map<AscendString, AscendString>& options) {
  return runner::AddGraph(dflow_session_impl_->id, graph_id, graph.ToGeGraph(),
                          options);
}
Status DFlowSession::RemoveGraph(uint32_t graph_id) {
  return gb::RemoveGraph(dflow_session_impl_->id, graph_id);
}
Status DFlowSession::BuildGraph(uint32_t graph_id, const std::vector<Tensor>&) {
  return gb::BuildGraph(dflow_session_impl_->id, graph_id);
}
uint64_t DFlowSession::GetSessionId() const { return dflow_session_impl_->id; }
Status DFlowSession::FeedDataFlowGraph(uint32_t graph_id,
                                       const std::vector<Tensor>& inputs,
                                       const DataFlowInfo& info,
                                       int32_t timeout) {
  return runner::FeedTensors(dflow_session_impl_->id, graph_id, {}, inputs,
                             info, timeout);
}
Status DFlowSession::FeedDataFlowGraph(uint32_t graph_id,
                                       const std::vector<uint32_t>& indexes,
                                       const std::vector<Tensor>& inputs,
                                       const DataFlowInfo& info,
                                       int32_t timeout) {
  return runner::FeedTensors(dflow_session_impl_->id, graph_id, indexes, inputs,
                             info, timeout);
}
Status DFlowSession::FeedDataFlowGraph(uint32_t graph_id,
                                       const std::vector<FlowMsgPtr>& inputs,
                                       int32_t timeout) {
  return runner::FeedMsgs(dflow_session_impl_->id, graph_id, {}, inputs,
                          timeout);
}
Status DFlowSession::FeedDataFlowGraph(uint32_t graph_id,
                                       const std::vector<uint32_t>& indexes,
                                       const std::vector<FlowMsgPtr>& inputs,
                                       int32_t timeout) {
  return runner::FeedMsgs(dflow_session_impl_->id, graph_id, indexes, inputs,
                          timeout);
}
Status DFlowSession::FeedRawData(uint32_t graph_id,
                                 const std::vector<RawData>& raw_data_list,
                                 uint32_t index, const DataFlowInfo& info,
                                 int32_t timeout) {
  return runner::FeedRaw(dflow_session_impl_->id, graph_id, raw_data_list,
                         index, info, timeout);
}
Status DFlowSession::FetchDataFlowGraph(uint32_t graph_id,
                                        std::vector<FlowMsgPtr>& outputs,
                                        int32_t timeout) {
  return runner::FetchMsgs(dflow_session_impl_->id, graph_id, {}, outputs,
                           timeout);
}
Status DFlowSession::FetchDataFlowGraph(uint32_t graph_id,
                                        std::vector<Tensor>& outputs,
                                        DataFlowInfo& info, int32_t timeout) {
  return runner::FetchTensors(dflow_session_impl_->id, graph_id, {}, outputs,
                              info, timeout);
}
Status DFlowSession::FetchDataFlowGraph(uint32_t graph_id,
                                        const std::vector<uint32_t>& indexes,
                                        std::vector<Tensor>& outputs,
                                        DataFlowInfo& info, int32_t timeout) {
  return runner::FetchTensors(dflow_session_impl_->id, graph_id, indexes,
                              outputs, info, timeout);
}
Status DFlowSession::FetchDataFlowGraph(uint32_t graph_id,
                                        const std::vector<uint32_t>& indexes,
                                        std::vector<FlowMsgPtr>& outputs,
                                        int32_t timeout) {
  return runner::FetchMsgs(dflow_session_impl_->id, graph_id, indexes, outputs,
                           timeout);
}
}  // namespace dflow
}  // namespace ge
