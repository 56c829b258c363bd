// The transparency matrix (invariant 2) and the stray-context rule
// (invariant 3) for GE's feed and fetch forms: indexed FeedData and
// FetchData, FeedMessages, FetchMessages, FeedRawData, the end-of-stream-
// only feed, the build a first feed makes and ResetGraph. On success and on
// error paths, called from a fresh thread in each caller state, each call
// leaves the thread's context as it found it, creates no context on the unused
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

class SessionGeIoTransparencyTest
    : public transparency::SessionTransparencyTest {};

Message InputMessage(int k) {
  Message m;
  m.tensors = {Input(k)};
  return m;
}

TEST_P(SessionGeIoTransparencyTest, IndexedFeedAndFetch) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "FeedData {0} then FetchData {0}", nullptr,
                [&](int k) {
                  Status st = s.FeedData(1, {0}, {Input(k)}, FlowInfo{}, 5000);
                  if (!st.ok()) return st;
                  std::vector<Tensor> out;
                  FlowInfo info;
                  return s.FetchData(1, {0}, &out, &info, 5000);
                },
                StatusCode::kOk),
            &counter_);
  RunMatrix(
      spec_,
      MakeCase(
          "FeedData index out of range", nullptr,
          [&](int k) { return s.FeedData(1, {3}, {Input(k)}, FlowInfo{}, 0); },
          StatusCode::kInvalidArgument),
      &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchData repeated index", nullptr,
                [&](int) {
                  std::vector<Tensor> out;
                  FlowInfo info;
                  return s.FetchData(2, {0, 0}, &out, &info, 0);
                },
                StatusCode::kInvalidArgument),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchData {0} timeout 20 ms", nullptr,
                [&](int) {
                  std::vector<Tensor> out;
                  FlowInfo info;
                  return s.FetchData(2, {0}, &out, &info, 20);
                },
                StatusCode::kTimeout),
            &counter_);
}

TEST_P(SessionGeIoTransparencyTest, MessagesRawDataAndEos) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "FeedMessages then FetchMessages", nullptr,
                [&](int k) {
                  Status st = s.FeedMessages(1, {}, {InputMessage(k)}, 5000);
                  if (!st.ok()) return st;
                  std::vector<Message> out;
                  return s.FetchMessages(1, {}, &out, 5000);
                },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FeedMessages bad type", nullptr,
                [&](int k) {
                  Message m = InputMessage(k);
                  m.msg_type = 3;
                  return s.FeedMessages(1, {}, {m}, 0);
                },
                StatusCode::kInvalidArgument),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "FetchMessages timeout 0", nullptr,
                [&](int) {
                  std::vector<Message> out;
                  return s.FetchMessages(2, {}, &out, 0);
                },
                StatusCode::kTimeout),
            &counter_);
  // Raw bytes reach _BuiltIn_Add (which refuses them): any code will do,
  // the caller's context must come back either way.
  RunMatrix(spec_,
            MakeCase(
                "FeedRawData", nullptr,
                [&](int) {
                  const char bytes[] = "raw";
                  return s.FeedRawData(2, {{bytes, 3}}, 0, FlowInfo{}, 5000);
                },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "EOS-only feed", nullptr,
                [&](int) {
                  FlowInfo eos;
                  eos.flags = kFlowFlagEos;
                  return s.FeedData(2, {}, eos, 5000);
                },
                StatusCode::kOk),
            &counter_);
}

TEST_P(SessionGeIoTransparencyTest, FirstFeedBuilds) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "first feed builds",
                [&](int k) {
                  ASSERT_TRUE(
                      s.AddGraph(100 + k, transparency::TestGraph(spec_)).ok());
                },
                [&](int k) {
                  return s.FeedData(100 + k, {Input(k)}, FlowInfo{}, 5000);
                },
                StatusCode::kOk, false,
                [&](int k) { ASSERT_TRUE(s.RemoveGraph(100 + k).ok()); }),
            &counter_);
}

// ResetGraph runs ResetFlowFuncState or a new Init on the instances'
// devices (deploy pool threads) and restarts the executors: the caller's
// thread must come back as it was.
TEST_P(SessionGeIoTransparencyTest, ResetGraph) {
  Session& s = *session_;
  RunMatrix(spec_,
            MakeCase(
                "ResetGraph, then feed and fetch", nullptr,
                [&](int k) {
                  Status st = s.ResetGraph(1);
                  if (!st.ok()) return st;
                  st = s.FeedData(1, {Input(k)}, FlowInfo{}, 5000);
                  if (!st.ok()) return st;
                  std::vector<Tensor> out;
                  FlowInfo info;
                  return s.FetchData(1, &out, &info, 5000);
                },
                StatusCode::kOk),
            &counter_);
  RunMatrix(spec_,
            MakeCase(
                "ResetGraph unknown graph", nullptr,
                [&](int) { return s.ResetGraph(999); }, StatusCode::kNotFound),
            &counter_);
}

INSTANTIATE_TEST_SUITE_P(SessionTransparency, SessionGeIoTransparencyTest,
                         ::testing::Values(transparency::TwoToFive(),
                                           transparency::ThreeSixSeven()),
                         [](const ::testing::TestParamInfo<ClusterSpec>& i) {
                           return i.param.name;
                         });

}  // namespace
}  // namespace hflow
