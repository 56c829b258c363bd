// End-to-end tests of `hflow ctxcheck`: the built CLI runs the small
// programs of tests/ctxcheck_programs and reports, on {2,3,4,5}, {3,6,7}
// and sets with 0: a pool thread's unbound ACL calls (thread, call,
// file:line of the call in acl_pool.cc), the same program fixed (clean),
// a thread on device A freeing device B's memory (cross_device), a UDF
// that leaves its thread on another device (context_leak, naming it), and
// --strict failing the unbound call as EE1018 does. The JSON report and
// the SARIF log are checked field by field; bad input gets its own exit
// status and the reports stay whole JSON.
//
// Thread-safety: single-threaded; each test writes into its own temp dir.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::CliResult;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// The line of acl_pool.cc or udf_switch.cc holding "CTXCHECK: <tag>".
int LineOf(const std::string& file, const std::string& tag) {
  std::ifstream in(std::string(HFLOW_CTXCHECK_PROGRAM_DIR) + "/" + file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find("CTXCHECK: " + tag) != std::string::npos) return n;
  }
  return -1;
}

std::string List(const std::vector<int32_t>& d) {
  std::string s;
  for (int32_t v : d) s += (s.empty() ? "" : ",") + std::to_string(v);
  return s;
}

class CtxCheckCommandTest
    : public hflow::testing::CliTest,
      public ::testing::WithParamInterface<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    env_ = "-u RESOURCE_CONFIG_PATH -u HFLOW_CTXCHECK -u HFLOW_CTXCHECK_FILE";
  }

  // Runs `hflow ctxcheck --devices <set> --json --sarif <extra> -- <prog>`
  // and reads both reports (each must be whole JSON whatever happened).
  CliResult Check(const std::string& extra, const std::string& program) {
    CliResult r = Run("ctxcheck --devices " + List(GetParam()) + " --json '" +
                      dir_ + "/r.json' --sarif '" + dir_ + "/r.sarif' " +
                      extra + " -- " + program);
    report_ = Json::parse(Read(dir_ + "/r.json"), nullptr, false);
    sarif_ = Json::parse(Read(dir_ + "/r.sarif"), nullptr, false);
    EXPECT_FALSE(report_.is_discarded()) << r.err;
    EXPECT_FALSE(sarif_.is_discarded()) << r.err;
    return r;
  }

  std::vector<Json> Findings(const std::string& kind) const {
    std::vector<Json> out;
    for (const Json& f : report_["findings"]) {
      if (f["kind"] == kind) out.push_back(f);
    }
    return out;
  }

  std::string Pool(const std::string& mode, int32_t device) const {
    return std::string("'") + HFLOW_CTXCHECK_ACL_POOL + "' " + mode + " " +
           std::to_string(device);
  }

  int32_t Front() const { return GetParam().front(); }
  int32_t Back() const { return GetParam().back(); }

  Json report_, sarif_;
};

TEST_P(CtxCheckCommandTest, APoolThreadsUnboundCallsAreFoundWithFileAndLine) {
  CliResult r = Check("", Pool("unbound", Front()));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(report_["exit_code"], 1);
  EXPECT_EQ(report_["mode"], "report");
  EXPECT_EQ(report_["program"]["exit_code"], 0) << "report mode goes on";
  EXPECT_EQ(report_["devices"], Json(GetParam()));
  std::vector<Json> unbound = Findings("unbound");
  ASSERT_FALSE(unbound.empty()) << r.err;
  const Json& f = unbound[0];
  EXPECT_EQ(f["op"], "Malloc");
  EXPECT_EQ(f["device"], Front());
  EXPECT_EQ(f["thread"]["name"], "pool-1");
  EXPECT_EQ(f["location"]["line"], LineOf("acl_pool.cc", "malloc")) << f.dump();
  EXPECT_THAT(f["location"]["file"].get<std::string>(),
              HasSubstr("acl_pool.cc"));
  EXPECT_THAT(f["location"]["function"].get<std::string>(),
              HasSubstr("PoolWork"));
  // Every later call of the thread is found too (it stays on the implicit
  // binding), the free of the second allocation included.
  EXPECT_GE(report_["summary"]["sites"].get<int>(), 3);
  EXPECT_THAT(r.err, HasSubstr("unbound Malloc"));
  EXPECT_THAT(r.err, HasSubstr("thread 'pool-1'"));
  EXPECT_THAT(r.err, HasSubstr("acl_pool.cc:" + std::to_string(LineOf(
                                                    "acl_pool.cc", "malloc"))));
  // SARIF: the rule, the location at the call's line, the site as a
  // fingerprint, and the run's exit code.
  EXPECT_EQ(sarif_["version"], "2.1.0");
  const Json& run = sarif_["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "hflow ctxcheck");
  EXPECT_EQ(run["invocations"][0]["exitCode"], 0);
  const Json& res = run["results"][0];
  EXPECT_EQ(res["ruleId"], "HFLOW-CTX001");
  EXPECT_EQ(run["tool"]["driver"]["rules"][res["ruleIndex"].get<int>()]["id"],
            "HFLOW-CTX001");
  EXPECT_EQ(res["level"], "error");
  const Json& phys = res["locations"][0]["physicalLocation"];
  EXPECT_THAT(phys["artifactLocation"]["uri"].get<std::string>(),
              ::testing::StartsWith("file:///"));
  EXPECT_THAT(phys["artifactLocation"]["uri"].get<std::string>(),
              HasSubstr("acl_pool.cc"));
  EXPECT_EQ(phys["region"]["startLine"], LineOf("acl_pool.cc", "malloc"));
  EXPECT_EQ(res["partialFingerprints"]["hflowCtxcheckSite/v1"], f["site"]);
  EXPECT_EQ(run["results"].size(), report_["findings"].size());
}

TEST_P(CtxCheckCommandTest, TheFixedProgramIsClean) {
  CliResult r = Check("", Pool("fixed", Front()));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(report_["findings"].empty()) << report_.dump(1);
  EXPECT_EQ(report_["processes"].size(), 1u);
  EXPECT_THAT(r.err, HasSubstr("no findings in 1 process"));
  EXPECT_TRUE(sarif_["runs"][0]["results"].empty());
}

TEST_P(CtxCheckCommandTest, StrictFailsTheUnboundCallAsEE1018) {
  CliResult r = Check("--strict", Pool("unbound", Front()));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(report_["mode"], "strict");
  EXPECT_EQ(report_["program"]["exit_code"], 1) << "its error path ran";
  EXPECT_THAT(r.err, HasSubstr("acl_pool: aclrtMalloc failed: 107002"))
      << "ACL_ERROR_RT_CONTEXT_NULL, EE1018's code";
  std::vector<Json> unbound = Findings("unbound");
  ASSERT_EQ(unbound.size(), 1u) << "the first call failed; nothing followed";
  EXPECT_EQ(unbound[0]["result"], "no_context");
}

TEST_P(CtxCheckCommandTest, AUdfLeavingItsThreadOnAnotherDeviceIsNamed) {
  CliResult r =
      Check("", std::string("'") + HFLOW_CTXCHECK_UDF_SWITCH + "' leak");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(report_["program"]["exit_code"], 0)
      << "hflow rebinds; results hold";
  std::vector<Json> leaks = Findings("context_leak");
  ASSERT_EQ(leaks.size(), 1u) << r.err;
  EXPECT_EQ(leaks[0]["count"], 3);
  EXPECT_EQ(leaks[0]["udf"]["node"], "switcher");
  EXPECT_EQ(leaks[0]["udf"]["function"], "Switcher");
  EXPECT_EQ(leaks[0]["udf"]["phase"], "Proc");
  EXPECT_EQ(leaks[0]["left_device"], Back());
  EXPECT_EQ(leaks[0]["location"]["line"], LineOf("udf_switch.cc", "switch"));
  EXPECT_EQ(Findings("unbound").size(), 0u) << report_.dump(1);
  EXPECT_EQ(sarif_["runs"][0]["results"][0]["ruleId"], "HFLOW-CTX003");
  EXPECT_EQ(sarif_["runs"][0]["results"][0]["level"], "warning");

  CliResult fixed =
      Check("", std::string("'") + HFLOW_CTXCHECK_UDF_SWITCH + "' restore");
  EXPECT_EQ(fixed.code, 0) << fixed.err;
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, CtxCheckCommandTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

class CtxCheckCommandMiscTest : public hflow::testing::CliTest {
 protected:
  void SetUp() override {
    CliTest::SetUp();
    env_ = "-u RESOURCE_CONFIG_PATH -u HFLOW_CTXCHECK -u HFLOW_CTXCHECK_FILE";
  }
};

TEST_F(CtxCheckCommandMiscTest, ThreadOnOneDeviceFreeingAnothersMemory) {
  for (const auto& [a, b] : {std::pair<int, int>{0, 2}, {3, 6}}) {
    CliResult r = Run("ctxcheck --devices " + std::to_string(a) + "," +
                      std::to_string(b) + " --json '" + dir_ + "/r.json' -- '" +
                      HFLOW_CTXCHECK_ACL_POOL + "' cross " + std::to_string(a) +
                      " " + std::to_string(b));
    EXPECT_EQ(r.code, 1) << r.err;
    Json j = Json::parse(Read(dir_ + "/r.json"));
    ASSERT_EQ(j["findings"].size(), 1u) << j.dump(1);
    const Json& f = j["findings"][0];
    EXPECT_EQ(f["kind"], "cross_device");
    EXPECT_EQ(f["op"], "Free");
    EXPECT_EQ(f["touched_device"], b);
    EXPECT_EQ(f["context_device"], a);
    EXPECT_EQ(f["thread"]["name"], "other-dev");
    EXPECT_EQ(f["location"]["line"], LineOf("acl_pool.cc", "cross free"));
  }
}

TEST_F(CtxCheckCommandMiscTest, TheDefaultDeviceSetHasNoDeviceZero) {
  CliResult r = Run("ctxcheck --json '" + dir_ + "/r.json' -- '" +
                    HFLOW_CTXCHECK_ACL_POOL + "' fixed 2");
  EXPECT_EQ(r.code, 0) << r.err;
  Json j = Json::parse(Read(dir_ + "/r.json"));
  EXPECT_EQ(j["devices"], Json({2, 3, 4, 5}));
}

TEST_F(CtxCheckCommandMiscTest, BadInputGetsItsOwnExitStatus) {
  // Not found, not executable.
  CliResult r = Run("ctxcheck -- no-such-program-hflow");
  EXPECT_EQ(r.code, 127) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot run 'no-such-program-hflow'"));
  std::string text = Write("plain.txt", "not a program\n");
  r = Run("ctxcheck --json '" + dir_ + "/r.json' -- '" + text + "'");
  EXPECT_EQ(r.code, 126) << r.err;
  EXPECT_FALSE(
      Json::parse(Read(dir_ + "/r.json"), nullptr, false).is_discarded());
  // A device list that is no list; a report folder that does not exist.
  r = Run("ctxcheck --devices 2,x -- true");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--devices"));
  r = Run("ctxcheck --json /no/such/dir/r.json -- true");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("'/no/such/dir' does not exist"));
  // No program at all.
  r = Run("ctxcheck --strict");
  EXPECT_EQ(r.code, 2) << r.err;
  // A program that never uses hflow's runtime.
  r = Run("ctxcheck -- true");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_THAT(r.err, HasSubstr("never started hflow's runtime"));
}

TEST_F(CtxCheckCommandMiscTest, AHangIsStoppedAndTheReportIsStillWritten) {
  CliResult r =
      Run("ctxcheck --timeout 1 --json '" + dir_ + "/r.json' -- sleep 30");
  EXPECT_EQ(r.code, 124) << r.err;
  EXPECT_LT(r.seconds, 20);
  Json j = Json::parse(Read(dir_ + "/r.json"));
  EXPECT_EQ(j["program"]["timed_out"], true);
  EXPECT_EQ(j["exit_code"], 124);
  EXPECT_THAT(r.err, HasSubstr("timed out after 1 s"));
}

TEST_F(CtxCheckCommandMiscTest, ACrashAfterAFindingKeepsTheFinding) {
  CliResult r = Run("ctxcheck --devices 2,3 --json '" + dir_ + "/r.json' -- '" +
                    HFLOW_CTXCHECK_ACL_POOL + "' crash 2");
  EXPECT_EQ(r.code, 1) << r.err;
  Json j = Json::parse(Read(dir_ + "/r.json"));
  EXPECT_EQ(j["program"]["status"], "signal SIGABRT");
  EXPECT_FALSE(j["findings"].empty());
}

}  // namespace
}  // namespace hflow
