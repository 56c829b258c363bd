// `hflow run`'s memory flags (--mbuf-pool-bytes, --max-message-bytes, in
// tools/cluster_options.cc): sizes are parsed with units, a message over
// the max is refused naming the flag, a pool too small for three messages
// fails the build naming both flags, and a small pool still runs a stream
// (back-pressure), on devices without 0.
#include <gtest/gtest.h>

#include <string>

#include "cli_test_util.h"

namespace {

constexpr char kAddGraph[] =
    R"({"name":"add_pipeline","inputs":["a","b"],"nodes":[{"name":"add",)"
    R"("inputs":["a","b"],"outputs":1,"function":"_BuiltIn_Add"}],)"
    R"("outputs":["add:0"]})";

class CliMemoryTest : public hflow::testing::CliTest {
 protected:
  std::string Graph() { return "'" + Write("g.json", kAddGraph) + "'"; }
};

TEST_F(CliMemoryTest, MessageOverTheMaxIsRefusedNamingTheFlag) {
  auto r = Run("run " + Graph() +
               " --devices 3,6,7 --input a=int32:1,2,3 --input b=int32:1,2,3"
               " --max-message-bytes 8");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("12 bytes exceed the max message size of 8 bytes"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--max-message-bytes"), std::string::npos) << r.err;
}

TEST_F(CliMemoryTest, BadSizeNamesTheFlag) {
  auto r = Run("run " + Graph() +
               " --devices 2,3 --input a=int32:1 --input b=int32:1"
               " --mbuf-pool-bytes lots");
  EXPECT_EQ(r.code, 2) << r.err;  // a bad command line
  EXPECT_NE(r.err.find("--mbuf-pool-bytes 'lots'"), std::string::npos) << r.err;
}

TEST_F(CliMemoryTest, PoolTooSmallForThreeMessagesIsAConfigError) {
  auto r = Run("run " + Graph() +
               " --devices 2,3 --input a=int32:1 --input b=int32:1"
               " --mbuf-pool-bytes 1MB --max-message-bytes 512KB");
  EXPECT_EQ(r.code, 2) << r.err;  // found before Initialize
  EXPECT_NE(r.err.find("at least 3 messages"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--mbuf-pool-bytes"), std::string::npos) << r.err;
}

TEST_F(CliMemoryTest, SmallPoolStillStreamsEveryTransaction) {
  auto r =
      Run("run " + Graph() +
          " --devices 2,3,4,5 --input a=int32:1,2 --input b=int32:3,4"
          " --repeat 500 --mbuf-pool-bytes 64KiB --max-message-bytes 4KiB");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("500/500 transactions ok"), std::string::npos) << r.err;
}

}  // namespace
