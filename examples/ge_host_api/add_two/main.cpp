// The smallest GE DataFlow host program: two graph inputs, one UDF node
// that adds them, one output.
//
//   FlowData a (input 0) ─┐
//                         ├─ FlowNode "add" ─ FunctionPp "add_pp" ─ output 0
//   FlowData b (input 1) ─┘    (AddTwo, config/add_func.json, udf/)
//
// It feeds three transactions, fetches them and checks a + b; the exit
// status is non-zero on any mismatch. Run it from this folder: the compile
// config's workspace "udf" is relative to the working directory, as in GE.
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

Tensor FloatTensor(const std::vector<float>& v) {
  TensorDesc desc(Shape({static_cast<int64_t>(v.size())}), FORMAT_ND, DT_FLOAT);
  return Tensor(desc, reinterpret_cast<const uint8_t*>(v.data()),
                v.size() * sizeof(float));
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

    FlowData a("a", 0);
    FlowData b("b", 1);
    FunctionPp pp("add_pp");
    pp.SetCompileConfig("config/add_func.json");
    FlowNode add("add", 2, 1);
    add.SetInput(0, a).SetInput(1, b).AddPp(pp);
    FlowGraph graph("add_two");
    graph.SetInputs({a, b}).SetOutputs({add});

    const uint32_t graph_id = 1;
    Status ret = session->AddGraph(graph_id, graph.ToGeGraph());
    if (ret == SUCCESS)
      ret = session->BuildGraph(graph_id, std::vector<Tensor>());
    if (ret != SUCCESS) {
      std::printf("building the graph failed (%u): %s\n", ret,
                  GEGetErrorMsg().c_str());
      failures = 1;
    }
    for (int i = 1; failures == 0 && i <= 3; ++i) {
      DataFlowInfo info;
      std::vector<Tensor> inputs = {FloatTensor({1.0f * i, 2.0f * i}),
                                    FloatTensor({0.5f, 0.25f})};
      ret = session->FeedDataFlowGraph(graph_id, inputs, info, 3000);
      std::vector<Tensor> outputs;
      DataFlowInfo out_info;
      if (ret == SUCCESS) {
        ret = session->FetchDataFlowGraph(graph_id, outputs, out_info, 3000);
      }
      if (ret != SUCCESS || outputs.size() != 1 ||
          outputs[0].GetSize() != 2 * sizeof(float)) {
        std::printf("transaction %d failed (%u): %s\n", i, ret,
                    GEGetErrorMsg().c_str());
        ++failures;
        continue;
      }
      float z[2];
      std::memcpy(z, outputs[0].GetData(), sizeof(z));
      const bool ok = z[0] == 1.0f * i + 0.5f && z[1] == 2.0f * i + 0.25f;
      std::printf("transaction %llu: [%g, %g] + [0.5, 0.25] = [%g, %g] %s\n",
                  static_cast<unsigned long long>(out_info.GetTransactionId()),
                  1.0 * i, 2.0 * i, z[0], z[1], ok ? "ok" : "WRONG");
      if (!ok) ++failures;
    }
  }
  if (GEFinalize() != SUCCESS) ++failures;
  std::printf("add_two: %s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
