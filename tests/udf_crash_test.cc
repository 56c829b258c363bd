// Crashing UDFs with Options::crash_report (gtest death tests: each case
// runs in a child process): a null dereference, abort(), an integer
// division by zero, an illegal instruction and SIGBUS inside a UDF's Proc
// kill the process with that signal, after the results already fetched,
// and the last line on stderr names the node, function, replica, device and
// transaction; a crash in Init says so; a crash outside UDF code says
// that; without the option, or after Finalize, no such line is written.
// On device sets with and without device 0.
//
// Thread-safety: the crash mode is set in the child before the graph runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/hflow.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
using ::testing::KilledBySignal;
using ::testing::Not;

constexpr int32_t kIoMs = 10000;

enum class Mode { kNullDeref, kAbort, kDivZero, kTrap, kRaiseBus };
std::atomic<Mode> g_mode{Mode::kNullDeref};
std::atomic<bool> g_crash_in_init{false};

// Not instrumented by UBSan: the faults must reach the CPU (and the crash
// handler), not UBSan's report of them.
__attribute__((no_sanitize("undefined"))) void Crash() {
  switch (g_mode.load()) {
    case Mode::kNullDeref: {
      volatile int* p = nullptr;
      *p = 1;
      break;
    }
    case Mode::kAbort:
      std::abort();
    case Mode::kDivZero: {
      // Both volatile: with a constant 1 / x the compiler needs no divide.
      volatile int seven = 7;
      volatile int zero = 0;
      volatile int r = seven / zero;
      (void)r;
      break;
    }
    case Mode::kTrap:
      __builtin_trap();
    case Mode::kRaiseBus:
      raise(SIGBUS);
      break;
  }
}

// Passes its input on, except the value 3, on which it crashes.
class CrashOnThree : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override {
    if (g_crash_in_init.load()) Crash();
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    const auto* v = static_cast<const int64_t*>(in[0]->GetTensor()->GetData());
    if (*v == 3) Crash();
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("CrashTest_CrashOnThree", CrashOnThree);

//   x ── id (devices.front()) ── crash (devices.back()) ── out
FlowGraph WithCrashNode(const std::vector<int32_t>& devices) {
  return testing::IdentityThen("crash", "crash", "CrashTest_CrashOnThree",
                               devices);
}

using ::hflow::testing::I64;

// In the child: streams 1, 2, 3 through the graph, printing each result to
// stderr as it is fetched (what reached the user before the crash).
void RunUntilCrash(const std::vector<int32_t>& devices, Mode mode,
                   bool crash_report, bool in_init = false) {
  g_mode = mode;
  g_crash_in_init = in_init;
  Options o;
  o.cluster = MakeLocalCluster(devices);
  o.crash_report = crash_report;
  if (!Initialize(o).ok()) std::exit(10);
  Session s;
  if (!s.AddGraph(1, WithCrashNode(devices)).ok()) std::exit(11);
  if (!s.BuildGraph(1).ok()) std::exit(12);
  for (int64_t v : {1, 2, 3}) {
    if (!s.FeedData(1, {I64(v)}, FlowInfo{}, kIoMs).ok()) std::exit(13);
    std::vector<Tensor> out;
    FlowInfo info;
    if (!s.FetchData(1, &out, &info, kIoMs).ok()) std::exit(14);
    std::fprintf(stderr, "result %lld\n",
                 static_cast<long long>(out.at(0).As<int64_t>().at(0)));
    std::fflush(stderr);
  }
  std::exit(0);  // not reached: transaction 3 crashes
}

// The crash line for node 'crash' on the set's last device, transaction 3,
// after results 1 and 2, as the last line.
std::string ProcCrashLine(const std::vector<int32_t>& devices,
                          const std::string& signal) {
  return "result 1\nresult 2\nhflow: crash: " + signal +
         " in node 'crash' function 'CrashTest_CrashOnThree' \\(replica 0\\) "
         "on device " +
         std::to_string(devices.back()) + " while processing transaction 3\n$";
}

class UdfCrashTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    // The parent has threads (sim agents): the child re-executes the test.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    testing::LeaveCrashSignalsToTheProcess();
    (void)Finalize();
  }
};

TEST_P(UdfCrashTest, NullDereferenceInProcNamesNodeAndTransaction) {
  EXPECT_EXIT(RunUntilCrash(GetParam(), Mode::kNullDeref, true),
              KilledBySignal(SIGSEGV), ProcCrashLine(GetParam(), "SIGSEGV"));
}

TEST_P(UdfCrashTest, AbortInProcNamesNodeAndTransaction) {
  EXPECT_EXIT(RunUntilCrash(GetParam(), Mode::kAbort, true),
              KilledBySignal(SIGABRT), ProcCrashLine(GetParam(), "SIGABRT"));
}

TEST_P(UdfCrashTest, DivisionByZeroInProcNamesNodeAndTransaction) {
  EXPECT_EXIT(RunUntilCrash(GetParam(), Mode::kDivZero, true),
              KilledBySignal(SIGFPE), ProcCrashLine(GetParam(), "SIGFPE"));
}

TEST_P(UdfCrashTest, IllegalInstructionInProcNamesNodeAndTransaction) {
  EXPECT_EXIT(RunUntilCrash(GetParam(), Mode::kTrap, true),
              KilledBySignal(SIGILL), ProcCrashLine(GetParam(), "SIGILL"));
}

TEST_P(UdfCrashTest, BusErrorInProcNamesNodeAndTransaction) {
  EXPECT_EXIT(RunUntilCrash(GetParam(), Mode::kRaiseBus, true),
              KilledBySignal(SIGBUS), ProcCrashLine(GetParam(), "SIGBUS"));
}

TEST_P(UdfCrashTest, CrashInInitSaysInit) {
  EXPECT_EXIT(RunUntilCrash(GetParam(), Mode::kNullDeref, true, true),
              KilledBySignal(SIGSEGV),
              "hflow: crash: SIGSEGV in node 'crash' function "
              "'CrashTest_CrashOnThree' \\(replica 0\\) on device " +
                  std::to_string(GetParam().back()) + " while running Init\n$");
}

TEST_P(UdfCrashTest, WithoutCrashReportNoLineIsWritten) {
  EXPECT_EXIT(
      RunUntilCrash(GetParam(), Mode::kNullDeref, false),
      KilledBySignal(SIGSEGV),
      ::testing::AllOf(HasSubstr("result 2"), Not(HasSubstr("hflow: crash"))));
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, UdfCrashTest,
                         ::testing::Values(std::vector<int32_t>{0, 1},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

// A crash on a thread that runs no UDF is not blamed on one.
TEST(CrashReportTest, CrashOutsideUdfCodeSaysSo) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  testing::LeaveCrashSignalsToTheProcess();
  EXPECT_EXIT(
      {
        Options o;
        o.cluster = MakeLocalCluster({2, 3});
        o.crash_report = true;
        if (!Initialize(o).ok()) std::exit(10);
        raise(SIGSEGV);
      },
      KilledBySignal(SIGSEGV),
      "hflow: crash: SIGSEGV outside UDF code \\(thread '");
}

// Finalize puts the previous handlers back: a later crash prints nothing.
TEST(CrashReportTest, FinalizeUninstallsTheHandlers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  testing::LeaveCrashSignalsToTheProcess();
  EXPECT_EXIT(
      {
        Options o;
        o.cluster = MakeLocalCluster({3, 6, 7});
        o.crash_report = true;
        if (!Initialize(o).ok() || !Finalize().ok()) std::exit(10);
        raise(SIGSEGV);
      },
      KilledBySignal(SIGSEGV), Not(HasSubstr("hflow: crash")));
}

}  // namespace
}  // namespace hflow
