// `hflow ctxcheck`'s report from JSON lines: sites merged across the
// processes of a run (counts summed, devices joined), a torn last line
// kept as a warning, the exit status of each outcome, and the SARIF log's
// rules, results and locations.
#include "tools/ctxcheck_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace hflow::tools {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;

Json Finding(const std::string& site, int64_t pid, const std::string& kind,
             const std::string& op, int device) {
  return {{"type", "finding"},
          {"schema", 1},
          {"site", site},
          {"kind", kind},
          {"op", op},
          {"pid", pid},
          {"count", 1},
          {"devices", Json::array({device})},
          {"message", op + " on device " + std::to_string(device)},
          {"thread", {{"name", "pool-1"}, {"tid", pid + 1}, {"pid", pid}}},
          {"frames", Json::array({Json{{"pc", "0x10"},
                                       {"module", "/nonexistent/prog"},
                                       {"module_offset", "0x10"},
                                       {"function", "Work()"},
                                       {"user", true}}})}};
}

Json Count(const std::string& site, int64_t pid, uint64_t count,
           std::vector<int> devices) {
  return {{"type", "count"}, {"site", site},       {"pid", pid},
          {"count", count},  {"devices", devices}, {"final", true}};
}

class CtxCheckReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "ctxcheck_report_" +
            std::to_string(getpid()) + ".jsonl";
  }
  void TearDown() override { std::remove(path_.c_str()); }

  void WriteLines(const std::vector<std::string>& lines) {
    std::ofstream out(path_);
    for (const std::string& l : lines) out << l << "\n";
  }

  std::string path_;
};

TEST_F(CtxCheckReportTest, SitesMergeAcrossProcesses) {
  WriteLines({Json{{"type", "process"}, {"pid", 10}, {"exe", "/a"}}.dump(),
              Json{{"type", "process"}, {"pid", 20}, {"exe", "/b"}}.dump(),
              Finding("aa", 10, "unbound", "Malloc", 2).dump(),
              Finding("bb", 10, "cross_device", "Free", 3).dump(),
              Count("aa", 10, 2, {2}).dump(),
              Finding("aa", 20, "unbound", "Malloc", 4).dump(),
              Count("aa", 20, 4, {4}).dump(), Count("aa", 10, 5, {2, 5}).dump(),
              R"({"type": "finding", "site": "cc", "pi)"});  // torn
  CtxCheckReport r;
  ASSERT_TRUE(ReadFindings(path_, &r).ok());
  ASSERT_EQ(r.processes.size(), 2u);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].first["site"], "aa");
  EXPECT_EQ(r.findings[0].count, 9u) << "5 in pid 10, 4 in pid 20";
  EXPECT_EQ(r.findings[0].pids, (std::set<int64_t>{10, 20}));
  EXPECT_EQ(r.findings[0].devices, (std::set<int32_t>{2, 4, 5}));
  EXPECT_EQ(r.findings[1].count, 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("line 9"));
  r.child.started = r.child.exited = true;
  EXPECT_EQ(ExitCodeOf(r), kCtxFindings);
  Json j = ReportJson(r);
  EXPECT_EQ(j["summary"]["sites"], 2);
  EXPECT_EQ(j["summary"]["hits"], 10);
  EXPECT_EQ(j["summary"]["by_kind"]["unbound"], 1);
  EXPECT_EQ(j["findings"][0]["count"], 9);
  EXPECT_FALSE(j["findings"][0].contains("type"));
  EXPECT_THAT(ReportText(r), HasSubstr("9 hits in 2 processes"));
}

TEST_F(CtxCheckReportTest, ExitCodesOfEachOutcome) {
  CtxCheckReport r;
  r.child.spawn_errno = ENOENT;
  EXPECT_EQ(ExitCodeOf(r), kCtxNotFound);
  r.child.spawn_errno = EACCES;
  EXPECT_EQ(ExitCodeOf(r), kCtxCannotExecute);
  r.child.started = true;
  r.child.exited = true;
  EXPECT_EQ(ExitCodeOf(r), kCtxNoHflow) << "no process line";
  r.processes.push_back(Json{{"type", "process"}, {"pid", 1}});
  EXPECT_EQ(ExitCodeOf(r), kCtxClean);
  r.child.exit_code = 3;
  EXPECT_EQ(ExitCodeOf(r), kCtxProgramFailed);
  r.findings.emplace_back();
  EXPECT_EQ(ExitCodeOf(r), kCtxFindings) << "findings win over the status";
  r.child.timed_out = true;
  EXPECT_EQ(ExitCodeOf(r), kCtxTimeout);
}

TEST_F(CtxCheckReportTest, SarifHasRulesResultsAndLocations) {
  CtxCheckReport r;
  r.command = {"prog", "a b"};
  r.child.started = r.child.exited = true;
  MergedFinding f;
  f.first = Finding("aa", 10, "context_leak", "SetDevice", 5);
  f.first["frames"][0]["file"] = "/src/my prog.cc";
  f.first["frames"][0]["line"] = 42;
  f.first["udf"] = {{"node", "n"}};
  f.count = 3;
  r.findings.push_back(f);
  MergedFinding g;
  g.first = Finding("bb", 10, "unbound", "Malloc", 2);
  r.findings.push_back(g);
  Json s = SarifJson(r);
  EXPECT_EQ(s["version"], "2.1.0");
  const Json& run = s["runs"][0];
  const Json& rules = run["tool"]["driver"]["rules"];
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0]["id"], "HFLOW-CTX001");
  EXPECT_EQ(rules[2]["id"], "HFLOW-CTX003");
  EXPECT_EQ(run["invocations"][0]["commandLine"], "prog a b");
  const Json& leak = run["results"][0];
  EXPECT_EQ(leak["ruleId"], "HFLOW-CTX003");
  EXPECT_EQ(leak["ruleIndex"], 2);
  const Json& phys = leak["locations"][0]["physicalLocation"];
  EXPECT_EQ(phys["artifactLocation"]["uri"], "file:///src/my%20prog.cc");
  EXPECT_EQ(phys["region"]["startLine"], 42);
  EXPECT_EQ(leak["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
            "Work()");
  EXPECT_EQ(leak["properties"]["count"], 3);
  EXPECT_EQ(leak["properties"]["udf"]["node"], "n");
  // Without a line, the module is the location.
  const Json& unbound = run["results"][1];
  EXPECT_EQ(unbound["ruleId"], "HFLOW-CTX001");
  EXPECT_EQ(
      unbound["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
      "file:///nonexistent/prog");
  EXPECT_FALSE(unbound["locations"][0]["physicalLocation"].contains("region"));
}

TEST_F(CtxCheckReportTest, ReportsAreWrittenWholeOrNotAtAll) {
  EXPECT_FALSE(WriteJsonFile("/no/such/dir/r.json", Json::object()).ok());
  ASSERT_TRUE(WriteJsonFile(path_, Json{{"a", 1}}).ok());
  std::ifstream in(path_);
  EXPECT_EQ(Json::parse(in)["a"], 1);
}

}  // namespace
}  // namespace hflow::tools
