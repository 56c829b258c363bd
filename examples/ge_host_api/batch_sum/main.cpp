// A GE DataFlow host program with a CountBatch input: the node's UDF sees
// batches of 3 fed tensors and returns their sum.
//
//   FlowData x ── FlowNode "sum" ─[MapInput attr CountBatch{batch_size 3}]─
//                 FunctionPp "sum_pp" (SumBatch, config/sum_func.json, udf/)
//                 ── output 0
//
// Six feeds of [i, 10 * i] give two results: [1+2+3, 10+20+30] (transaction
// 3) and [4+5+6, 40+50+60] (transaction 6). The exit status is non-zero on
// any mismatch. Run it from this folder (the workspace "udf" is relative to
// the working directory, as in GE).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "flow_graph/data_flow.h"
#include "ge/ge_api.h"

using namespace ge;
using namespace dflow;

namespace {

Tensor Int32Tensor(const std::vector<int32_t>& v) {
  TensorDesc desc(Shape({static_cast<int64_t>(v.size())}), FORMAT_ND, DT_INT32);
  return Tensor(desc, reinterpret_cast<const uint8_t*>(v.data()),
                v.size() * sizeof(int32_t));
}

}  // namespace

int main() {
  std::map<AscendString, AscendString> options = {{"ge.exec.deviceId", "0"},
                                                  {"ge.graphRunMode", "0"}};
  if (GEInitialize(options) != SUCCESS) {
    std::printf("GEInitialize failed: %s\n", GEGetErrorMsg().c_str());
    return 1;
  }
  int failures = 0;
  {
    std::map<AscendString, AscendString> session_options;
    std::shared_ptr<Session> session =
        std::make_shared<Session>(session_options);

    FlowData x("x", 0);
    FunctionPp pp("sum_pp");
    pp.SetCompileConfig("config/sum_func.json");
    CountBatch batch;
    batch.batch_size = 3;
    DataFlowInputAttr attr = {DataFlowAttrType::COUNT_BATCH, &batch};
    FlowNode sum("sum", 1, 1);
    sum.SetInput(0, x).AddPp(pp);
    sum.MapInput(0, pp, 0, {attr}).MapOutput(0, pp, 0);
    FlowGraph graph("batch_sum");
    graph.SetInputs({x}).SetOutputs({sum});

    const uint32_t graph_id = 1;
    Status ret = session->AddGraph(graph_id, graph.ToGeGraph());
    for (int32_t i = 1; ret == SUCCESS && i <= 6; ++i) {
      DataFlowInfo info;  // the first feed builds the graph, as in GE
      ret = session->FeedDataFlowGraph(graph_id, {Int32Tensor({i, 10 * i})},
                                       info, 3000);
    }
    if (ret != SUCCESS) {
      std::printf("feeding failed (%u): %s\n", ret, GEGetErrorMsg().c_str());
      failures = 1;
    }
    const int32_t expected[2][2] = {{6, 60}, {15, 150}};
    for (int b = 0; failures == 0 && b < 2; ++b) {
      std::vector<Tensor> outputs;
      DataFlowInfo info;
      ret = session->FetchDataFlowGraph(graph_id, outputs, info, 3000);
      if (ret != SUCCESS || outputs.size() != 1 ||
          outputs[0].GetSize() != 2 * sizeof(int32_t)) {
        std::printf("fetch %d failed (%u): %s\n", b + 1, ret,
                    GEGetErrorMsg().c_str());
        ++failures;
        continue;
      }
      int32_t y[2];
      std::memcpy(y, outputs[0].GetData(), sizeof(y));
      const bool ok =
          y[0] == expected[b][0] && y[1] == expected[b][1] &&
          info.GetTransactionId() == static_cast<uint64_t>(3 * b + 3);
      std::printf("batch of transactions %d..%d (id %llu): [%d, %d] %s\n",
                  3 * b + 1, 3 * b + 3,
                  static_cast<unsigned long long>(info.GetTransactionId()),
                  y[0], y[1], ok ? "ok" : "WRONG");
      if (!ok) ++failures;
    }
  }
  if (GEFinalize() != SUCCESS) ++failures;
  std::printf("batch_sum: %s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
