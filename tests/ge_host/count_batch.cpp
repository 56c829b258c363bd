// GE host program (b): CountBatch on a node input (FlowNode::MapInput's
// DataFlowInputAttr), the batch stacked along a new leading dimension.
//
//   x ── node "batch" in 0 ─[CountBatch{batch_size 4}]─ PassThrough ── out
//   x ── node "short" in 0 ─[CountBatch{3, timeout 100, padding}]─ PassThrough
//
// Graph 1: 8 feeds of [i, -i] give 2 results of shape [4, 2] carrying the
// transaction ids of their last messages (4 and 8). Graph 2: one feed is
// sent after the timeout as a batch padded with zeros to 3.
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_graph/data_flow.h"
#include "ge/ge_api.h"
#include "ge_check.h"

using namespace ge;
using namespace dflow;
using namespace ge_host;

namespace {

FlowGraph BatchGraph(const char* name, CountBatch& batch) {
  FlowData x("x", 0);
  FunctionPp pp("pass_pp");
  pp.SetCompileConfig("config/pass_through.json");
  DataFlowInputAttr attr = {DataFlowAttrType::COUNT_BATCH, &batch};
  FlowNode node(name, 1, 1);
  node.SetInput(0, x).AddPp(pp);
  node.MapInput(0, pp, 0, {attr}).MapOutput(0, pp, 0);
  FlowGraph graph(name);
  graph.SetInputs({x}).SetOutputs({node});
  return graph;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  {
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);

    CountBatch four;
    four.batch_size = 4;
    FlowGraph g1 = BatchGraph("batch", four);
    StatusIs(session->AddGraph(1, g1.ToGeGraph()), SUCCESS, "AddGraph 1");
    DataFlowInfo feed_info;
    for (int32_t i = 1; i <= 8; ++i) {
      StatusIs(session->FeedDataFlowGraph(1, {Int32s({2}, {i, -i})}, feed_info,
                                          3000),
               SUCCESS, "feed " + Str(i));
    }
    for (int32_t b = 0; b < 2; ++b) {
      std::vector<Tensor> out;
      DataFlowInfo info;
      std::string what = "batch " + Str(b + 1);
      StatusIs(session->FetchDataFlowGraph(1, out, info, 3000), SUCCESS,
               "fetch " + what);
      if (!Eq(out.size(), static_cast<size_t>(1), what + ": outputs")) continue;
      Eq(Dims(out[0]), std::vector<int64_t>({4, 2}), what + ": shape");
      std::vector<int32_t> expected;
      for (int32_t i = b * 4 + 1; i <= b * 4 + 4; ++i) {
        expected.push_back(i);
        expected.push_back(-i);
      }
      Eq(Values<int32_t>(out[0]), expected, what + ": the 4 feeds stacked");
      Eq(info.GetTransactionId(), static_cast<uint64_t>(b * 4 + 4),
         what + ": transaction id of its last message");
    }
    std::vector<Tensor> none;
    DataFlowInfo none_info;
    StatusIs(session->FetchDataFlowGraph(1, none, none_info, 200),
             ACL_ERROR_GE_MODEL_EXECUTE_TIMEOUT, "no third batch (timeout)");

    CountBatch padded;
    padded.batch_size = 3;
    padded.timeout = 100;
    padded.padding = true;
    FlowGraph g2 = BatchGraph("short", padded);
    StatusIs(session->AddGraph(2, g2.ToGeGraph()), SUCCESS, "AddGraph 2");
    StatusIs(
        session->FeedDataFlowGraph(2, {Int32s({2}, {9, -9})}, feed_info, 3000),
        SUCCESS, "feed one to the padded graph");
    std::vector<Tensor> out;
    DataFlowInfo info;
    StatusIs(session->FetchDataFlowGraph(2, out, info, 3000), SUCCESS,
             "fetch the timed-out batch");
    if (Eq(out.size(), static_cast<size_t>(1), "padded: outputs")) {
      Eq(Dims(out[0]), std::vector<int64_t>({3, 2}), "padded: shape");
      Eq(Values<int32_t>(out[0]), std::vector<int32_t>({9, -9, 0, 0, 0, 0}),
         "padded: one feed and zeros");
    }
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  return Finish("count_batch");
}
