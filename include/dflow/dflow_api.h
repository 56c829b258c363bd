// GE's dflow front end (ge::dflow): DFlowInitialize/DFlowFinalize and
// DFlowSession, which takes a FlowGraph directly. The same engine and state
// as ge/ge_api.h: a graph added through either is one hflow graph.
//
// Errors, thread-safety and context transparency: as ge/ge_api.h.
#ifndef HFLOW_GE_DFLOW_DFLOW_API_H_
#define HFLOW_GE_DFLOW_DFLOW_API_H_

#include <map>
#include <memory>
#include <vector>

#include "flow_graph/data_flow.h"
#include "ge/ge_api_error_codes.h"
#include "ge/ge_data_flow_api.h"

namespace ge {
class DFlowSessionImpl;
namespace dflow {
GE_FUNC_VISIBILITY Status
DFlowInitialize(const std::map<AscendString, AscendString>& options);
GE_FUNC_VISIBILITY Status DFlowFinalize();

class GE_FUNC_VISIBILITY DFlowSession {
 public:
  explicit DFlowSession(const std::map<AscendString, AscendString>& options);
  ~DFlowSession();

  Status AddGraph(uint32_t graph_id, const FlowGraph& graph,
                  const std::map<AscendString, AscendString>& options = {});
  Status RemoveGraph(uint32_t graph_id);
  Status BuildGraph(uint32_t graph_id, const std::vector<Tensor>& inputs);
  uint64_t GetSessionId() const;
  Status FeedDataFlowGraph(uint32_t graph_id, const std::vector<Tensor>& inputs,
                           const DataFlowInfo& info, int32_t timeout);
  Status FeedDataFlowGraph(uint32_t graph_id,
                           const std::vector<uint32_t>& indexes,
                           const std::vector<Tensor>& inputs,
                           const DataFlowInfo& info, int32_t timeout);
  Status FeedDataFlowGraph(uint32_t graph_id,
                           const std::vector<FlowMsgPtr>& inputs,
                           int32_t timeout);
  Status FeedDataFlowGraph(uint32_t graph_id,
                           const std::vector<uint32_t>& indexes,
                           const std::vector<FlowMsgPtr>& inputs,
                           int32_t timeout);
  Status FeedRawData(uint32_t graph_id,
                     const std::vector<RawData>& raw_data_list, uint32_t index,
                     const DataFlowInfo& info, int32_t timeout);
  Status FetchDataFlowGraph(uint32_t graph_id, std::vector<FlowMsgPtr>& outputs,
                            int32_t timeout);
  Status FetchDataFlowGraph(uint32_t graph_id, std::vector<Tensor>& outputs,
                            DataFlowInfo& info, int32_t timeout);
  Status FetchDataFlowGraph(uint32_t graph_id,
                            const std::vector<uint32_t>& indexes,
                            std::vector<Tensor>& outputs, DataFlowInfo& info,
                            int32_t timeout);
  Status FetchDataFlowGraph(uint32_t graph_id,
                            const std::vector<uint32_t>& indexes,
                            std::vector<FlowMsgPtr>& outputs, int32_t timeout);

 private:
  std::shared_ptr<DFlowSessionImpl> dflow_session_impl_;
};
}  // namespace dflow
}  // namespace ge

#endif  // HFLOW_GE_DFLOW_DFLOW_API_H_
