// Exception catch drops a raised transaction's data (Note [Dropping a
// raised transaction] in session/output_matcher.cc): the fetch of a
// transaction a UDF raised returns the exception's code and no data on any
// output, whether the other outputs' data came before the exception or
// the raising UDF emitted after it, and no message of it is left to pair
// with a later transaction. With and without input alignment; on device
// sets with and without 0.
//
//   x ─[raise: odd values raise, then emit anyway]── out0   @d.front()
//   x ─[_BuiltIn_Identity]─────────────────────────── out1   @d.back()
//
// Thread-safety: single-threaded tests; every wait is bounded.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::FuncNode;
using ::hflow::testing::Place;

constexpr int32_t kOddCode = 7700123;

class RaiseOdd : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    const int32_t v =
        static_cast<const int32_t*>(in[0]->GetTensor()->GetData())[0];
    if (v % 2 != 0) {
      context_->RaiseException(kOddCode, in[0]->GetTransactionId());
    }
    // Data after the exception: GE ignores it, so must hflow.
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("ExceptionDropTest_RaiseOdd", RaiseOdd);

Tensor Value(int32_t v) {
  return Tensor::From<int32_t>(DataType::kInt32, {1}, {v});
}

struct Param {
  std::vector<int> devices;
  bool align;
};
void PrintTo(const Param& p, std::ostream* os) {
  *os << testing::DevicesName(p.devices) << (p.align ? " aligned" : "");
}

class ExceptionDropTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    Options o;
    o.cluster = MakeLocalCluster(GetParam().devices);
    o.queue_depth = 8;
    ASSERT_TRUE(Initialize(o).ok());
    FlowData x("x", 0);
    FlowNode raise = FuncNode("raise", "ExceptionDropTest_RaiseOdd");
    FlowNode id = FuncNode("id", "_BuiltIn_Identity");
    raise.SetInput(0, x);
    id.SetInput(0, x);
    FlowGraph g("drop");
    g.SetInputs({x}).SetOutputs({raise, id}).SetExceptionCatch(true);
    if (GetParam().align) g.SetInputsAlignAttrs(16, 5000, false);
    const auto& d = GetParam().devices;
    Place(g, {{"raise", {d.front()}}, {"id", {d.back()}}});
    ASSERT_TRUE(s_.AddGraph(1, g).ok());
    ASSERT_TRUE(s_.BuildGraph(1).ok());
  }
  void TearDown() override { (void)Finalize(); }

  Session s_;
};

TEST_P(ExceptionDropTest, ARaisedTransactionComesBackAloneAndWithoutData) {
  constexpr int32_t kN = 6;  // 1, 3, 5 raise
  for (int32_t v = 1; v <= kN; ++v) {
    FlowInfo info;
    info.transaction_id = static_cast<uint64_t>(v);
    Status st = s_.FeedData(1, {Value(v)}, info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  std::map<uint64_t, int> seen;
  for (int32_t i = 0; i < kN; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s_.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    const uint64_t t = info.transaction_id;
    ++seen[t];
    ASSERT_EQ(out.size(), 2u);
    if (t % 2 != 0) {
      EXPECT_EQ(info.ret_code, kOddCode) << "transaction " << t;
      EXPECT_EQ(out[0].data.size(), 0u) << "transaction " << t;
      EXPECT_EQ(out[1].data.size(), 0u)
          << "transaction " << t << ": the identity's data is dropped";
    } else {
      EXPECT_EQ(info.ret_code, 0) << "transaction " << t;
      EXPECT_EQ(out[0].As<int32_t>().at(0), static_cast<int32_t>(t));
      EXPECT_EQ(out[1].As<int32_t>().at(0), static_cast<int32_t>(t));
    }
  }
  for (int32_t v = 1; v <= kN; ++v) {
    EXPECT_EQ(seen[static_cast<uint64_t>(v)], 1) << "transaction " << v;
  }
  std::vector<Tensor> out;
  FlowInfo info;
  Status st = s_.FetchData(1, &out, &info, 200);
  EXPECT_EQ(st.code(), StatusCode::kTimeout)
      << "nothing of a raised transaction is left over: " << st.ToString()
      << " (transaction " << info.transaction_id << ")";
}

std::vector<Param> Params() {
  std::vector<Param> p;
  for (bool align : {false, true}) {
    p.push_back({{0, 1}, align});
    p.push_back({{2, 3, 4, 5}, align});
    p.push_back({{3, 6, 7}, align});
  }
  return p;
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, ExceptionDropTest,
                         ::testing::ValuesIn(Params()), [](const auto& info) {
                           return testing::DevicesName(info.param.devices) +
                                  (info.param.align ? "_aligned" : "");
                         });

}  // namespace
}  // namespace hflow
