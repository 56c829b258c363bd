// hflow ctxcheck, library mode (issue 43 step 1): the sim's detection of
// unbound device calls and of cross-device access, report and strict
// semantics, site deduplication with counts, the JSONL output and the mode
// from RuntimeOptions and the environment. Each test sets the mode through
// the options, so none depends on the process environment; the one that
// reads the environment runs this binary as a child.
#include "rt/ctxcheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "test_util.h"

namespace hflow {
namespace rt {
namespace {

using ctxcheck::Kind;
using ctxcheck::Mode;
using ::hflow::testing::RunOnFreshThread;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using Json = nlohmann::json;

std::shared_ptr<SimRuntime> MakeChecked(const std::vector<int32_t>& devices,
                                        std::optional<Mode> mode,
                                        bool record_calls = false) {
  SimOptions o;
  o.cluster = MakeLocalCluster(devices);
  o.ctxcheck = mode;
  o.record_calls = record_calls;
  std::shared_ptr<SimRuntime> sim;
  Status s = SimRuntime::Create(std::move(o), &sim);
  if (!s.ok()) throw std::runtime_error(s.ToString());
  return sim;
}

std::vector<ctxcheck::Site> SitesOf(Op op) {
  std::vector<ctxcheck::Site> out;
  for (auto& s : ctxcheck::Sites()) {
    if (s.note.op == op) out.push_back(s);
  }
  return out;
}

std::vector<Json> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<Json> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(Json::parse(line));
  return lines;
}

// Findings go to a file of the test's own (not stderr), and the site table
// starts empty.
class CtxCheckTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    std::string name =
        ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    file_ = ::testing::TempDir() + "ctxcheck_" + std::to_string(getpid()) +
            "_" + name + ".jsonl";
    std::remove(file_.c_str());
    ctxcheck::internal::ResetSites();
    ctxcheck::internal::SetOutputFile(file_);
  }
  void TearDown() override {
    ctxcheck::internal::ResetSites();
    const char* env = std::getenv("HFLOW_CTXCHECK_FILE");
    ctxcheck::internal::SetOutputFile(env ? env : "");
    std::remove(file_.c_str());
  }
  const std::vector<int32_t>& devices() const { return GetParam(); }
  int32_t a() const { return GetParam()[0]; }
  int32_t b() const { return GetParam()[1]; }

  std::string file_;
};

TEST_P(CtxCheckTest, UnboundMallocInReportModeIsOneFindingAndSucceeds) {
  auto sim = MakeChecked(devices(), Mode::kReport);
  RunOnFreshThread(
      [&] {
        void* p = nullptr;
        ASSERT_TRUE(sim->Malloc(a(), 64, &p).ok());
        EXPECT_NE(p, nullptr);
        // Still on the implicit binding: found as well, and it succeeds.
        EXPECT_TRUE(sim->Free(a(), p).ok());
      },
      "ctx-pool");
  auto mallocs = SitesOf(Op::kMalloc);
  ASSERT_THAT(mallocs, SizeIs(1));
  const ctxcheck::Site& s = mallocs[0];
  EXPECT_EQ(s.kind, Kind::kUnbound);
  EXPECT_EQ(s.note.device, a());
  EXPECT_EQ(s.note.touched, a());
  EXPECT_EQ(s.note.ctx_device, -1);
  EXPECT_EQ(s.note.continued_on, a());
  EXPECT_FALSE(s.note.on_implicit);
  EXPECT_EQ(s.result, "ok");
  EXPECT_EQ(s.mode, "report");
  EXPECT_EQ(s.thread, "ctx-pool");
  EXPECT_EQ(s.pid, getpid());
  EXPECT_GT(s.tid, 0);
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(s.devices, std::vector<int32_t>{a()});
  EXPECT_FALSE(s.frames.empty());
  EXPECT_THAT(s.message, HasSubstr("EE1018"));
  auto frees = SitesOf(Op::kFree);
  ASSERT_THAT(frees, SizeIs(1));
  EXPECT_EQ(frees[0].kind, Kind::kUnbound);
  EXPECT_TRUE(frees[0].note.on_implicit);
  EXPECT_EQ(frees[0].note.ctx_device, a());
  // Continued as the quirk does, and counted like it.
  EXPECT_EQ(testing::ImplicitBindings(*sim, {a()}), 1u);
}

TEST_P(CtxCheckTest, StrictModeFailsUnboundCallsWithEE1018) {
  auto strict = MakeChecked(devices(), Mode::kStrict);
  auto off = MakeChecked(devices(), Mode::kOff);
  RunOnFreshThread([&] {
    void* p = nullptr;
    Status s = strict->Malloc(a(), 64, &p);
    EXPECT_EQ(s.code(), StatusCode::kNoContext);
    EXPECT_THAT(s.message(), HasSubstr("EE1018"));
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(strict->GetCurrentContext(), nullptr);  // nothing bound
  });
  auto sites = ctxcheck::Sites();
  ASSERT_THAT(sites, SizeIs(1));
  EXPECT_EQ(sites[0].kind, Kind::kUnbound);
  EXPECT_EQ(sites[0].result, "no_context");
  EXPECT_EQ(sites[0].note.continued_on, -1);
  EXPECT_EQ(testing::ImplicitBindings(*strict, devices()), 0u);
  // The bite: on a set with device 0 the quirk passes this very call when
  // the check is off, so only strict mode shows the failure Ascend gives
  // off the default device.
  RunOnFreshThread([&] {
    void* p = nullptr;
    Status s = off->Malloc(a(), 64, &p);
    if (off->DefaultDevice() == a()) {
      EXPECT_TRUE(s.ok()) << s.ToString();
      EXPECT_TRUE(off->Free(a(), p).ok());
    } else {
      EXPECT_EQ(s.code(), StatusCode::kNoContext);
    }
  });
  EXPECT_THAT(ctxcheck::Sites(), SizeIs(1));  // off found nothing
}

TEST_P(CtxCheckTest, AnImplicitBindingStaysFoundUntilAnExplicitBind) {
  auto sim = MakeChecked(devices(), Mode::kReport);
  RunOnFreshThread([&] {
    void* p[4] = {};
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(sim->Malloc(a(), 64, &p[i]).ok());
    ASSERT_TRUE(sim->SetDevice(a()).ok());  // explicit: clean from here
    ASSERT_TRUE(sim->Malloc(a(), 64, &p[3]).ok());
    for (void* q : p) ASSERT_TRUE(sim->Free(a(), q).ok());
    ASSERT_TRUE(sim->ResetDevice(a()).ok());
  });
  auto sites = ctxcheck::Sites();
  ASSERT_THAT(sites, SizeIs(1));  // one site, three calls
  EXPECT_EQ(sites[0].note.op, Op::kMalloc);
  EXPECT_EQ(sites[0].count, 3u);
}

TEST_P(CtxCheckTest, DeviceArgumentOfAnotherContextIsCrossDevice) {
  auto sim = MakeChecked(devices(), Mode::kReport);
  auto off = MakeChecked(devices(), Mode::kOff);
  StatusCode checked = StatusCode::kOk, plain = StatusCode::kOk;
  auto mismatch = [&](SimRuntime& rt, StatusCode* code) {
    RunOnFreshThread([&] {
      ASSERT_TRUE(rt.SetDevice(a()).ok());
      void* p = nullptr;
      *code = rt.Malloc(b(), 64, &p).code();
      ASSERT_TRUE(rt.ResetDevice(a()).ok());
    });
  };
  mismatch(*sim, &checked);
  mismatch(*off, &plain);
  EXPECT_EQ(checked, StatusCode::kContextMismatch);
  EXPECT_EQ(plain, checked);  // the result is unchanged
  auto sites = ctxcheck::Sites();
  ASSERT_THAT(sites, SizeIs(1));
  EXPECT_EQ(sites[0].kind, Kind::kCrossDevice);
  EXPECT_EQ(sites[0].note.op, Op::kMalloc);
  EXPECT_EQ(sites[0].note.device, b());
  EXPECT_EQ(sites[0].note.touched, b());
  EXPECT_EQ(sites[0].note.ctx_device, a());
  EXPECT_EQ(sites[0].result, "context_mismatch");
}

TEST_P(CtxCheckTest, MemoryOfAnotherDeviceUnderAContextIsCrossDevice) {
  auto sim = MakeChecked(devices(), Mode::kReport);
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(b()).ok());
    void* pb = nullptr;
    ASSERT_TRUE(sim->Malloc(b(), 64, &pb).ok());
    ASSERT_TRUE(sim->SetDevice(a()).ok());
    char host[64] = {};
    EXPECT_EQ(sim->Memcpy(a(), pb, host, 64, MemcpyKind::kHostToDevice).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->Memcpy(a(), host, pb, 64, MemcpyKind::kDeviceToHost).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->Memset(a(), pb, 0, 64).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->Free(a(), pb).code(), StatusCode::kInvalidArgument);
    // A pointer that is no allocation at all is a plain error, no finding.
    EXPECT_EQ(sim->Free(a(), host).code(), StatusCode::kInvalidArgument);
    ASSERT_TRUE(sim->SetDevice(b()).ok());
    ASSERT_TRUE(sim->Free(b(), pb).ok());
    ASSERT_TRUE(sim->ResetDevice(b()).ok());
    ASSERT_TRUE(sim->ResetDevice(b()).ok());
    ASSERT_TRUE(sim->ResetDevice(a()).ok());
  });
  auto sites = ctxcheck::Sites();
  ASSERT_THAT(sites, SizeIs(4));
  for (const auto& s : sites) {
    EXPECT_EQ(s.kind, Kind::kCrossDevice) << OpName(s.note.op);
    EXPECT_EQ(s.note.device, a());
    EXPECT_EQ(s.note.touched, b());
    EXPECT_EQ(s.note.ctx_device, a());
    EXPECT_EQ(s.result, "invalid_argument");
    EXPECT_EQ(s.devices, std::vector<int32_t>{b()});
  }
  EXPECT_THAT(SitesOf(Op::kMemcpy), SizeIs(2));
  EXPECT_THAT(SitesOf(Op::kFree), SizeIs(1));
  EXPECT_THAT(SitesOf(Op::kMemset), SizeIs(1));
}

// What the call log shows of one scenario: bound calls, an unbound one, a
// mismatch.
std::vector<std::tuple<Op, int32_t, int32_t, bool, StatusCode>> LogOf(
    SimRuntime& sim, int32_t a, int32_t b, bool with_errors) {
  RunOnFreshThread([&] {
    void* p = nullptr;
    if (with_errors) (void)sim.Malloc(a, 64, &p);
    ASSERT_TRUE(sim.SetDevice(a).ok());
    ASSERT_TRUE(sim.Malloc(a, 64, &p).ok());
    if (with_errors) (void)sim.Malloc(b, 64, &p);
    ASSERT_TRUE(sim.Free(a, p).ok());
    ASSERT_TRUE(sim.ResetDevice(a).ok());
  });
  std::vector<std::tuple<Op, int32_t, int32_t, bool, StatusCode>> out;
  for (const CallRecord& r : sim.CallLog()) {
    out.emplace_back(r.op, r.device, r.bound_device, r.implicit_binding,
                     r.result);
  }
  return out;
}

TEST_P(CtxCheckTest, OffFindsNothingAndLeavesTheCallLogUnchanged) {
  auto off = MakeChecked(devices(), Mode::kOff, /*record_calls=*/true);
  auto log = LogOf(*off, a(), b(), /*with_errors=*/true);
  EXPECT_THAT(ctxcheck::Sites(), SizeIs(0));
  ASSERT_THAT(log, SizeIs(6));
  // As before ctxcheck: the unbound Malloc fails off the default device.
  EXPECT_EQ(std::get<4>(log[0]), off->DefaultDevice() == a()
                                     ? StatusCode::kOk
                                     : StatusCode::kNoContext);
  EXPECT_EQ(std::get<4>(log[3]), StatusCode::kContextMismatch);
  // A correct program's log is the same with the check on.
  auto plain = MakeChecked(devices(), Mode::kOff, true);
  auto checked = MakeChecked(devices(), Mode::kReport, true);
  EXPECT_EQ(LogOf(*plain, a(), b(), false), LogOf(*checked, a(), b(), false));
  EXPECT_THAT(ctxcheck::Sites(), SizeIs(0));
}

TEST_P(CtxCheckTest, JsonLinesHaveTheFields) {
  auto sim = MakeChecked(devices(), Mode::kReport);
  RunOnFreshThread(
      [&] {
        void* p[3] = {};
        for (int i = 0; i < 3; ++i) {
          ASSERT_TRUE(sim->Malloc(a(), 64, &p[i]).ok());
        }
        void* q = nullptr;
        (void)sim->Malloc(b(), 64, &q);  // bound to a(): cross-device
      },
      "json-pool");
  ctxcheck::internal::WriteFinalCounts();
  std::vector<Json> lines = ReadLines(file_);
  std::vector<Json> findings, counts;
  for (const Json& j : lines) {
    if (j.at("type") == "process") continue;  // the first test's only
    (j.at("type") == "finding" ? findings : counts).push_back(j);
  }
  ASSERT_THAT(findings, SizeIs(2));
  const Json& f = findings[0];
  EXPECT_EQ(f.at("schema"), 1);
  EXPECT_EQ(f.at("kind"), "unbound");
  EXPECT_EQ(f.at("op"), "Malloc");
  EXPECT_EQ(f.at("mode"), "report");
  EXPECT_EQ(f.at("device"), a());
  EXPECT_EQ(f.at("touched_device"), a());
  EXPECT_TRUE(f.at("context_device").is_null());
  EXPECT_EQ(f.at("continued_on"), a());
  EXPECT_EQ(f.at("result"), "ok");
  EXPECT_EQ(f.at("thread").at("name"), "json-pool");
  EXPECT_EQ(f.at("thread").at("pid"), getpid());
  EXPECT_GT(f.at("thread").at("tid").get<int64_t>(), 0);
  EXPECT_EQ(f.at("site").get<std::string>().size(), 16u);
  EXPECT_THAT(f.at("message").get<std::string>(), HasSubstr("json-pool"));
  ASSERT_FALSE(f.at("frames").empty());
  bool user = false;
  for (const Json& fr : f.at("frames")) {
    EXPECT_TRUE(fr.contains("pc") && fr.contains("module") &&
                fr.contains("function") && fr.contains("user"));
    user = user || fr.at("user").get<bool>();
  }
  EXPECT_TRUE(user);  // this test's own frames
  EXPECT_FALSE(f.at("location").is_null());
  const Json& x = findings[1];
  EXPECT_EQ(x.at("kind"), "cross_device");
  EXPECT_EQ(x.at("context_device"), a());
  EXPECT_EQ(x.at("touched_device"), b());
  // Counts: 2 at the power of two, 3 at the end, both of the first site.
  ASSERT_THAT(counts, SizeIs(2));
  EXPECT_EQ(counts[0].at("site"), f.at("site"));
  EXPECT_EQ(counts[0].at("count"), 2);
  EXPECT_EQ(counts[0].at("final"), false);
  EXPECT_EQ(counts[1].at("count"), 3);
  EXPECT_EQ(counts[1].at("final"), true);
}

// A script interpreter's stack (Note [Script stacks]), faked: the line the
// "script" is at is this thread's t_script_line (0: no script).
thread_local int t_script_line = 0;
bool FakeScript(ctxcheck::ScriptStack* out) {
  if (t_script_line == 0) return false;
  out->language = "python";
  out->thread = "py-thread";
  out->frames = {
      {"work", "/app/job.py", t_script_line, true},
      {"Thread.run", "/usr/lib/python3.11/threading.py", 975, false}};
  return true;
}

TEST_P(CtxCheckTest, ScriptLinesKeyTheSitesAndAreTheLocation) {
  auto sim = MakeChecked(devices(), Mode::kReport);
  ctxcheck::SetScriptStackProvider(&FakeScript);
  RunOnFreshThread(
      [&] {
        // One native call site, reached from three script lines (12 twice):
        // two sites.
        for (int line : {12, 12, 30}) {
          t_script_line = line;
          void* p = nullptr;
          ASSERT_TRUE(sim->Malloc(a(), 64, &p).ok());
        }
        t_script_line = 0;
      },
      "native-name");
  ctxcheck::SetScriptStackProvider(nullptr);
  auto mallocs = SitesOf(Op::kMalloc);
  ASSERT_THAT(mallocs, SizeIs(2));
  EXPECT_EQ(mallocs[0].count, 2u);
  EXPECT_EQ(mallocs[1].count, 1u);
  EXPECT_EQ(mallocs[0].thread, "py-thread") << "the script's thread name";
  const ctxcheck::ScriptFrame* f = ctxcheck::FirstUserScriptFrame(mallocs[0]);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->line, 12);
  EXPECT_EQ(ctxcheck::FirstUserScriptFrame(mallocs[1])->line, 30);
  std::vector<Json> findings;
  for (const Json& j : ReadLines(file_)) {
    if (j.at("type") == "finding") findings.push_back(j);
  }
  ASSERT_THAT(findings, SizeIs(2));
  const Json& loc = findings[0].at("location");
  EXPECT_EQ(loc.at("language"), "python");
  EXPECT_EQ(loc.at("file"), "/app/job.py");
  EXPECT_EQ(loc.at("line"), 12);
  EXPECT_EQ(loc.at("function"), "work");
  const Json& stack = findings[0].at("python_stack");
  ASSERT_THAT(stack, SizeIs(2));
  EXPECT_EQ(stack[1].at("function"), "Thread.run");
  EXPECT_EQ(stack[1].at("user"), false);
  EXPECT_FALSE(findings[0].at("frames").empty()) << "the native stack stays";
  // Without a provider the same call is one more, native-only site.
  RunOnFreshThread(
      [&] {
        void* p = nullptr;
        ASSERT_TRUE(sim->Malloc(a(), 64, &p).ok());
      },
      "native-name");
  auto after = SitesOf(Op::kMalloc);
  ASSERT_THAT(after, SizeIs(3));
  EXPECT_TRUE(after[2].script.frames.empty());
  EXPECT_EQ(after[2].thread, "native-name");
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, CtxCheckTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1, 2}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

TEST(CtxCheckModeTest, EnvironmentValues) {
  bool known = false;
  for (const char* v : {"report", "1", "on"}) {
    EXPECT_EQ(ctxcheck::internal::ParseEnvValue(v, &known), Mode::kReport);
    EXPECT_TRUE(known);
  }
  EXPECT_EQ(ctxcheck::internal::ParseEnvValue("strict", &known), Mode::kStrict);
  for (const char* v : {"off", "0", ""}) {
    EXPECT_EQ(ctxcheck::internal::ParseEnvValue(v, &known), Mode::kOff);
    EXPECT_TRUE(known);
  }
  EXPECT_EQ(ctxcheck::internal::ParseEnvValue(nullptr, &known), Mode::kOff);
  EXPECT_TRUE(known);
  EXPECT_EQ(ctxcheck::internal::ParseEnvValue("yes please", &known),
            Mode::kOff);
  EXPECT_FALSE(known);
}

TEST(CtxCheckModeTest, RuntimeOptionsSwitchItOn) {
  InstalledRuntime before = GetInstalledRuntime();
  for (const char* name : {"off", "report", "strict"}) {
    RuntimeOptions o;
    o.cluster = MakeLocalCluster({2, 3});
    o.ctxcheck = name;
    std::shared_ptr<DeviceRuntime> r;
    ASSERT_TRUE(InitializeRuntime(o, &r).ok()) << name;
    auto* sim = dynamic_cast<SimRuntime*>(r.get());
    ASSERT_NE(sim, nullptr);
    EXPECT_STREQ(ctxcheck::ModeName(sim->CtxCheck()), name);
  }
  RuntimeOptions bad;
  bad.ctxcheck = "loud";
  Status s = InitializeRuntime(bad);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'loud'"));
  RuntimeOptions a, b;
  b.ctxcheck = "strict";
  EXPECT_TRUE(SameRuntime(a, b));  // a held runtime can be switched later
  // Later tests get the runtime they had, not a strict one.
  if (before.runtime) {
    internal::InstallMadeRuntime(before.runtime, before.options);
  }
}

// Run by the next test as a child with HFLOW_CTXCHECK=report and
// HFLOW_CTXCHECK_FILE set; skipped otherwise. Its sim takes the mode from
// the environment; the final count is written at exit.
TEST(CtxCheckEnvChild, ThreeUnboundCalls) {
  if (std::getenv("HFLOW_CTXCHECK_TEST_CHILD") == nullptr) {
    GTEST_SKIP() << "run by CtxCheckEnvTest as a child process";
  }
  auto sim = MakeChecked({2, 3}, std::nullopt);
  RunOnFreshThread(
      [&] {
        void* p[3] = {};
        for (void*& q : p) ASSERT_TRUE(sim->Malloc(3, 64, &q).ok());
      },
      "env-pool");
}

TEST(CtxCheckEnvTest, EnvironmentSwitchesItOnAndNamesTheFile) {
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  ASSERT_GT(n, 0);
  exe[n] = '\0';
  std::string file = ::testing::TempDir() + "ctxcheck_env_" +
                     std::to_string(getpid()) + ".jsonl";
  std::remove(file.c_str());
  std::string cmd =
      // Not the parent's gtest shard (sanitized runs shard the suite): the
      // child's filter names one test, which another shard may own.
      "env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX "
      "HFLOW_CTXCHECK_TEST_CHILD=1 HFLOW_CTXCHECK=report "
      "HFLOW_CTXCHECK_FILE='" +
      file + "' '" + exe +
      "' --gtest_filter=CtxCheckEnvChild.* >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::vector<Json> lines = ReadLines(file);
  std::remove(file.c_str());
  // The child's process line (Note [The process line]), then a finding,
  // count 2 and the final count 3.
  ASSERT_THAT(lines, SizeIs(4));
  EXPECT_EQ(lines[0].at("type"), "process");
  EXPECT_EQ(lines[0].at("pid"), lines[1].at("pid"));
  EXPECT_EQ(lines[0].at("exe"), std::string(exe));
  lines.erase(lines.begin());
  EXPECT_EQ(lines[0].at("type"), "finding");
  EXPECT_EQ(lines[0].at("mode"), "report");
  EXPECT_EQ(lines[0].at("device"), 3);
  EXPECT_EQ(lines[0].at("thread").at("name"), "env-pool");
  EXPECT_NE(lines[0].at("pid"), getpid());
  EXPECT_EQ(lines[2].at("type"), "count");
  EXPECT_EQ(lines[2].at("count"), 3);
  EXPECT_EQ(lines[2].at("final"), true);
}

}  // namespace
}  // namespace rt
}  // namespace hflow
