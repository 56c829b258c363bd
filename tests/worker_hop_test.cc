// One copy per hop into a worker (Note [One copy into a worker] in
// src/exec/router.cc): a message from another device bound for an
// isolated node is not copied to the node's device by the router, since
// the node's instance copies it into its worker's segment anyway. The
// sim runtime's copy count shows it: the same graph in the host makes a
// device copy at each of its two hops across devices; isolated, none (the
// copies into the segments are the only ones). The values are the same.
// On device sets with and without device 0.
//
//   x ── id@d0 ── a@d1 ── b@d2 ── out    a, b Fragile (each doubles its
//                                        input), isolated or in the host
//
// Thread-safety: each test drives its session from the test thread.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "rt/sim/sim_runtime.h"
#include "test_graphs.h"
#include "test_util.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::FuncNode;
using ::hflow::testing::Place;

constexpr uint64_t kCount = 24;  // within the queues' depth (64)

class WorkerHopTest : public testing::WorkerTest {
 protected:
  // Runs kCount transactions through the graph, isolated or not; the
  // device copies the runtime made meanwhile.
  uint64_t CopiesOf(bool isolated) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.udf_isolation = isolated;
    Status st = Initialize(o);
    EXPECT_TRUE(st.ok()) << st.ToString();
    auto* sim = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
    uint64_t copies = 0;
    {
      Session s;
      Build(s);
      sim->SetCountCalls(true);
      sim->ResetCallCounts();
      for (uint64_t t = 1; t <= kCount; ++t) Feed(s, t, int64_t(t));
      for (uint64_t t = 1; t <= kCount; ++t) {
        Result r = Fetch(s);
        EXPECT_TRUE(r.status.ok()) << r.status.ToString();
        EXPECT_EQ(r.trans, t);
        EXPECT_EQ(r.value, 4 * int64_t(t));
      }
      copies = sim->CallCount(rt::Op::kMemcpy);
      sim->SetCountCalls(false);
    }
    EXPECT_TRUE(Finalize().ok());
    return copies;
  }

  void Build(Session& s) {
    const std::vector<int32_t>& d = GetParam();
    const std::string config = testing::FragileConfig(dir_, false);
    FlowData x("x", 0);
    FlowNode id = FuncNode("id", "_BuiltIn_Identity");
    id.SetInput(0, x);
    std::vector<FlowNode> nodes{id};
    for (const char* name : {"a", "b"}) {
      FunctionPp pp(std::string(name) + "_pp");
      pp.SetCompileConfig(config);
      pp.SetInitParam("mode", "pass");
      pp.SetInitParam("at", int64_t(0));
      FlowNode n(name, 1, 1);
      n.AddPp(pp);
      n.SetInput(0, nodes.back(), 0);
      nodes.push_back(n);
    }
    FlowGraph g("hop");
    g.SetInputs({x}).SetOutputs({nodes.back()});
    ASSERT_TRUE(
        s.AddGraph(1, Place(g, {{"id", {d[0]}}, {"a", {d[1]}}, {"b", {d[2]}}}))
            .ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
};

TEST_P(WorkerHopTest, AHopIntoAWorkerIsOneCopy) {
  const uint64_t host = CopiesOf(false);
  const uint64_t isolated = CopiesOf(true);
  // The two hops across devices, each message: copies the host makes and
  // the isolated graph does not.
  EXPECT_EQ(host - isolated, 2 * kCount)
      << "in the host " << host << ", isolated " << isolated;
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, WorkerHopTest,
                         ::testing::ValuesIn(testing::WorkerDeviceSets()),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
