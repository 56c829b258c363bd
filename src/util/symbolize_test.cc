// util::Symbolize and friends: a function of this binary resolves to its
// demangled name and module, capture skips frames as asked, and the user
// frame rule tells hflow's and the system's modules from the user's.
#include "util/symbolize.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace hflow {
namespace util {

// Exported from the test binary by name (tests/CMakeLists.txt,
// --export-dynamic-symbol): dladdr sees only dynamic symbols. noinline, so
// the frame is its own.
__attribute__((noinline)) std::vector<uintptr_t> SymbolizeTestTarget(int n) {
  std::vector<uintptr_t> pcs = CaptureStack(/*skip=*/0, n);
  asm volatile("" ::: "memory");  // no tail call: keep this frame
  return pcs;
}

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, n) : "";
}

TEST(SymbolizeTest, ResolvesAFunctionOfThisBinaryDemangled) {
  std::vector<uintptr_t> pcs = SymbolizeTestTarget(4);
  ASSERT_FALSE(pcs.empty());
  // The first frame is SymbolizeTestTarget's own: the return address of its
  // CaptureStack call.
  Frame f = Symbolize(pcs[0]);
  EXPECT_THAT(f.function, StartsWith("hflow::util::SymbolizeTestTarget(int)"));
  EXPECT_GT(f.offset, 0u);
  EXPECT_NE(f.module_base, 0u);
  EXPECT_EQ(f.module, SelfExe());
  EXPECT_FALSE(IsHflowOrSystemModule(f.module));  // the user's code
  EXPECT_THAT(FormatFrame(f), HasSubstr("SymbolizeTestTarget(int)+0x"));
  EXPECT_EQ(ModuleOf(pcs[0]).module, f.module);
  EXPECT_EQ(ModuleOf(pcs[0]).module_base, f.module_base);
}

TEST(SymbolizeTest, CaptureSkipsAndLimits) {
  std::vector<uintptr_t> all = SymbolizeTestTarget(16);
  std::vector<uintptr_t> one = SymbolizeTestTarget(1);
  ASSERT_THAT(one, ::testing::SizeIs(1));
  ASSERT_GT(all.size(), 2u);
  EXPECT_EQ(Symbolize(one[0]).function, Symbolize(all[0]).function);
}

TEST(SymbolizeTest, DemanglesAndKeepsPlainNames) {
  EXPECT_EQ(Demangle("_ZN5hflow4util8DemangleEPKc"),
            "hflow::util::Demangle(char const*)");
  EXPECT_EQ(Demangle("main"), "main");
  EXPECT_EQ(Demangle(nullptr), "");
}

TEST(SymbolizeTest, HflowAndSystemModulesAreNotUserCode) {
  EXPECT_TRUE(IsHflowOrSystemModule("/opt/sdk/lib64/libhflow.so"));
  EXPECT_TRUE(IsHflowOrSystemModule("/opt/sdk/lib64/libascendcl.so"));
  EXPECT_TRUE(IsHflowOrSystemModule("/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(IsHflowOrSystemModule("/usr/lib/x86_64-linux-gnu/libstdc++.so"));
  EXPECT_FALSE(IsHflowOrSystemModule("/home/u/prog"));
  EXPECT_FALSE(IsHflowOrSystemModule("/home/u/libmyudf.so"));
  EXPECT_FALSE(IsHflowOrSystemModule(""));
}

TEST(SymbolizeTest, AFrameWithoutSymbolShowsItsModuleOffset) {
  Frame f;
  f.pc = 0x1234;
  f.module_base = 0x1000;
  f.module = "/home/u/prog";
  EXPECT_EQ(FormatFrame(f), "prog+0x234 (/home/u/prog)");
}

TEST(SymbolizeTest, UnknownPcKeepsThePc) {
  Frame f = Symbolize(0x10);
  EXPECT_TRUE(f.function.empty());
  EXPECT_TRUE(f.module.empty());
  EXPECT_EQ(FormatFrame(f), "0x10");
}

}  // namespace
}  // namespace util
}  // namespace hflow
