// One runtime for ACL and GE (Note [One runtime for ACL and GE]): a program
// that binds its thread through ACL and then runs a graph with hflow's host
// API keeps its context, valid and current, across Initialize, BuildGraph,
// FeedData, FetchData and Finalize, on the default cluster and on 2,3,4,5
// named by RESOURCE_CONFIG_PATH. Also: the order aclInit-after-Initialize,
// aclFinalize while the session runs, and what happens (contexts stranded)
// when Initialize asks for other devices, which shows the first test would
// catch a session that made its own runtime.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl_test_util.h"
#include "test_graphs.h"
#include "test_util.h"

namespace hflow {
namespace {

using testing::I64;
using testing::StderrOf;

class AclSessionTest : public testing::AclTest {
 protected:
  // aclInit on `devices` (through RESOURCE_CONFIG_PATH unless empty: the
  // default cluster).
  void AclInitOn(const std::vector<int32_t>& devices) {
    if (!devices.empty()) testing::UseClusterFile(devices);
    ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  }

  // hflow's options as a GE program gets them (the cluster from
  // RESOURCE_CONFIG_PATH when set).
  static Options GeOptions() {
    Options o;
    Status s = ApplyGeOptions({}, &o, nullptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return o;
  }

  // The thread's context is `ctx`, on `device`, and still usable.
  static void ExpectCurrent(aclrtContext ctx, int32_t device,
                            const char* after) {
    SCOPED_TRACE(after);
    aclrtContext cur = nullptr;
    ASSERT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
    EXPECT_EQ(cur, ctx);
    int32_t d = -1;
    ASSERT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
    EXPECT_EQ(d, device);
    void* p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 32, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
  }

  static void RunOnce(Session& s, uint32_t graph, int64_t a, int64_t b) {
    ASSERT_TRUE(s.FeedData(graph, {I64(a), I64(b)}, FlowInfo{}, 5000).ok());
    std::vector<Tensor> out;
    FlowInfo info;
    Status st = s.FetchData(graph, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(out.at(0).As<int64_t>(), (std::vector<int64_t>{a + b}));
  }
};

class AclSessionClusterTest
    : public AclSessionTest,
      public ::testing::WithParamInterface<std::vector<int32_t>> {};

TEST_P(AclSessionClusterTest, AclContextStaysValidAndCurrentAcrossTheSession) {
  const std::vector<int32_t>& named = GetParam();
  AclInitOn(named);
  const std::vector<int32_t> devices = rt::CurrentRuntime()->DeviceIds();
  const int32_t ctx_device = devices.back();
  const int32_t graph_device = devices[devices.size() - 2];
  aclrtContext ctx = nullptr;
  ASSERT_EQ(aclrtCreateContext(&ctx, ctx_device), ACL_SUCCESS);
  void* kept = nullptr;  // memory of the context, across the session
  ASSERT_EQ(aclrtMalloc(&kept, 8, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  rt::DeviceRuntime* const acl_runtime = rt::CurrentRuntime();

  ASSERT_TRUE(Initialize(GeOptions()).ok());
  EXPECT_EQ(rt::CurrentRuntime(), acl_runtime);  // adopted, not replaced
  ExpectCurrent(ctx, ctx_device, "Initialize");
  {
    Session s;
    ASSERT_TRUE(
        s.AddGraph(1, testing::TwoInputAdd("acl_add", graph_device)).ok());
    Status st = s.BuildGraph(1);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectCurrent(ctx, ctx_device, "BuildGraph");
    ASSERT_TRUE(s.FeedData(1, {I64(20), I64(22)}, FlowInfo{}, 5000).ok());
    ExpectCurrent(ctx, ctx_device, "FeedData");
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, 5000);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(out.at(0).As<int64_t>(), (std::vector<int64_t>{42}));
    ExpectCurrent(ctx, ctx_device, "FetchData");
  }
  ASSERT_TRUE(Finalize().ok());
  ExpectCurrent(ctx, ctx_device, "Finalize");
  EXPECT_EQ(rt::CurrentRuntime(), acl_runtime);
  int64_t v = 7, back = 0;
  EXPECT_EQ(aclrtMemcpy(kept, 8, &v, 8, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(&back, 8, kept, 8, ACL_MEMCPY_DEVICE_TO_HOST),
            ACL_SUCCESS);
  EXPECT_EQ(back, 7);
  EXPECT_EQ(aclrtFree(kept), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyContext(ctx), ACL_SUCCESS);
  // The session touched only its graph's device: nothing implicit, no
  // context on the others.
  EXPECT_EQ(testing::ImplicitBindings(*Sim(), devices), 0u);
  for (int32_t d : devices) {
    if (d == ctx_device || d == graph_device) continue;
    EXPECT_EQ(Stats(d).contexts_created, 0u) << "device " << d;
  }
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(rt::CurrentRuntime(), nullptr);  // aclInit's, and no one holds it
}

INSTANTIATE_TEST_SUITE_P(
    Clusters, AclSessionClusterTest,
    ::testing::Values(std::vector<int32_t>{}, std::vector<int32_t>{2, 3, 4, 5},
                      std::vector<int32_t>{3, 6, 7}),
    [](const ::testing::TestParamInfo<std::vector<int32_t>>& info) {
      return info.param.empty() ? std::string("DefaultCluster")
                                : testing::DevicesName(info.param);
    });

TEST_F(AclSessionTest, InitializeOnOtherDevicesStrandsAclContexts) {
  AclInitOn({});
  aclrtContext ctx = nullptr;
  ASSERT_EQ(aclrtCreateContext(&ctx, 2), ACL_SUCCESS);
  rt::DeviceRuntime* const acl_runtime = rt::CurrentRuntime();
  Options o;
  o.cluster = MakeLocalCluster({2, 3});
  ASSERT_TRUE(Initialize(o).ok());
  EXPECT_NE(rt::CurrentRuntime(), acl_runtime);
  aclrtContext cur = &cur;
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(aclrtSetCurrentContext(ctx), ACL_ERROR_RT_PARAM_INVALID);
  });
  EXPECT_EQ(cur, nullptr);
  EXPECT_THAT(err, ::testing::HasSubstr("unknown"));
  ASSERT_TRUE(Finalize().ok());
}

TEST_F(AclSessionTest, AclInitAfterInitializeSharesTheSessionRuntime) {
  ASSERT_TRUE(Initialize(GeOptions()).ok());
  rt::DeviceRuntime* const session_runtime = rt::CurrentRuntime();
  ASSERT_EQ(aclInit(nullptr), ACL_SUCCESS);
  EXPECT_EQ(rt::CurrentRuntime(), session_runtime);
  EXPECT_EQ(rt::GetInstalledRuntime().holds, 2);
  ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
  aclrtContext def = nullptr;
  ASSERT_EQ(aclrtGetCurrentContext(&def), ACL_SUCCESS);
  Session s;
  ASSERT_TRUE(s.AddGraph(1, testing::TwoInputAdd("acl_add", 3)).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  RunOnce(s, 1, 1, 2);
  ExpectCurrent(def, 1, "RunOnce");
  // aclFinalize leaves the session's runtime: the graph still runs.
  ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(rt::CurrentRuntime(), session_runtime);
  RunOnce(s, 1, 3, 4);
  EXPECT_EQ(aclrtResetDevice(1), ACL_SUCCESS);  // a runtime is installed
  ASSERT_TRUE(Finalize().ok());
}

TEST_F(AclSessionTest, AclFinalizeDuringTheSessionKeepsTheAdoptedRuntime) {
  AclInitOn({2, 3, 4, 5});
  rt::DeviceRuntime* const acl_runtime = rt::CurrentRuntime();
  Options o = GeOptions();
  o.record_calls = true;  // turned on in the adopted sim
  ASSERT_TRUE(Initialize(o).ok());
  ASSERT_EQ(rt::CurrentRuntime(), acl_runtime);
  ASSERT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(rt::CurrentRuntime(), acl_runtime);  // the session holds it
  EXPECT_EQ(rt::GetInstalledRuntime().holds, 1);
  Session s;
  ASSERT_TRUE(s.AddGraph(1, testing::TwoInputAdd("acl_add", 5)).ok());
  ASSERT_TRUE(s.BuildGraph(1).ok());
  RunOnce(s, 1, 5, 6);
  EXPECT_FALSE(Sim()->CallLog().empty());
  ASSERT_TRUE(Finalize().ok());
  EXPECT_EQ(rt::GetInstalledRuntime().holds, 0);
}

TEST_F(AclSessionTest, WithoutAclEachInitializeStartsAFreshRuntime) {
  ASSERT_TRUE(Initialize(GeOptions()).ok());
  rt::DeviceRuntime* const first = rt::CurrentRuntime();
  EXPECT_EQ(rt::GetInstalledRuntime().holds, 1);
  ASSERT_TRUE(Finalize().ok());
  EXPECT_EQ(rt::GetInstalledRuntime().holds, 0);
  ASSERT_TRUE(Initialize(GeOptions()).ok());
  EXPECT_NE(rt::CurrentRuntime(), first);
  ASSERT_TRUE(Finalize().ok());
}

}  // namespace
}  // namespace hflow
