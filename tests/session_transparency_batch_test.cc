// The transparency matrix (invariant 2) and the stray-context rule
// (invariant 3) for the batch entry points, Session::FeedDataBatch and
// FetchDataBatch: on success and on every error path, called from a fresh
// thread in each caller state (none, a used device's default context, an
// unused device's default context, a user context), each call leaves the
// thread's context exactly as it found it, creates no context on the unused
// device and never fires the default-device quirk; on {2,3,4,5} (+7
// unused) and {3,6,7} (7 unused). The machinery is transparency_matrix.h.
//
// Thread-safety: single-threaded tests (RunMatrix joins its thread).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "transparency_matrix.h"

namespace hflow {
namespace {

using transparency::ClusterSpec;
using transparency::Input;
using transparency::MakeCase;
using transparency::RunMatrix;

// Its own name: gtest ties a parameterized suite to one fixture class.
class SessionBatchTransparencyTest
    : public transparency::SessionTransparencyTest {};

std::vector<std::vector<Tensor>> Inputs(int from, int n) {
  std::vector<std::vector<Tensor>> batch;
  for (int i = 0; i < n; ++i) batch.push_back({Input(from + i)});
  return batch;
}

TEST_P(SessionBatchTransparencyTest, FeedDataBatch) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "FeedDataBatch ok", nullptr,
                [&](int k) {
                  size_t fed = 0;
                  Status st = s.FeedDataBatch(1, Inputs(k, 3), {}, 5000, &fed);
                  EXPECT_EQ(fed, st.ok() ? 3u : fed);
                  return st;
                },
                StatusCode::kOk, false, [&](int) { Drain(3); }),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FeedDataBatch wrong input count", nullptr,
                [&](int k) {
                  return s.FeedDataBatch(1, {{Input(k), Input(k)}}, {}, 0);
                },
                StatusCode::kInvalidArgument),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FeedDataBatch infos for other transactions", nullptr,
                [&](int k) {
                  return s.FeedDataBatch(1, Inputs(k, 2), {FlowInfo{}}, 0);
                },
                StatusCode::kInvalidArgument),
            &counter_);
  RunMatrix(
      spec_,
      MakeCase(
          "FeedDataBatch unknown id", nullptr,
          [&](int k) { return s.FeedDataBatch(999, Inputs(k, 1), {}, 0); },
          StatusCode::kNotFound),
      &counter_);
}

TEST_P(SessionBatchTransparencyTest, FetchDataBatch) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "FetchDataBatch ok",
                [&](int k) {
                  ASSERT_TRUE(s.FeedData(1, {Input(k)}, FlowInfo{}, 5000).ok());
                },
                [&](int k) {
                  std::vector<std::vector<Tensor>> out;
                  std::vector<FlowInfo> infos;
                  Status st = s.FetchDataBatch(1, 4, &out, &infos, 5000);
                  if (st.ok()) {
                    EXPECT_EQ(out.size(), 1u);
                    EXPECT_EQ(out.at(0).at(0).As<int32_t>(),
                              (std::vector<int32_t>{2 * k, 2 * (k + 1)}));
                  }
                  return st;
                },
                StatusCode::kOk),
            &counter_);
  auto idle_fetch = [&](uint32_t graph, size_t max, int32_t timeout_ms) {
    std::vector<std::vector<Tensor>> out;
    std::vector<FlowInfo> infos;
    return s.FetchDataBatch(graph, max, &out, &infos, timeout_ms);
  };
  RunMatrix(spec_,
            MakeCase(
                "FetchDataBatch timeout 0", nullptr,
                [&](int) { return idle_fetch(2, 4, 0); }, StatusCode::kTimeout),
            &counter_);
  RunMatrix(
      spec_,
      MakeCase(
          "FetchDataBatch timeout 20 ms", nullptr,
          [&](int) { return idle_fetch(2, 4, 20); }, StatusCode::kTimeout),
      &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchDataBatch max 0", nullptr,
                [&](int) { return idle_fetch(1, 0, 0); },
                StatusCode::kInvalidArgument),
            &counter_);
  RunMatrix(
      spec_,
      MakeCase(
          "FetchDataBatch unknown id", nullptr,
          [&](int) { return idle_fetch(999, 4, 0); }, StatusCode::kNotFound),
      &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchDataBatch null outputs", nullptr,
                [&](int) {
                  std::vector<FlowInfo> infos;
                  return s.FetchDataBatch(1, 4, nullptr, &infos, 0);
                },
                StatusCode::kInvalidArgument),
            &counter_);
}

INSTANTIATE_TEST_SUITE_P(SessionTransparency, SessionBatchTransparencyTest,
                         ::testing::Values(transparency::TwoToFive(),
                                           transparency::ThreeSixSeven()),
                         [](const ::testing::TestParamInfo<ClusterSpec>& i) {
                           return i.param.name;
                         });

}  // namespace
}  // namespace hflow
