// GE host program (c): TimeBatch on a node input, batching by the messages'
// own start and end times (DataFlowInfo::SetStartTime/SetEndTime).
//
//   x ── node "window" in 0 ─[TimeBatch{time_window 4}]─ PassThrough ── out
//   x ── node "segment" in 0 ─[TimeBatch{time_window -1}]─ PassThrough ── out
//
// Graph 1: messages lasting [t, t+1] for t = 0..3 span 4 ms: one batch of
// shape [4, 2]. Graph 2 takes whole segments: three messages, the last
// flagged SEG, are one batch of 3.
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

FlowGraph BatchGraph(const char* name, TimeBatch& batch) {
  FlowData x("x", 0);
  FunctionPp pp("pass_pp");
  pp.SetCompileConfig("config/pass_through.json");
  DataFlowInputAttr attr = {DataFlowAttrType::TIME_BATCH, &batch};
  FlowNode node(name, 1, 1);
  node.SetInput(0, x).AddPp(pp);
  node.MapInput(0, pp, 0, {attr}).MapOutput(0, pp, 0);
  FlowGraph graph(name);
  graph.SetInputs({x}).SetOutputs({node});
  return graph;
}

// Feeds [v, -v] lasting [start, start + 1] with `flags`.
Status FeedAt(Session& session, uint32_t graph_id, int32_t v, uint64_t start,
              uint32_t flags) {
  DataFlowInfo info;
  info.SetStartTime(start);
  info.SetEndTime(start + 1);
  info.SetFlowFlags(flags);
  return session.FeedDataFlowGraph(graph_id, {Int32s({2}, {v, -v})}, info,
                                   3000);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int32_t> devices = Devices(argc, argv);
  StatusIs(GEInitialize(InitOptions()), SUCCESS, "GEInitialize");
  {
    std::map<AscendString, AscendString> options;
    std::shared_ptr<Session> session = std::make_shared<Session>(options);

    TimeBatch window;
    window.time_window = 4;
    FlowGraph g1 = BatchGraph("window", window);
    StatusIs(session->AddGraph(1, g1.ToGeGraph()), SUCCESS, "AddGraph 1");
    for (int32_t t = 0; t < 4; ++t) {
      StatusIs(FeedAt(*session, 1, t + 1, static_cast<uint64_t>(t), 0), SUCCESS,
               "feed [" + Str(t) + ", " + Str(t + 1) + "]");
    }
    std::vector<Tensor> out;
    DataFlowInfo info;
    StatusIs(session->FetchDataFlowGraph(1, out, info, 3000), SUCCESS,
             "fetch the 4 ms batch");
    if (Eq(out.size(), static_cast<size_t>(1), "window: outputs")) {
      Eq(Dims(out[0]), std::vector<int64_t>({4, 2}), "window: shape");
      Eq(Values<int32_t>(out[0]),
         std::vector<int32_t>({1, -1, 2, -2, 3, -3, 4, -4}),
         "window: the 4 messages stacked");
    }
    Eq(info.GetStartTime(), static_cast<uint64_t>(0),
       "window: start time of the first message");
    Eq(info.GetEndTime(), static_cast<uint64_t>(4),
       "window: end time of the last message");

    TimeBatch segment;
    segment.time_window = -1;
    FlowGraph g2 = BatchGraph("segment", segment);
    StatusIs(session->AddGraph(2, g2.ToGeGraph()), SUCCESS, "AddGraph 2");
    const uint32_t seg =
        static_cast<uint32_t>(DataFlowFlag::DATA_FLOW_FLAG_SEG);
    for (int32_t t = 0; t < 3; ++t) {
      StatusIs(FeedAt(*session, 2, 10 + t, static_cast<uint64_t>(10 + t),
                      t == 2 ? seg : 0),
               SUCCESS, "feed segment message " + Str(t + 1));
    }
    StatusIs(session->FetchDataFlowGraph(2, out, info, 3000), SUCCESS,
             "fetch the segment");
    if (Eq(out.size(), static_cast<size_t>(1), "segment: outputs")) {
      Eq(Dims(out[0]), std::vector<int64_t>({3, 2}), "segment: shape");
      Eq(Values<int32_t>(out[0]),
         std::vector<int32_t>({10, -10, 11, -11, 12, -12}),
         "segment: the 3 messages stacked");
    }
    Check((info.GetFlowFlags() & seg) != 0,
          "segment: the batch carries SEG (flags " + Str(info.GetFlowFlags()) +
              ")");
  }
  StatusIs(GEFinalize(), SUCCESS, "GEFinalize");
  return Finish("time_batch");
}
