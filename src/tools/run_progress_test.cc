// Unit tests of the progress text of `hflow run` and its two modes: a
// redrawn line on a terminal, nothing for a short run otherwise.
//
// Thread-safety: single-threaded.
#include "tools/run_progress.h"

#include <gtest/gtest.h>

#include <sstream>

namespace hflow::tools {
namespace {

TEST(RunProgressTest, TextHasCountRateAndEta) {
  EXPECT_EQ(RunProgress::Text(40, 100, 2.0),
            "fetched 40/100, 20.0 msgs/s, ETA 3 s");
  EXPECT_EQ(RunProgress::Text(100, 100, 2.0), "fetched 100/100, 50.0 msgs/s");
  EXPECT_EQ(RunProgress::Text(7, -1, 1.0), "fetched 7, 7.0 msgs/s");
  EXPECT_EQ(RunProgress::Text(0, 10, 0), "fetched 0/10, 0.0 msgs/s");
}

TEST(RunProgressTest, SayEndsARedrawnLineFirst) {
  std::ostringstream err;
  RunProgress p(&err, /*redraw=*/true, 10);
  p.Say("deploying graph 'g' ...");
  EXPECT_EQ(err.str(), "hflow run: deploying graph 'g' ...\n");
  std::ostringstream quiet;
  RunProgress q(&quiet, /*redraw=*/false, 10);
  q.Start();
  q.Update(3);  // a plain line only every few seconds
  q.Finish();
  EXPECT_EQ(quiet.str(), "");
}

}  // namespace
}  // namespace hflow::tools
