// Unit tests of the crash report (util/crash_report.h): the line names what
// the thread's record says (node, function, replica, device, transaction
// or Init), says "outside UDF code" with the thread's name otherwise, and
// Install/Uninstall put the previous handlers back. The handler's effect on
// a dying process is tested with death tests in tests/udf_crash_test.cc.
//
// Thread-safety: each test touches only its own thread's record; the
// handlers are process-wide, so tests restore what they changed.
#include "util/crash_report.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cstring>
#include <string>

#include "test_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace util {
namespace {

std::string Line(int sig) {
  char buf[512];
  size_t n = FormatCrashLine(sig, buf, sizeof(buf));
  return std::string(buf, n);
}

TEST(CrashReportLineTest, NamesTheUdfCallOfThisThread) {
  UdfSite site{"decode", "DecodeFunc", 2, 6};
  EnterUdf(&site, UdfPhase::kProc, 18446744073709551615ull);
  EXPECT_EQ(Line(SIGSEGV),
            "hflow: crash: SIGSEGV in node 'decode' function 'DecodeFunc' "
            "(replica 2) on device 6 while processing transaction "
            "18446744073709551615");
  EnterUdf(&site, UdfPhase::kInit, 0);
  EXPECT_EQ(Line(SIGABRT),
            "hflow: crash: SIGABRT in node 'decode' function 'DecodeFunc' "
            "(replica 2) on device 6 while running Init");
  LeaveUdf();
  testing::RunOnFreshThread(
      [] {
        EXPECT_EQ(
            Line(SIGBUS),
            "hflow: crash: SIGBUS outside UDF code (thread 'crash-line')");
      },
      "crash-line");
  EXPECT_EQ(Line(SIGFPE).rfind("hflow: crash: SIGFPE outside UDF code", 0), 0u);
}

TEST(CrashReportLineTest, LongNamesAreCutToTheBuffer) {
  std::string node(1000, 'n');
  UdfSite site{node.c_str(), "F", 0, 3};
  EnterUdf(&site, UdfPhase::kProc, 7);
  char buf[64];
  size_t n = FormatCrashLine(SIGILL, buf, sizeof(buf));
  LeaveUdf();
  EXPECT_EQ(n, sizeof(buf) - 1);
  EXPECT_EQ(std::string(buf, 24), "hflow: crash: SIGILL in ");
}

void MarkerHandler(int) {}

TEST(CrashReportInstallTest, UninstallRestoresThePreviousHandlers) {
  struct sigaction mine {
  }, saved{}, now{};
  mine.sa_handler = MarkerHandler;
  sigemptyset(&mine.sa_mask);
  ASSERT_EQ(sigaction(SIGSEGV, &mine, &saved), 0);
  ASSERT_TRUE(InstallCrashReport().ok());
  EXPECT_TRUE(CrashReportInstalled());
  ASSERT_EQ(sigaction(SIGSEGV, nullptr, &now), 0);
  EXPECT_NE(now.sa_handler, MarkerHandler);
  EXPECT_TRUE(now.sa_flags & SA_ONSTACK);
  ASSERT_TRUE(InstallCrashReport().ok());  // idempotent: keeps what it saved
  UninstallCrashReport();
  EXPECT_FALSE(CrashReportInstalled());
  ASSERT_EQ(sigaction(SIGSEGV, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, MarkerHandler);
  UninstallCrashReport();  // a no-op
  ASSERT_EQ(sigaction(SIGSEGV, &saved, nullptr), 0);
}

}  // namespace
}  // namespace util
}  // namespace hflow
