// ForeignCounters: live sources are read at every Totals, a retired one
// keeps its last reading, and devices sum across sources.
//
// Thread-safety: single-threaded tests.
#include "rt/foreign_counters.h"

#include <gtest/gtest.h>

namespace hflow {
namespace rt {
namespace {

using PerDevice = ForeignCounters::PerDevice;

TEST(ForeignCountersTest, SumsLiveSourcesAndKeepsRetiredOnes) {
  ForeignCounters fc;
  EXPECT_TRUE(fc.Totals().empty());
  uint64_t a_contexts = 1;
  const int a = fc.Add([&] { return PerDevice{{3, {a_contexts, 0}}}; });
  fc.Add([] { return PerDevice{{3, {2, 1}}, {6, {1, 0}}}; });
  PerDevice t = fc.Totals();
  EXPECT_EQ(t[3].contexts_created, 3u);
  EXPECT_EQ(t[3].implicit_bindings, 1u);
  EXPECT_EQ(t[6].contexts_created, 1u);
  a_contexts = 4;  // a live source is read anew
  EXPECT_EQ(fc.Totals()[3].contexts_created, 6u);
  fc.Retire(a);  // its last reading (4) stays
  a_contexts = 100;
  EXPECT_EQ(fc.Totals()[3].contexts_created, 6u);
  fc.Retire(a);  // twice: nothing more
  fc.Retire(12345);
  EXPECT_EQ(fc.Totals()[3].contexts_created, 6u);
}

}  // namespace
}  // namespace rt
}  // namespace hflow
