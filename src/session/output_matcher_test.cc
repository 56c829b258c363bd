// OutputMatcher: pairing by transaction id (and data label), holding early
// arrivals, the hold limit, put-back order, timeouts that lose nothing, and the
// single-output fast path. On device 3 (no device 0 in the set).
#include "session/output_matcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <vector>

#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace session {
namespace {

using ::hflow::testing::MakeGroup;
using ::hflow::testing::MakeSim;

class OutputMatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeGroup(svc_, 3, "g", 1 << 20);
    for (int k = 0; k < 2; ++k) {
      uint32_t id = 0;
      ASSERT_TRUE(svc_.CreateQueue(3, 16, "out" + std::to_string(k), &id).ok());
      ASSERT_TRUE(svc_.OpenQueue(id, &queues_[k]).ok());
    }
  }
  OutputMatcher Make(size_t limit = 8, size_t outputs = 2,
                     AlignLimits align = {}) {
    std::vector<services::DeviceQueue*> qs;
    std::vector<std::string> names;
    for (size_t k = 0; k < outputs; ++k) {
      qs.push_back(queues_[k].get());
      names.push_back("n" + std::to_string(k) + ":0");
    }
    return OutputMatcher(&svc_, qs, names, std::vector<size_t>(outputs, limit),
                         align);
  }
  void Put(int k, uint64_t trans, uint32_t data_label = 0) {
    services::MbufPtr m;
    ASSERT_TRUE(svc_.AllocMbuf(3, "g", "deployer", 8, &m).ok());
    m->head().trans_id = trans;
    m->head().data_label = data_label;
    ASSERT_TRUE(svc_.Enqueue(*queues_[k], std::move(m), 0).ok());
  }
  static uint64_t T(const services::MbufPtr& m) { return m->head().trans_id; }

  std::shared_ptr<rt::SimRuntime> sim_ = MakeSim({3, 6, 7});
  services::ExchangeService svc_{sim_.get()};
  std::shared_ptr<services::DeviceQueue> queues_[2];
};

TEST_F(OutputMatcherTest, PairsOutputsThatArriveInDifferentOrders) {
  OutputMatcher m = Make();
  Put(0, 1);
  Put(0, 2);
  Put(0, 3);
  Put(1, 2);  // output 1's replica finished 2 and 3 before 1
  Put(1, 3);
  Put(1, 1);
  services::MbufPtr got[2];
  std::set<uint64_t> seen;
  for (int i = 0; i < 3; ++i) {
    Status s = m.Take(got, 1000);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(T(got[1]), T(got[0])) << "output 1 of another transaction";
    seen.insert(T(got[0]));
    got[0].reset();
    got[1].reset();
  }
  EXPECT_EQ(seen, (std::set<uint64_t>{1, 2, 3}));
  EXPECT_EQ(m.held(), 0u);
}

TEST_F(OutputMatcherTest, CellsOfOneTransactionPairByDataLabel) {
  OutputMatcher m = Make();
  Put(0, 1, 1);
  Put(0, 1, 2);
  Put(0, 1, 3);
  Put(1, 1, 3);  // the cells of transaction 1 in another order
  Put(1, 1, 1);
  Put(1, 1, 2);
  services::MbufPtr got[2];
  std::set<uint32_t> cells;
  for (int i = 0; i < 3; ++i) {
    Status s = m.Take(got, 1000);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(got[1]->head().data_label, got[0]->head().data_label)
        << "output 1 of another cell";
    cells.insert(got[0]->head().data_label);
    got[0].reset();
    got[1].reset();
  }
  EXPECT_EQ(cells, (std::set<uint32_t>{1, 2, 3}));
  EXPECT_EQ(m.held(), 0u);
}

TEST_F(OutputMatcherTest,
       ACompleteLaterTransactionIsNotStuckBehindAnIncompleteOne) {
  OutputMatcher m = Make();
  Put(0, 1);
  Put(0, 2);
  Put(1, 2);  // 1 has not come on output 1 (yet)
  services::MbufPtr got[2];
  ASSERT_TRUE(m.Take(got, 1000).ok());
  EXPECT_EQ(T(got[0]), 2u);
  EXPECT_EQ(T(got[1]), 2u);
  got[0].reset();
  got[1].reset();
  // Nothing complete now: a timeout, and output 0's transaction 1 is kept.
  Status s = m.Take(got, 20);
  EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
  EXPECT_FALSE(got[0]);
  EXPECT_EQ(m.held(), 1u);
  Put(1, 1);
  ASSERT_TRUE(m.Take(got, 1000).ok());
  EXPECT_EQ(T(got[0]), 1u);
  EXPECT_EQ(T(got[1]), 1u);
}

TEST_F(OutputMatcherTest, TakeReadyTakesOnlyWholeTransactions) {
  OutputMatcher m = Make();
  services::MbufPtr got[2];
  EXPECT_FALSE(m.TakeReady(got));
  Put(0, 5);
  EXPECT_FALSE(m.TakeReady(got));
  Put(1, 5);
  ASSERT_TRUE(m.TakeReady(got));
  EXPECT_EQ(T(got[1]), 5u);
}

TEST_F(OutputMatcherTest, PutBackComesOutFirstInOrder) {
  OutputMatcher m = Make();
  for (uint64_t t : {1u, 2u, 3u}) {
    Put(0, t);
    Put(1, t);
  }
  services::MbufPtr got[4];
  ASSERT_TRUE(m.Take(&got[0], 1000).ok());
  ASSERT_TRUE(m.Take(&got[2], 1000).ok());
  m.PutBack(got, 2);
  for (auto& g : got) EXPECT_FALSE(g) << "put back moves the messages";
  for (uint64_t want : {1u, 2u, 3u}) {
    services::MbufPtr one[2];
    ASSERT_TRUE(m.Take(one, 1000).ok());
    EXPECT_EQ(T(one[0]), want);
    EXPECT_EQ(T(one[1]), want);
  }
}

TEST_F(OutputMatcherTest, OutputsThatNeverPairHitTheHoldLimitWithAClearError) {
  OutputMatcher m = Make(/*limit=*/3);
  for (uint64_t t = 1; t <= 5; ++t) Put(1, t);
  Put(0, 99);  // never comes on output 1
  services::MbufPtr got[2];
  Status s = m.Take(got, 1000);
  ASSERT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.ToString().find("output 1 ('n1:0') holds 3 messages"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.ToString().find("waiting for transaction 99 on output 1"),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(m.held(), 4u) << "within the limit, and nothing dropped";
  EXPECT_EQ(queues_[1]->Size(), 2u) << "the rest stays queued";
}

TEST_F(OutputMatcherTest, ClosedQueueIsReportedAndHeldMessagesStay) {
  OutputMatcher m = Make();
  Put(0, 1);
  queues_[1]->Close(Status::Cancelled("stopping"));
  services::MbufPtr got[2];
  Status s = m.Take(got, 1000);
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s.ToString();
  EXPECT_EQ(m.held(), 1u);
  m.Clear();
  EXPECT_EQ(m.held(), 0u);
}

TEST_F(OutputMatcherTest, SingleOutputTakesTheQueueHead) {
  OutputMatcher m = Make(8, 1);
  Put(0, 4);
  Put(0, 2);
  services::MbufPtr got[1];
  ASSERT_TRUE(m.Take(got, 1000).ok());
  EXPECT_EQ(T(got[0]), 4u) << "one output: queue order, nothing to pair";
  m.PutBack(got, 1);
  ASSERT_TRUE(m.Take(got, 1000).ok());
  EXPECT_EQ(T(got[0]), 4u);
  got[0].reset();
  ASSERT_TRUE(m.Take(got, 1000).ok());
  EXPECT_EQ(T(got[0]), 2u);
}

// Note [Fetching some outputs]: a selection pairs only its own outputs,
// in its own order, and never drains the others' queues.
TEST_F(OutputMatcherTest, SelectionPairsItsOutputsAndLeavesTheOthers) {
  OutputMatcher m = Make();
  Put(0, 1);  // output 0 carries transaction 1 only
  Put(1, 2);  // output 1 carries transaction 2 only
  services::MbufPtr got[2];
  ASSERT_TRUE(m.Take({1}, got, 1000).ok());
  EXPECT_EQ(T(got[0]), 2u);
  EXPECT_EQ(queues_[0]->Size(), 1u) << "output 0 was not touched";
  EXPECT_EQ(m.held(), 0u);
  got[0].reset();
  ASSERT_TRUE(m.Take({0}, got, 1000).ok());
  EXPECT_EQ(T(got[0]), 1u);
  got[0].reset();
  // Both outputs, named in reverse: got[0] is output 1.
  Put(0, 7);
  Put(1, 8);
  Put(1, 7);
  ASSERT_TRUE(m.Take({1, 0}, got, 1000).ok());
  EXPECT_EQ(T(got[0]), 7u);
  EXPECT_EQ(T(got[1]), 7u);
  EXPECT_EQ(got[0]->head().trans_id, 7u);
  m.PutBack({1, 0}, got, 1);  // back where each came from
  services::MbufPtr again[2];
  ASSERT_TRUE(m.Take(again, 1000).ok());
  EXPECT_EQ(T(again[0]), 7u);
  EXPECT_EQ(T(again[1]), 7u);
  EXPECT_EQ(m.held(), 1u) << "transaction 8 of output 1 waits";
}

// Note [Aligning with limits]: past the cache limit the oldest incomplete
// transaction comes back as it is (kNotAligned), or is dropped.
TEST_F(OutputMatcherTest, AlignmentCacheLimitReturnsOrDropsTheOldest) {
  for (bool dropout : {false, true}) {
    SCOPED_TRACE(dropout ? "dropout" : "return");
    OutputMatcher m = Make(8, 2, AlignLimits{1, -1, dropout});
    Put(0, 1);
    Put(0, 2);  // two transactions wait for output 1: one more than the cache
    services::MbufPtr got[2];
    Status s = m.Take(got, 0);
    if (dropout) {
      EXPECT_EQ(s.code(), StatusCode::kTimeout) << s.ToString();
      EXPECT_FALSE(got[0]);
    } else {
      ASSERT_EQ(s.code(), StatusCode::kNotAligned) << s.ToString();
      EXPECT_NE(s.message().find("transaction 1"), std::string::npos);
      EXPECT_NE(s.message().find("missing: n1:0"), std::string::npos);
      ASSERT_TRUE(got[0]);
      EXPECT_EQ(T(got[0]), 1u);
      EXPECT_FALSE(got[1]);
      got[0].reset();
      EXPECT_EQ(m.Take(got, 0).code(), StatusCode::kTimeout)
          << "one waiting transaction is within the cache";
    }
    EXPECT_EQ(m.held(), 1u);  // transaction 2 still waits
    Put(1, 2);
    ASSERT_TRUE(m.Take(got, 0).ok());
    EXPECT_EQ(T(got[0]), 2u);
    EXPECT_EQ(T(got[1]), 2u);
    m.Clear();
  }
}

// A transaction waiting longer than the alignment timeout ends the wait on
// time, however long the fetch's own timeout is.
TEST_F(OutputMatcherTest, AlignmentTimeoutEndsTheWaitOnTime) {
  OutputMatcher m = Make(8, 2, AlignLimits{8, 50, false});
  Put(0, 3);
  services::MbufPtr got[2];
  const auto t0 = std::chrono::steady_clock::now();
  Status s = m.Take(got, 30000);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
  ASSERT_EQ(s.code(), StatusCode::kNotAligned) << s.ToString();
  EXPECT_NE(s.message().find("timeout of 50 ms"), std::string::npos);
  EXPECT_GE(ms, 50);
  EXPECT_LT(ms, 20000) << "the fetch's 30 s were not waited";
  EXPECT_EQ(T(got[0]), 3u);
  EXPECT_FALSE(got[1]);
  EXPECT_EQ(m.held(), 0u);
}

}  // namespace
}  // namespace session
}  // namespace hflow
