// BalanceLabelsFor: each of GE's BalanceOptionFilter checks (in GE's order,
// with GE's code), the label table of a 3 x 4 grid for each affinity
// policy, and options without a balance config.
#include "flow_func/balance.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "flow_func/flow_func_defines.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::AffinityPolicy;
constexpr int32_t kOk = FlowFunc::FLOW_FUNC_SUCCESS;
constexpr int32_t kInvalid = FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
using Pos = std::vector<std::pair<int32_t, int32_t>>;

FlowFunc::OutOptions Options(AffinityPolicy policy, int32_t rows, int32_t cols,
                             Pos pos) {
  FlowFunc::OutOptions o;
  FlowFunc::BalanceConfig* c = o.MutableBalanceConfig();
  c->SetAffinityPolicy(policy);
  FlowFunc::BalanceWeight w;
  w.rowNum = rows;
  w.colNum = cols;
  c->SetBalanceWeight(w);
  c->SetDataPos(pos);
  return o;
}

int32_t Filter(BalanceKind kind, const FlowFunc::OutOptions& o, size_t count,
               std::vector<BalanceLabels>* labels = nullptr) {
  std::vector<BalanceLabels> scratch;
  return BalanceLabelsFor("n", kind, o, count, labels ? labels : &scratch);
}

TEST(BalanceTest, NoConfigPassesEveryNodeUnchanged) {
  for (BalanceKind k :
       {BalanceKind::kNone, BalanceKind::kScatter, BalanceKind::kGather}) {
    std::vector<BalanceLabels> labels(3);
    EXPECT_EQ(Filter(k, FlowFunc::OutOptions(), 5, &labels), kOk);
    EXPECT_TRUE(labels.empty()) << BalanceName(k);
  }
}

TEST(BalanceTest, EachGeCheckIsParamInvalid) {
  const auto kNo = AffinityPolicy::NO_AFFINITY;
  const auto kRow = AffinityPolicy::ROW_AFFINITY;
  const auto kScatter = BalanceKind::kScatter;
  const auto kGather = BalanceKind::kGather;
  struct Case {
    const char* what;
    BalanceKind kind;
    FlowFunc::OutOptions options;
    size_t count;
  };
  const Case cases[] = {
      {"policy -1", kScatter, Options(AffinityPolicy(-1), 1, 1, {{0, 0}}), 1},
      {"policy 3", kGather, Options(AffinityPolicy(3), 1, 1, {{0, 0}}), 1},
      {"rows 0", kScatter, Options(kNo, 0, 4, {{0, 0}}), 1},
      {"cols -1", kScatter, Options(kNo, 4, -1, {{0, 0}}), 1},
      {"65537 cells", kScatter, Options(kNo, 65537, 1, {{0, 0}}), 1},
      {"overflowing cells", kScatter,
       Options(kNo, INT32_MAX, INT32_MAX, {{0, 0}}), 1},
      {"row out of range", kScatter, Options(kNo, 3, 4, {{3, 0}}), 1},
      {"negative col", kScatter, Options(kNo, 3, 4, {{0, -1}}), 1},
      {"col out of range", kScatter, Options(kNo, 3, 4, {{0, 4}}), 1},
      {"scatter with ROW", kScatter, Options(kRow, 3, 4, {{0, 0}}), 1},
      {"gather with NO_AFFINITY", kGather, Options(kNo, 3, 4, {{0, 0}}), 1},
      {"not a balance node", BalanceKind::kNone, Options(kNo, 3, 4, {{0, 0}}),
       1},
      {"fewer positions than messages", kScatter, Options(kNo, 3, 4, {{0, 0}}),
       2},
      {"more positions than messages", kGather,
       Options(kRow, 3, 4, {{0, 0}, {1, 1}}), 1},
  };
  for (const Case& c : cases) {
    std::vector<BalanceLabels> labels;
    EXPECT_EQ(Filter(c.kind, c.options, c.count, &labels), kInvalid) << c.what;
    EXPECT_TRUE(labels.empty()) << c.what;
  }
  // The limits themselves are accepted.
  EXPECT_EQ(Filter(kScatter, Options(kNo, 65536, 1, {{65535, 0}}), 1), kOk);
  EXPECT_EQ(Filter(kScatter, Options(kNo, 256, 256, {{255, 255}}), 1), kOk);
}

TEST(BalanceTest, LabelTableOfAThreeByFourGrid) {
  Pos all;
  for (int32_t r = 0; r < 3; ++r) {
    for (int32_t c = 0; c < 4; ++c) all.push_back({r, c});
  }
  struct Policy {
    AffinityPolicy policy;
    BalanceKind kind;
  };
  for (Policy p :
       {Policy{AffinityPolicy::NO_AFFINITY, BalanceKind::kScatter},
        Policy{AffinityPolicy::ROW_AFFINITY, BalanceKind::kGather},
        Policy{AffinityPolicy::COL_AFFINITY, BalanceKind::kGather}}) {
    std::vector<BalanceLabels> labels;
    ASSERT_EQ(Filter(p.kind, Options(p.policy, 3, 4, all), all.size(), &labels),
              kOk);
    ASSERT_EQ(labels.size(), all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      const uint32_t r = static_cast<uint32_t>(all[i].first);
      const uint32_t c = static_cast<uint32_t>(all[i].second);
      const uint32_t cell = r * 4 + c;
      EXPECT_EQ(labels[i].data_label, cell + 1) << r << "," << c;
      const uint32_t route = p.policy == AffinityPolicy::ROW_AFFINITY ? r + 1
                             : p.policy == AffinityPolicy::COL_AFFINITY
                                 ? c + 1
                                 : cell + 1;
      EXPECT_EQ(labels[i].route_label, route)
          << "policy " << static_cast<int>(p.policy) << " at " << r << "," << c;
    }
  }
  // Positions may repeat and come in any order: labels follow them.
  std::vector<BalanceLabels> labels;
  ASSERT_EQ(Filter(BalanceKind::kGather,
                   Options(AffinityPolicy::COL_AFFINITY, 3, 4,
                           {{2, 3}, {2, 3}, {0, 1}}),
                   3, &labels),
            kOk);
  EXPECT_EQ(labels[0].data_label, 12u);
  EXPECT_EQ(labels[1].route_label, 4u);
  EXPECT_EQ(labels[2].data_label, 2u);
  EXPECT_EQ(labels[2].route_label, 2u);
}

}  // namespace
}  // namespace flow_func
}  // namespace hflow
