// hflow ctxcheck's context leaks: a UDF that switches its thread's device
// in Proc (a library that calls aclrtSetDevice and never switches back) is
// found, naming its node, function, instance and call, with the stack of
// the switch; one that switches and restores is clean; Init, a context of
// its own on the same device, and a UDF in a worker process are found too.
// The graph's results stay right throughout (hflow binds again after each
// Proc). The check reads nothing it is not asked to: off, the same leak is
// no finding. On {0,1}, {2,3,4,5} and {3,6,7}.
//
//   x ──[udf: switches to `other`, or not]── out      @ devices.front()
//
// Thread-safety: single-threaded tests; every wait is bounded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"
#include "hflow/ctxcheck.h"
#include "hflow/hflow.h"
#include "rt/ctxcheck.h"
#include "test_graphs.h"
#include "test_util.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::FuncNode;
using ::hflow::testing::I64;
using ::hflow::testing::Place;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr int32_t kIoMs = 10000;
constexpr int kFeeds = 5;

// The device the switching UDFs bind; set by each test before BuildGraph.
std::atomic<int32_t> g_other{-1};

// Binds g_other in every Proc and leaves the thread there.
class SwitchAway : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    if (aclrtSetDevice(g_other.load()) != ACL_SUCCESS) {
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("CtxLeakTest_SwitchAway", SwitchAway);

// Switches to g_other and back, as a well-behaved library does.
class SwitchAndRestore : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override { return FlowFunc::FLOW_FUNC_SUCCESS; }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    aclrtContext saved = nullptr;
    if (aclrtGetCurrentContext(&saved) != ACL_SUCCESS ||
        aclrtSetDevice(g_other.load()) != ACL_SUCCESS ||
        aclrtSetCurrentContext(saved) != ACL_SUCCESS) {
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    return context_->SetOutput(0, in[0]);
  }
};
REGISTER_FLOW_FUNC("CtxLeakTest_SwitchAndRestore", SwitchAndRestore);

// Init creates a context of its own on its device and leaves it bound.
class OwnContextInInit : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override {
    int32_t device = -1;
    if (aclrtGetDevice(&device) != ACL_SUCCESS ||
        aclrtCreateContext(&ctx_, device) != ACL_SUCCESS) {
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) override {
    return context_->SetOutput(0, in[0]);
  }

 private:
  aclrtContext ctx_ = nullptr;
};
REGISTER_FLOW_FUNC("CtxLeakTest_OwnContextInInit", OwnContextInInit);

std::vector<CtxCheckFinding> Leaks() {
  std::vector<CtxCheckFinding> out;
  for (CtxCheckFinding& f : CtxCheckFindings()) {
    if (f.kind == "context_leak") out.push_back(std::move(f));
  }
  return out;
}

class CtxCheckLeakTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    (void)Finalize();
    ClearCtxCheckFindings();
    file_ = ::testing::TempDir() + "ctxcheck_leak_" + std::to_string(getpid()) +
            ".jsonl";
    std::remove(file_.c_str());
    rt::ctxcheck::internal::SetOutputFile(file_);
    g_other = GetParam().back();
  }
  void TearDown() override {
    (void)Finalize();
    ClearCtxCheckFindings();
    rt::ctxcheck::internal::SetOutputFile("");
    std::remove(file_.c_str());
  }

  int32_t Device() const { return GetParam().front(); }

  // Runs x ── udf ── out on Device() with `mode`, feeding kFeeds values and
  // checking each comes back unchanged.
  void Run(const std::string& func, const std::string& mode) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.ctxcheck = mode;
    Status st = Initialize(o);
    ASSERT_TRUE(st.ok()) << st.ToString();
    FlowData x("x", 0);
    FlowNode udf = FuncNode("udf", func);
    udf.SetInput(0, x);
    FlowGraph g("leak");
    g.SetInputs({x}).SetOutputs({udf});
    Place(g, {{"udf", {Device()}}});
    Session s;
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int64_t v = 1; v <= kFeeds; ++v) {
      st = s.FeedData(1, {I64(v)}, FlowInfo{}, kIoMs);
      ASSERT_TRUE(st.ok()) << st.ToString();
      std::vector<Tensor> out;
      FlowInfo info;
      st = s.FetchData(1, &out, &info, kIoMs);
      ASSERT_TRUE(st.ok()) << st.ToString();
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].As<int64_t>().at(0), v) << "hflow rebinds after Proc";
    }
    st = Finalize();
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  std::vector<Json> FileLines(const std::string& type) const {
    std::vector<Json> out;
    std::ifstream in(file_);
    std::string line;
    while (std::getline(in, line)) {
      Json j = Json::parse(line);
      if (j.value("type", "") == type) out.push_back(std::move(j));
    }
    return out;
  }

  std::string file_;
};

TEST_P(CtxCheckLeakTest, AProcThatSwitchesDevicesIsNamedWithItsSwitch) {
  Run("CtxLeakTest_SwitchAway", "report");
  std::vector<CtxCheckFinding> leaks = Leaks();
  ASSERT_EQ(leaks.size(), 1u) << "one site, hit by every Proc";
  const CtxCheckFinding& f = leaks[0];
  EXPECT_EQ(f.count, static_cast<uint64_t>(kFeeds));
  EXPECT_EQ(f.node, "udf");
  EXPECT_EQ(f.function, "CtxLeakTest_SwitchAway");
  EXPECT_EQ(f.instance, 0);
  EXPECT_EQ(f.phase, "Proc");
  EXPECT_EQ(f.device, Device());
  EXPECT_EQ(f.context_device, GetParam().back());
  EXPECT_EQ(f.op, "SetDevice");
  EXPECT_THAT(f.location, HasSubstr("hflow_tests"))
      << "the switch's stack reaches the UDF in this binary";
  EXPECT_THAT(f.message,
              HasSubstr("node 'udf' function 'CtxLeakTest_SwitchAway' "
                        "(instance 0) on device " +
                        std::to_string(Device()) + " returned from Proc"));
  EXPECT_THAT(f.message,
              HasSubstr("device " + std::to_string(GetParam().back()) +
                        "'s context (it entered on device " +
                        std::to_string(Device()) + "'s context)"));
  EXPECT_THAT(f.message, HasSubstr("aclrtSetCurrentContext"));
  // The JSON line says the same, with the UDF as an object.
  std::vector<Json> lines = FileLines("finding");
  ASSERT_EQ(lines.size(), 1u);
  const Json& j = lines[0];
  EXPECT_EQ(j["kind"], "context_leak");
  EXPECT_EQ(j["op"], "SetDevice");
  EXPECT_EQ(j["udf"]["node"], "udf");
  EXPECT_EQ(j["udf"]["function"], "CtxLeakTest_SwitchAway");
  EXPECT_EQ(j["udf"]["phase"], "Proc");
  EXPECT_EQ(j["udf"]["device"], Device());
  EXPECT_EQ(j["entered_device"], Device());
  EXPECT_EQ(j["left_device"], GetParam().back());
  EXPECT_EQ(j["same_device"], false);
  bool user_frame = false;
  for (const Json& fr : j["frames"]) user_frame |= fr["user"].get<bool>();
  EXPECT_TRUE(user_frame) << j.dump();
  // No other finding: hflow's own calls around the UDF are bound.
  EXPECT_EQ(CtxCheckFindings().size(), 1u);
}

TEST_P(CtxCheckLeakTest, SwitchingAndRestoringIsClean) {
  Run("CtxLeakTest_SwitchAndRestore", "report");
  EXPECT_TRUE(CtxCheckFindings().empty()) << CtxCheckFindings()[0].message;
}

TEST_P(CtxCheckLeakTest, OffTheSameLeakIsNoFinding) {
  Run("CtxLeakTest_SwitchAway", "off");
  EXPECT_TRUE(CtxCheckFindings().empty()) << CtxCheckFindings()[0].message;
  EXPECT_TRUE(FileLines("finding").empty());
}

TEST_P(CtxCheckLeakTest, InitLeavingAContextOfItsOwnIsFound) {
  Run("CtxLeakTest_OwnContextInInit", "strict");
  std::vector<CtxCheckFinding> leaks = Leaks();
  ASSERT_EQ(leaks.size(), 1u);
  EXPECT_EQ(leaks[0].phase, "Init");
  EXPECT_EQ(leaks[0].op, "CreateContext");
  EXPECT_EQ(leaks[0].context_device, Device());
  EXPECT_THAT(leaks[0].message, HasSubstr("another context of device " +
                                          std::to_string(Device())));
  EXPECT_EQ(leaks[0].count, 1u);
}

// A callback into user code that is no UDF (GE's RunGraphAsync callback
// runs this way) is checked as a Proc is; off it is a plain call.
TEST_P(CtxCheckLeakTest, ACallbackLeavingAnotherContextIsNamed) {
  for (const char* mode : {"report", "off"}) {
    Options o;
    o.cluster = MakeLocalCluster(GetParam());
    o.ctxcheck = mode;
    ASSERT_TRUE(Initialize(o).ok());
    int calls = 0;
    testing::RunOnFreshThread(
        [&] {
          ASSERT_EQ(aclrtSetDevice(Device()), ACL_SUCCESS);
          RunCtxCheckedUserCall("the test's callback", "callback", [&] {
            ++calls;
            (void)aclrtSetDevice(g_other.load());
          });
          RunCtxCheckedUserCall("a callback that restores", "callback",
                                [&] { ++calls; });
        },
        "cb-thread");
    ASSERT_TRUE(Finalize().ok());
    EXPECT_EQ(calls, 2) << mode;
    std::vector<CtxCheckFinding> leaks = Leaks();
    if (std::string(mode) == "off") {
      EXPECT_TRUE(leaks.empty());
      continue;
    }
    ASSERT_EQ(leaks.size(), 1u);
    EXPECT_EQ(leaks[0].node, "the test's callback");
    EXPECT_EQ(leaks[0].phase, "callback");
    EXPECT_EQ(leaks[0].op, "SetDevice");
    EXPECT_EQ(leaks[0].context_device, g_other.load());
    EXPECT_THAT(leaks[0].message,
                HasSubstr("the test's callback returned leaving thread "
                          "'cb-thread' on device " +
                          std::to_string(g_other.load()) +
                          "'s context (it entered on device " +
                          std::to_string(Device()) + "'s context)"));
    ClearCtxCheckFindings();
  }
}

TEST_P(CtxCheckLeakTest, ABadModeIsRefusedNamingTheOption) {
  Options o;
  o.cluster = MakeLocalCluster(GetParam());
  o.ctxcheck = "loud";
  Status st = Initialize(o);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(st.message(), HasSubstr("Options::ctxcheck is 'loud'"));
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, CtxCheckLeakTest,
                         ::testing::Values(std::vector<int32_t>{0, 1},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

// A worker process checks its UDFs as the host does (Options::ctxcheck goes
// with the Load), and writes its findings to the same file.
class CtxCheckWorkerLeakTest : public testing::WorkerTest {};

TEST_P(CtxCheckWorkerLeakTest, AWorkersUdfLeakIsFoundInTheWorker) {
  const std::string file = (dir_ / "findings.jsonl").string();
  testing::ScopedEnv env("HFLOW_CTXCHECK_FILE", file.c_str());
  Options o;
  o.cluster = MakeLocalCluster(GetParam());
  o.udf_isolation = true;
  o.ctxcheck = "report";
  Status st = Initialize(o);
  ASSERT_TRUE(st.ok()) << st.ToString();
  const int32_t device = GetParam().front();
  const int32_t other = GetParam().back();
  FunctionPp pp("frag_pp");
  pp.SetCompileConfig(testing::FragileConfig(dir_, /*heavy=*/false));
  pp.SetInitParam("mode", std::string("switch"));
  pp.SetInitParam("at", static_cast<int64_t>(other));
  FlowNode n("frag", 1, 1);
  n.AddPp(pp);
  FlowData x("x", 0);
  n.SetInput(0, x);
  FlowGraph g("worker_leak");
  g.SetInputs({x}).SetOutputs({n});
  Place(g, {{"frag", {device}}});
  {
    Session s;
    ASSERT_TRUE(s.AddGraph(1, g).ok());
    st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (int64_t v = 1; v <= 3; ++v) {
      ASSERT_TRUE(s.FeedData(1, {I64(v)}, FlowInfo{}, kIoMs).ok());
      std::vector<Tensor> out;
      FlowInfo info;
      st = s.FetchData(1, &out, &info, kIoMs);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(out[0].As<int64_t>().at(0), 2 * v);
    }
  }
  ASSERT_TRUE(Finalize().ok());  // the worker has exited: its lines are in
  std::ifstream in(file);
  std::vector<Json> leaks;
  std::string line;
  while (std::getline(in, line)) {
    Json j = Json::parse(line);
    if (j["type"] == "finding" && j["kind"] == "context_leak")
      leaks.push_back(j);
  }
  ASSERT_EQ(leaks.size(), 1u) << "one site in the worker";
  EXPECT_NE(leaks[0]["pid"], static_cast<int64_t>(getpid()));
  EXPECT_EQ(leaks[0]["udf"]["node"], "frag");
  EXPECT_EQ(leaks[0]["udf"]["function"], "Fragile");
  EXPECT_EQ(leaks[0]["left_device"], other);
  EXPECT_EQ(leaks[0]["op"], "SetDevice");
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, CtxCheckWorkerLeakTest,
                         ::testing::Values(std::vector<int32_t>{0, 1},
                                           std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace hflow
