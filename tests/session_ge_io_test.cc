// GE's feed and fetch semantics through hflow's Session, as GE documents
// them: indexed feeds and fetches (a multi-function node fetched one output
// at a time), end-of-stream-only feeds and flow flags carried end to end,
// message-level feeds and fetches (tensor, tensor list, raw data, user
// types, empty messages, ret codes, user data with offsets), FeedRawData,
// and building on the first feed; with the bad input each must refuse. On
// device sets with device 0 and without it ({2,3,4,5}, {3,6,7}).
//
//   x ── id ── id2 ── out                 (the chain: messages, flags)
//   x, y ── ops (Scale | Sum) ── out0, out1   (examples/multi_function)
//
// Thread-safety: single-threaded tests.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hflow/hflow.h"
#include "hflow/rt.h"
#include "test_graphs.h"
#include "test_util.h"

#ifndef HFLOW_SOURCE_DIR
#error "HFLOW_SOURCE_DIR must name the source tree"
#endif

namespace hflow {
namespace {

using testing::ChainGraph;
using testing::I64;

Tensor I32(std::vector<int32_t> v) {
  return Tensor::From<int32_t>(DataType::kInt32,
                               {static_cast<int64_t>(v.size())}, v);
}

class GeIoTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    testing::UseBuildTreeForUdfs();
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    Status s = Initialize(o);
    ASSERT_TRUE(s.ok()) << s.ToString();
    session_ = std::make_unique<Session>();
  }
  void TearDown() override {
    session_.reset();
    EXPECT_TRUE(Finalize().ok());
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  }
  int32_t Dev(size_t i) const {
    return GetParam()[std::min(i, GetParam().size() - 1)];
  }
  // x ── id@d0 ── id2@d1 ── out, built.
  void AddChain() {
    FlowGraph g = ChainGraph("chain", {{"id", "_BuiltIn_Identity", {Dev(0)}},
                                       {"id2", "_BuiltIn_Identity", {Dev(1)}}});
    ASSERT_TRUE(session_->AddGraph(1, g).ok());
  }
  void AddMultiFunction() {
    Status s =
        session_->AddGraphFile(1, std::string(HFLOW_SOURCE_DIR) +
                                      "/examples/multi_function/graph.json");
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  Session& S() { return *session_; }
  std::unique_ptr<Session> session_;
};

// ---- Indexed feed and fetch ----

// GE's multi-function sample: Scale (x -> output 1) and Sum (y -> output 0)
// each produce one output; each is fed alone and fetched alone.
TEST_P(GeIoTest, MultiFunctionNodeFedAndFetchedOneOutputAtATime) {
  AddMultiFunction();
  FlowInfo info;
  ASSERT_TRUE(S().FeedData(1, {0}, {I32({1, 2, 3})}, info, 60000).ok());
  std::vector<Tensor> out;
  FlowInfo got;
  Status s = S().FetchData(1, {1}, &out, &got, 10000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{10, 20, 30}));
  ASSERT_TRUE(S().FeedData(1, {1}, {I32({4, 5, 6})}, info, 10000).ok());
  s = S().FetchData(1, {0}, &out, &got, 10000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{15}));
  // Nothing else came: output 1 has nothing for that second feed.
  EXPECT_EQ(S().FetchData(1, {1}, &out, &got, 0).code(), StatusCode::kTimeout);
}

TEST_P(GeIoTest, FetchReturnsTheOutputsInTheOrderNamed) {
  AddMultiFunction();
  FlowInfo info;
  ASSERT_TRUE(S().FeedData(1, {I32({1, 2}), I32({7, 8})}, info, 60000).ok());
  std::vector<Tensor> out;
  FlowInfo got;
  Status s = S().FetchData(1, {1, 0}, &out, &got, 10000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].As<int32_t>(), (std::vector<int32_t>{10, 20}));  // Scale
  EXPECT_EQ(out[1].As<int32_t>(), (std::vector<int32_t>{15}));      // Sum
  EXPECT_EQ(got.transaction_id, 1u);
}

TEST_P(GeIoTest, BadIndexesAreRefusedNamingTheIndex) {
  AddMultiFunction();
  FlowInfo info;
  Status s = S().FeedData(1, {2}, {I32({1})}, info, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("index 2 is out of range"), std::string::npos)
      << s.ToString();
  s = S().FeedData(1, {0, 0}, {I32({1}), I32({2})}, info, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("given twice"), std::string::npos) << s.ToString();
  s = S().FeedData(1, {0, 1}, {I32({1})}, info, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("2 indexes for 1 tensors"), std::string::npos)
      << s.ToString();
  std::vector<Tensor> out;
  FlowInfo got;
  s = S().FetchData(1, {5}, &out, &got, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("has 2 outputs"), std::string::npos)
      << s.ToString();
  s = S().FetchData(1, {1, 1}, &out, &got, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  // Nothing was fed by the refused calls.
  EXPECT_EQ(S().FetchData(1, &out, &got, 0).code(), StatusCode::kTimeout);
}

// ---- End of stream and flow flags ----

TEST_P(GeIoTest, EosOnlyFeedReachesTheFetcherAsAnEmptyMessage) {
  AddChain();
  FlowInfo info;
  info.flags = kFlowFlagEos;
  ASSERT_TRUE(S().FeedData(1, {}, info, 10000).ok());
  std::vector<Message> out;
  Status s = S().FetchMessages(1, {}, &out, 10000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].empty);
  EXPECT_TRUE(out[0].tensors.empty());
  EXPECT_EQ(out[0].info.flags & kFlowFlagEos, kFlowFlagEos);
}

// _BuiltIn_Add makes a new message: it inherits the input's flow info.
TEST_P(GeIoTest, FlowFlagsTravelWithDataThroughEveryNode) {
  FlowGraph g = ChainGraph("adds", {{"id", "_BuiltIn_Identity", {Dev(0)}},
                                    {"add", "_BuiltIn_Add", {Dev(1)}, "", 2},
                                    {"add2", "_BuiltIn_Add", {Dev(2)}, "", 2}});
  ASSERT_TRUE(S().AddGraph(1, g).ok());
  FlowInfo info;
  info.flags = kFlowFlagEos | kFlowFlagSeg;
  info.start_time = 11;
  info.end_time = 22;
  ASSERT_TRUE(S().FeedData(1, {I64(5)}, info, 10000).ok());
  std::vector<Tensor> out;
  FlowInfo got;
  ASSERT_TRUE(S().FetchData(1, &out, &got, 10000).ok());
  EXPECT_EQ(got.flags, kFlowFlagEos | kFlowFlagSeg);
  EXPECT_EQ(got.start_time, 11u);
  EXPECT_EQ(got.end_time, 22u);
  EXPECT_EQ(out.at(0).As<int64_t>(), (std::vector<int64_t>{20}));
}

TEST_P(GeIoTest, AFeedWithoutDataOrEosIsRefused) {
  AddChain();
  Status s = S().FeedData(1, {}, FlowInfo{}, 0);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("kFlowFlagEos"), std::string::npos)
      << s.ToString();
}

// ---- Messages ----

TEST_P(GeIoTest, MessagesKeepTheirTypePayloadAndFlowInfo) {
  AddChain();
  // A tensor list.
  Message list;
  list.msg_type = kMsgTypeTensorList;
  list.tensors = {I32({1, 2, 3}), I64(-4),
                  Tensor::From<float>(DataType::kFloat, {2, 1}, {0.5f, 2.f})};
  ASSERT_TRUE(list.info.SetUserData("abcd", 4, 60).ok());
  // A user-defined type (GE's range) carries raw bytes.
  Message user;
  user.msg_type = kMsgTypeUserDefineStart + 7;
  user.raw = {9, 8, 7};
  // GE's torch plugin's message (1023, below the user range) too.
  Message torch;
  torch.msg_type = kMsgTypeTorchTensor;
  torch.raw = {1, 0, 2, 3};
  for (const Message* m : {&list, &user, &torch}) {
    Status s = S().FeedMessages(1, {}, {*m}, 10000);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::vector<Message> out;
  Status s = S().FetchMessages(1, {}, &out, 10000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].msg_type, kMsgTypeTensorList);
  ASSERT_EQ(out[0].tensors.size(), 3u);
  EXPECT_EQ(out[0].tensors[0].As<int32_t>(), (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(out[0].tensors[1].As<int64_t>(), (std::vector<int64_t>{-4}));
  EXPECT_EQ(out[0].tensors[2].shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(out[0].tensors[2].As<float>(), (std::vector<float>{0.5f, 2.f}));
  char tail[4];
  ASSERT_TRUE(out[0].info.GetUserData(tail, 4, 60).ok());
  EXPECT_EQ(std::string(tail, 4), "abcd");
  s = S().FetchMessages(1, {}, &out, 10000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out.at(0).msg_type, kMsgTypeUserDefineStart + 7);
  EXPECT_EQ(out[0].raw, (std::vector<uint8_t>{9, 8, 7}));
  EXPECT_TRUE(out[0].tensors.empty());
  s = S().FetchMessages(1, {}, &out, 10000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(out.at(0).msg_type, kMsgTypeTorchTensor);
  EXPECT_EQ(out[0].raw, (std::vector<uint8_t>{1, 0, 2, 3}));
}

TEST_P(GeIoTest, FeedRawDataJoinsThePieces) {
  AddChain();
  const char a[] = "hello, ";
  const char b[] = "world";
  FlowInfo info;
  info.transaction_id = 42;
  Status s = S().FeedRawData(1, {{a, 7}, {b, 5}}, 0, info, 10000);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::vector<Message> out;
  ASSERT_TRUE(S().FetchMessages(1, {}, &out, 10000).ok());
  EXPECT_EQ(out.at(0).msg_type, kMsgTypeRawData);
  EXPECT_EQ(std::string(out[0].raw.begin(), out[0].raw.end()), "hello, world");
  EXPECT_EQ(out[0].info.transaction_id, 42u);
  EXPECT_EQ(S().FeedRawData(1, {{a, 7}}, 1, info, 0).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(S().FeedRawData(1, {{nullptr, 3}}, 0, info, 0).code(),
            StatusCode::kInvalidArgument);
}

TEST_P(GeIoTest, MalformedMessagesAreRefusedAndFeedNothing) {
  AddChain();
  auto refused = [&](const Message& m, const std::string& says) {
    Status s = S().FeedMessages(1, {}, {m}, 0);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << says;
    EXPECT_NE(s.message().find(says), std::string::npos) << s.ToString();
  };
  Message two;
  two.tensors = {I64(1), I64(2)};
  refused(two, "exactly one tensor");
  Message odd;
  odd.msg_type = 5;
  refused(odd, "message type 5 is not a message type");
  Message raw_with_tensors;
  raw_with_tensors.msg_type = kMsgTypeRawData;
  raw_with_tensors.tensors = {I64(1)};
  refused(raw_with_tensors, "carries bytes (raw), not tensors");
  Message bad_bytes;
  bad_bytes.tensors = {I64(1)};
  bad_bytes.tensors[0].data.pop_back();
  refused(bad_bytes, "do not match its shape");
  Message big_user;
  big_user.tensors = {I64(1)};
  EXPECT_EQ(big_user.info.SetUserData("x", 1, 64).code(),
            StatusCode::kInvalidArgument);
  big_user.info.user_data.assign(65, 1);
  refused(big_user, "at most 64");
  std::vector<Message> out;
  EXPECT_EQ(S().FetchMessages(1, {}, &out, 0).code(), StatusCode::kTimeout);
}

// FetchData cannot return a tensor list as one tensor: it says so, and the
// message stays for FetchMessages.
TEST_P(GeIoTest, TensorListFetchedAsTensorsIsKeptForFetchMessages) {
  AddChain();
  Message list;
  list.msg_type = kMsgTypeTensorList;
  list.tensors = {I64(1), I64(2)};
  ASSERT_TRUE(S().FeedMessages(1, {}, {list}, 10000).ok());
  std::vector<Tensor> tensors;
  FlowInfo info;
  Status s = S().FetchData(1, &tensors, &info, 10000);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("FetchMessages"), std::string::npos)
      << s.ToString();
  std::vector<Message> out;
  ASSERT_TRUE(S().FetchMessages(1, {}, &out, 0).ok());
  EXPECT_EQ(out.at(0).tensors.size(), 2u);
}

// A message fed with a ret code reaches the fetcher as a failure.
TEST_P(GeIoTest, RetCodeOfAFedMessageComesBack) {
  AddChain();
  Message m;
  m.tensors = {I64(3)};
  m.info.ret_code = 1234;
  ASSERT_TRUE(S().FeedMessages(1, {}, {m}, 10000).ok());
  std::vector<Tensor> out;
  FlowInfo info;
  ASSERT_TRUE(S().FetchData(1, &out, &info, 10000).ok());
  EXPECT_EQ(info.ret_code, 1234);
}

// ---- Build on first feed ----

TEST_P(GeIoTest, FirstFeedBuildsTheGraph) {
  AddChain();
  std::vector<Tensor> out;
  FlowInfo info;
  // Nothing built yet: a fetch cannot wait on queues that do not exist.
  Status s = S().FetchData(1, &out, &info, 0);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("feed it first"), std::string::npos)
      << s.ToString();
  ASSERT_TRUE(S().FeedData(1, {I64(8)}, FlowInfo{}, 10000).ok());
  ASSERT_TRUE(S().FetchData(1, &out, &info, 10000).ok());
  EXPECT_EQ(out.at(0).As<int64_t>(), (std::vector<int64_t>{8}));
  EXPECT_TRUE(S().BuildGraph(1).ok());  // already built: nothing to do
}

TEST_P(GeIoTest, BuildErrorsOfTheFirstFeedSaySo) {
  FlowGraph g = ChainGraph("bad", {{"f", "GeIoTest_NoSuchFunction", {Dev(0)}}});
  ASSERT_TRUE(S().AddGraph(1, g).ok());
  Status s = S().FeedData(1, {I64(1)}, FlowInfo{}, 1000);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_NE(s.message().find("building on first feed"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("GeIoTest_NoSuchFunction"), std::string::npos)
      << s.ToString();
}

// ---- Input alignment ----

//   x ── a ── out0
//   y ── b ── out1       (aligned fetches of both outputs)
FlowGraph TwoBranches(uint32_t max_cache, int32_t timeout_ms, bool dropout,
                      int32_t d0, int32_t d1) {
  FlowData x("x", 0), y("y", 1);
  FlowNode a = testing::FuncNode("a", "_BuiltIn_Identity");
  FlowNode b = testing::FuncNode("b", "_BuiltIn_Identity");
  a.SetInput(0, x);
  b.SetInput(0, y);
  FlowGraph g("branches");
  g.SetInputs({x, y}).SetOutputs({a, b});
  g.SetInputsAlignAttrs(max_cache, timeout_ms, dropout);
  return testing::Place(g, {{"a", {d0}}, {"b", {d1}}});
}

TEST_P(GeIoTest, AlignmentTimeoutReturnsWhatCameOrDropsIt) {
  for (bool dropout : {false, true}) {
    SCOPED_TRACE(dropout ? "dropout" : "return");
    const uint32_t id = dropout ? 2 : 1;
    ASSERT_TRUE(
        S().AddGraph(id, TwoBranches(4, 100, dropout, Dev(0), Dev(1))).ok());
    // Only x is fed: transaction 1 never comes on output 1.
    ASSERT_TRUE(S().FeedData(id, {0}, {I64(6)}, FlowInfo{}, 10000).ok());
    std::vector<Tensor> out;
    FlowInfo info;
    Status s = S().FetchData(id, &out, &info, dropout ? 1000 : 20000);
    if (dropout) {
      EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
      continue;
    }
    ASSERT_EQ(s.code(), StatusCode::kNotAligned) << s.ToString();
    EXPECT_NE(s.message().find("timeout of 100 ms"), std::string::npos)
        << s.ToString();
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].As<int64_t>(), (std::vector<int64_t>{6}));
    EXPECT_TRUE(out[1].data.empty());
    EXPECT_EQ(info.transaction_id, 1u);
  }
}

TEST_P(GeIoTest, AlignedTransactionsComeWhole) {
  ASSERT_TRUE(
      S().AddGraph(1, TwoBranches(4, 5000, false, Dev(0), Dev(1))).ok());
  for (int64_t v : {1, 2, 3}) {
    ASSERT_TRUE(S().FeedData(1, {I64(v), I64(-v)}, FlowInfo{}, 10000).ok());
  }
  for (int64_t v : {1, 2, 3}) {
    std::vector<Tensor> out;
    FlowInfo info;
    ASSERT_TRUE(S().FetchData(1, &out, &info, 10000).ok());
    EXPECT_EQ(out.at(0).As<int64_t>(), (std::vector<int64_t>{v}));
    EXPECT_EQ(out.at(1).As<int64_t>(), (std::vector<int64_t>{-v}));
  }
}

TEST_P(GeIoTest, AlignmentLimitsAreChecked) {
  Status s = S().AddGraph(1, TwoBranches(1025, 100, false, Dev(0), Dev(1)));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("at most 1024"), std::string::npos)
      << s.ToString();
  s = S().AddGraph(1, TwoBranches(4, 0, false, Dev(0), Dev(1)));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("-1 (never) or 1..600000"), std::string::npos)
      << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(
    DeviceSets, GeIoTest,
    ::testing::Values(std::vector<int32_t>{0, 1},
                      std::vector<int32_t>{2, 3, 4, 5},
                      std::vector<int32_t>{3, 6, 7}),
    [](const ::testing::TestParamInfo<std::vector<int32_t>>& i) {
      return testing::DevicesName(i.param);
    });

}  // namespace
}  // namespace hflow
