// Feeding a replicated node (Note [Feed onto the replica] in graph_state.cc):
// each message is made on the device of the replica its transaction goes
// to, so the feeder's thread writes it there once and copies nothing across
// devices; every replica gets messages and all come back, on device sets
// with and without device 0.
//
//   x ─[id ×replicas, one per device]─ out
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

FlowGraph Replicated(const std::vector<int>& devices) {
  return testing::ChainGraph("replicated_feed",
                             {{"r", "_BuiltIn_Identity", devices, "id_pp"}});
}

class ReplicaFeedTest : public ::testing::TestWithParam<std::vector<int>> {
 protected:
  void SetUp() override {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    ASSERT_TRUE(Initialize(o).ok());
  }
  void TearDown() override { (void)Finalize(); }
};

TEST_P(ReplicaFeedTest, MessagesAreMadeOnTheirReplicasDevice) {
  constexpr int kMessages = 64;
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Replicated(GetParam())).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto* sim = static_cast<rt::SimRuntime*>(rt::CurrentRuntime());
  sim->SetRecordCalls(true);
  testing::RunOnFreshThread(
      [&] {
        for (int i = 0; i < kMessages; ++i) {
          Tensor t = Tensor::From<int32_t>(DataType::kInt32, {1}, {i});
          ASSERT_TRUE(s.FeedData(1, {t}, FlowInfo{}, 5000).ok());
        }
      },
      "feeder");
  std::set<int32_t> values;
  for (int i = 0; i < kMessages; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    ASSERT_TRUE(s.FetchData(1, &out, &info, 5000).ok());
    values.insert(out.at(0).As<int32_t>()[0]);
  }
  sim->SetRecordCalls(false);
  EXPECT_EQ(values.size(), size_t(kMessages)) << "every message came back";
  // The feeder's copies: one write per message, on the device it is for.
  std::map<int32_t, int> writes;  // device -> Memcpy calls
  for (const rt::CallRecord& r : sim->CallLog()) {
    if (r.thread != "feeder") continue;
    EXPECT_FALSE(r.implicit_binding);
    if (r.op != rt::Op::kMemcpy) continue;
    EXPECT_EQ(r.bound_device, r.device);
    ++writes[r.device];
  }
  int total = 0;
  for (const auto& [device, n] : writes) total += n;
  EXPECT_EQ(total, kMessages) << "a cross-device copy on the feeding path";
  EXPECT_EQ(writes.size(), GetParam().size())
      << "some replica's device got no message";
}

INSTANTIATE_TEST_SUITE_P(Devices, ReplicaFeedTest,
                         ::testing::Values(std::vector<int>{2, 3, 4, 5},
                                           std::vector<int>{3, 6, 7},
                                           std::vector<int>{0, 1}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
