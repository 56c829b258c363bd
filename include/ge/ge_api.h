// GE's host API for DataFlow graphs, on hflow: GEInitialize/GEFinalize and
// ge::Session (AddGraph, BuildGraph, FeedDataFlowGraph, FetchDataFlowGraph,
// FeedRawData, RemoveGraph), with GE's option keys, codes and behaviour
// (build on first feed, indexed feeds and fetches, message feeds, a UDF's
// error code returned as the fetch status).
//
//   ge::GEInitialize({{"ge.exec.deviceId", "0"}});
//   ge::Session session({});
//   session.AddGraph(1, flow_graph.ToGeGraph());
//   session.FeedDataFlowGraph(1, inputs, info, 3000);
//   session.FetchDataFlowGraph(1, outputs, info, 3000);
//   ge::GEFinalize();
//
// Every call leaves the calling thread's current device context (as
// aclrtGetCurrentContext sees it) exactly as it found it.
//
// Errors: GE's codes (ge/ge_error_codes.h); every failure also writes one
// line to stderr naming the call, the graph and the reason, and
// GEGetErrorMsg returns the last one of the calling thread. RunGraph and
// the other model-execution calls are not supported (hflow runs DataFlow
// graphs) and return ACL_ERROR_GE_PARAM_INVALID saying so.
//
// Thread-safety: as GE's: Session methods may be called from any thread,
// on one graph at once (feeders and fetchers); GEInitialize and GEFinalize
// must not race with other calls.
#ifndef HFLOW_GE_GE_API_H_
#define HFLOW_GE_GE_API_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ge/ge_api_error_codes.h"
#include "ge/ge_api_types.h"
#include "ge/ge_data_flow_api.h"
#include "graph/graph.h"
#include "graph/tensor.h"

namespace ge {
ATTRIBUTED_DEPRECATED(
    Status GEInitialize(const std::map<AscendString, AscendString>&))
GE_FUNC_VISIBILITY Status
GEInitialize(const std::map<std::string, std::string>& options);
GE_FUNC_VISIBILITY Status
GEInitialize(const std::map<AscendString, AscendString>& options);
GE_FUNC_VISIBILITY Status GEFinalize();
// The calling thread's last error line ("" when none).
GE_FUNC_VISIBILITY std::string GEGetErrorMsg();
GE_FUNC_VISIBILITY ge::AscendString GEGetErrorMsgV2();
GE_FUNC_VISIBILITY std::string GEGetWarningMsg();
GE_FUNC_VISIBILITY ge::AscendString GEGetWarningMsgV2();

class GE_FUNC_VISIBILITY Session {
 public:
  ATTRIBUTED_DEPRECATED(Session(const std::map<AscendString, AscendString>&))
  explicit Session(const std::map<std::string, std::string>& options);
  explicit Session(const std::map<AscendString, AscendString>& options);
  ~Session();

  Status AddGraph(uint32_t graph_id, const Graph& graph);
  ATTRIBUTED_DEPRECATED(Status AddGraph(
      uint32_t, const Graph&, const std::map<AscendString, AscendString>&))
  Status AddGraph(uint32_t graph_id, const Graph& graph,
                  const std::map<std::string, std::string>& options);
  Status AddGraph(uint32_t graph_id, const Graph& graph,
                  const std::map<AscendString, AscendString>& options);
  Status AddGraphWithCopy(uint32_t graph_id, const Graph& graph);
  Status AddGraphWithCopy(uint32_t graph_id, const Graph& graph,
                          const std::map<AscendString, AscendString>& options);
  Status RemoveGraph(uint32_t graph_id);

  // Compiles and deploys the graph (the inputs are not needed: DataFlow
  // graphs take their shapes from what is fed). A feed builds an unbuilt
  // graph first, as in GE.
  Status BuildGraph(uint32_t graph_id,
                    const std::vector<InputTensorInfo>& inputs);
  Status BuildGraph(uint32_t graph_id, const std::vector<ge::Tensor>& inputs);
  Status CompileGraph(uint32_t graph_id);

  // Model execution: not supported (ACL_ERROR_GE_PARAM_INVALID).
  Status RunGraph(uint32_t graph_id, const std::vector<Tensor>& inputs,
                  std::vector<Tensor>& outputs);
  Status RunGraphAsync(uint32_t graph_id, const std::vector<ge::Tensor>& inputs,
                       RunAsyncCallback callback);

  bool IsGraphNeedRebuild(uint32_t graph_id);
  uint64_t GetSessionId() const;

  // One tensor per graph input (or per input `indexes` names), as one
  // transaction; timeout in ms (-1 = forever).
  Status FeedDataFlowGraph(uint32_t graph_id, const std::vector<Tensor>& inputs,
                           const DataFlowInfo& info, int32_t timeout);
  Status FeedDataFlowGraph(uint32_t graph_id,
                           const std::vector<uint32_t>& indexes,
                           const std::vector<Tensor>& inputs,
                           const DataFlowInfo& info, int32_t timeout);
  // The pieces, joined, as one raw-data message to input `index`.
  Status FeedRawData(uint32_t graph_id,
                     const std::vector<RawData>& raw_data_list,
                     const uint32_t index, const DataFlowInfo& info,
                     int32_t timeout);
  // One tensor per graph output (or per output `indexes` names) of one
  // transaction. A UDF's error code is returned as the status.
  Status FetchDataFlowGraph(uint32_t graph_id, std::vector<Tensor>& outputs,
                            DataFlowInfo& info, int32_t timeout);
  Status FetchDataFlowGraph(uint32_t graph_id,
                            const std::vector<uint32_t>& indexes,
                            std::vector<Tensor>& outputs, DataFlowInfo& info,
                            int32_t timeout);
  // Message feeds and fetches: each message with its own type, flow info
  // and return code.
  Status FeedDataFlowGraph(uint32_t graph_id,
                           const std::vector<FlowMsgPtr>& inputs,
                           int32_t timeout);
  Status FeedDataFlowGraph(uint32_t graph_id,
                           const std::vector<uint32_t>& indexes,
                           const std::vector<FlowMsgPtr>& inputs,
                           int32_t timeout);
  Status FetchDataFlowGraph(uint32_t graph_id, std::vector<FlowMsgPtr>& outputs,
                            int32_t timeout);
  Status FetchDataFlowGraph(uint32_t graph_id,
                            const std::vector<uint32_t>& indexes,
                            std::vector<FlowMsgPtr>& outputs, int32_t timeout);

 private:
  uint64_t sessionId_{0};
};
}  // namespace ge

#endif  // HFLOW_GE_GE_API_H_
