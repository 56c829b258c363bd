// Every ACL call's success and error paths, with ACL's codes and the log
// line each failure writes: aclInit/aclFinalize (config files, the runtime
// it makes or finds), the device and context calls, and the memory calls.
// Per-thread behaviour and the session are in tests/acl_*_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl_test_util.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
using testing::StderrOf;

class AclApiTest : public testing::AclTest {
 protected:
  // aclInit(NULL) on the default cluster (devices 0..3).
  void Init() {
    std::string err;
    aclError code = ACL_SUCCESS;
    err = StderrOf([&] { code = aclInit(nullptr); });
    ASSERT_EQ(code, ACL_SUCCESS) << err;
  }
  static std::string WriteFile(const std::string& name,
                               const std::string& text) {
    return testing::WriteTempFile(name, text);
  }
};

TEST_F(AclApiTest, EveryCallBeforeAclInitIsUninitialized) {
  void* p = nullptr;
  int32_t d = 0;
  uint32_t n = 0;
  aclrtContext c = nullptr;
  aclrtRunMode m;
  size_t f = 0, t = 0;
  char buf[4];
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtSetDevice(1), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtResetDevice(1), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtGetDevice(&d), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtGetRunMode(&m), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtSynchronizeDevice(), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtCreateContext(&c, 1), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtDestroyContext(&c), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtSetCurrentContext(&c), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtGetCurrentContext(&c), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtMalloc(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtFree(buf), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtMallocHost(&p, 8), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtFreeHost(buf), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtMemcpy(buf, 4, buf, 4, ACL_MEMCPY_HOST_TO_HOST),
              ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtMemset(buf, 4, 0, 4), ACL_ERROR_UNINITIALIZE);
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &f, &t), ACL_ERROR_UNINITIALIZE);
  });
  EXPECT_THAT(err, HasSubstr("hflow acl: aclrtSetDevice(1): ACL is not "
                             "initialized (no device runtime is installed); "
                             "call aclInit first"));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 17) << err;
}

TEST_F(AclApiTest, InitMakesTheDefaultClusterAndFinalizeRemovesIt) {
  Init();
  rt::InstalledRuntime inst = rt::GetInstalledRuntime();
  ASSERT_NE(inst.runtime, nullptr);
  EXPECT_EQ(inst.runtime->DeviceIds(), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(inst.holds, 1);  // ACL's
  ASSERT_TRUE(inst.options.has_value());
  std::string err = StderrOf(
      [] { EXPECT_EQ(aclInit(nullptr), ACL_ERROR_REPEAT_INITIALIZE); });
  EXPECT_THAT(err, HasSubstr("aclInit(NULL): ACL is already initialized"));
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(rt::CurrentRuntime(), nullptr);
  err = StderrOf([] {
    EXPECT_EQ(aclFinalize(), ACL_ERROR_REPEAT_FINALIZE);
    EXPECT_EQ(aclrtSetDevice(0), ACL_ERROR_UNINITIALIZE);
  });
  EXPECT_THAT(err, HasSubstr("aclFinalize(): ACL is already finalized"));
  // A second life works as the first.
  Init();
  EXPECT_EQ(aclrtSetDevice(3), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST_F(AclApiTest, InitChecksTheConfigFile) {
  const std::string missing = ::testing::TempDir() + "hflow_no_such_acl.json";
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclInit(missing.c_str()), ACL_ERROR_INVALID_FILE);
    EXPECT_EQ(aclInit(WriteFile("acl_bad.json", "dump: yes").c_str()),
              ACL_ERROR_PARSE_FILE);
    EXPECT_EQ(aclInit(WriteFile("acl_array.json", "[1]").c_str()),
              ACL_ERROR_PARSE_FILE);
  });
  EXPECT_THAT(err, HasSubstr("aclInit(\"" + missing +
                             "\"): cannot read the config file"));
  EXPECT_THAT(err, HasSubstr("is not a JSON object"));
  EXPECT_EQ(rt::CurrentRuntime(), nullptr);  // nothing made on a failure
  EXPECT_EQ(aclInit(""), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(aclInit(WriteFile("acl_empty.json", "").c_str()), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  const std::string dump = WriteFile(
      "acl_dump.json", R"({"dump": {"dump_path": "/tmp", "dump_list": []}})");
  EXPECT_EQ(aclInit(dump.c_str()), ACL_SUCCESS);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
}

TEST_F(AclApiTest, InitReadsTheClusterFromResourceConfigPath) {
  testing::UseClusterFile({3, 6, 7});
  Init();
  EXPECT_EQ(rt::CurrentRuntime()->DeviceIds(), (std::vector<int32_t>{3, 6, 7}));
  EXPECT_EQ(rt::CurrentRuntime()->DefaultDevice(), std::nullopt);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);

  const std::string missing = ::testing::TempDir() + "no_such_cluster.json";
  setenv(kResourceConfigPathEnv, missing.c_str(), 1);
  std::string err =
      StderrOf([] { EXPECT_EQ(aclInit(nullptr), ACL_ERROR_INVALID_FILE); });
  EXPECT_THAT(err, HasSubstr("aclInit(NULL): RESOURCE_CONFIG_PATH=" + missing));
  setenv(kResourceConfigPathEnv,
         WriteFile("acl_cluster_bad.json", R"({"devices": "x"})").c_str(), 1);
  err = StderrOf([] { EXPECT_EQ(aclInit(nullptr), ACL_ERROR_PARSE_FILE); });
  EXPECT_THAT(err, HasSubstr("devices"));
  EXPECT_EQ(rt::CurrentRuntime(), nullptr);
}

TEST_F(AclApiTest, InitUsesAnInstalledRuntimeAndLeavesIt) {
  auto sim = testing::InstallSim({2, 3});
  // Calls work before aclInit: a runtime is installed.
  EXPECT_EQ(aclrtSetDevice(3), ACL_SUCCESS);
  Init();
  EXPECT_EQ(rt::CurrentRuntime(), sim.get());
  int32_t d = -1;
  EXPECT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
  EXPECT_EQ(d, 3);
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);
  EXPECT_EQ(rt::CurrentRuntime(), sim.get());  // not aclInit's to remove
  EXPECT_EQ(aclrtResetDevice(3), ACL_SUCCESS);
}

TEST_F(AclApiTest, SetResetAndGetDevice) {
  Init();
  int32_t d = -1;
  std::string err = StderrOf(
      [&] { EXPECT_EQ(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL); });
  EXPECT_THAT(err, HasSubstr("aclrtGetDevice(0x"));
  EXPECT_THAT(err, HasSubstr("call aclrtSetDevice or aclrtSetCurrentContext"));
  EXPECT_EQ(Stats(0).implicit_bindings, 0u);  // reading binds nothing

  ASSERT_EQ(aclrtSetDevice(2), ACL_SUCCESS);
  ASSERT_EQ(aclrtSetDevice(2), ACL_SUCCESS);
  EXPECT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
  EXPECT_EQ(d, 2);
  EXPECT_EQ(Stats(2).default_context_refs, 2);
  EXPECT_EQ(Stats(2).contexts_created, 1u);
  EXPECT_EQ(aclrtResetDevice(2), ACL_SUCCESS);
  EXPECT_EQ(Stats(2).contexts_alive, 1u);
  EXPECT_EQ(aclrtResetDevice(2), ACL_SUCCESS);
  EXPECT_EQ(Stats(2).contexts_alive, 0u);
  err = StderrOf([] {
    EXPECT_EQ(aclrtResetDevice(2), ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_EQ(aclrtSetDevice(9), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtSetDevice(-1), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtResetDevice(4), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtGetDevice(nullptr), ACL_ERROR_INVALID_PARAM);
  });
  EXPECT_THAT(err, HasSubstr("aclrtResetDevice(2): ResetDevice on device 2: "
                             "no SetDevice reference is held"));
  EXPECT_THAT(err, HasSubstr("hflow acl: aclrtSetDevice(9): device 9 is not "
                             "in the cluster (devices 0..3); use one of "
                             "those, or name another cluster with "
                             "RESOURCE_CONFIG_PATH before aclInit"));
  EXPECT_THAT(err, HasSubstr("aclrtSetDevice(-1): device -1 is not"));
  EXPECT_THAT(err, HasSubstr("aclrtGetDevice(NULL): deviceId is NULL"));
}

TEST_F(AclApiTest, DeviceCountRunModeAndSynchronize) {
  Init();
  uint32_t n = 0;
  EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
  EXPECT_EQ(n, 4u);
  aclrtRunMode m = ACL_DEVICE;
  EXPECT_EQ(aclrtGetRunMode(&m), ACL_SUCCESS);
  EXPECT_EQ(m, ACL_HOST);
  ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
  EXPECT_EQ(aclrtSynchronizeDevice(), ACL_SUCCESS);
  std::string err = StderrOf([] {
    EXPECT_EQ(aclrtGetDeviceCount(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtGetRunMode(nullptr), ACL_ERROR_INVALID_PARAM);
  });
  EXPECT_THAT(err, HasSubstr("aclrtGetDeviceCount(NULL): count is NULL"));
  EXPECT_THAT(err, HasSubstr("aclrtGetRunMode(NULL): runMode is NULL"));
}

TEST_F(AclApiTest, CreateSetGetAndDestroyContexts) {
  Init();
  aclrtContext a = nullptr, b = nullptr, cur = nullptr;
  ASSERT_EQ(aclrtCreateContext(&a, 1), ACL_SUCCESS);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, a);  // created and bound
  ASSERT_EQ(aclrtCreateContext(&b, 3), ACL_SUCCESS);
  EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, b);
  ASSERT_EQ(aclrtSetCurrentContext(a), ACL_SUCCESS);
  EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, a);
  int32_t d = -1;
  EXPECT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
  EXPECT_EQ(d, 1);

  int bogus = 0;
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtCreateContext(nullptr, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtCreateContext(&cur, 7), ACL_ERROR_RT_INVALID_DEVICEID);
    EXPECT_EQ(aclrtSetCurrentContext(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtSetCurrentContext(&bogus), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtGetCurrentContext(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyContext(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtDestroyContext(&bogus), ACL_ERROR_RT_PARAM_INVALID);
  });
  EXPECT_THAT(err, HasSubstr("aclrtCreateContext(NULL, 1): context is NULL"));
  EXPECT_THAT(err, HasSubstr("aclrtCreateContext(0x"));
  EXPECT_THAT(err, HasSubstr("device 7 is not in the cluster"));
  EXPECT_THAT(err, HasSubstr("aclrtSetCurrentContext(NULL): context is NULL"));
  // A rejected handle leaves the binding as it was.
  EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, a);

  // The default context goes with aclrtResetDevice, never DestroyContext.
  ASSERT_EQ(aclrtSetDevice(2), ACL_SUCCESS);
  aclrtContext def = nullptr;
  ASSERT_EQ(aclrtGetCurrentContext(&def), ACL_SUCCESS);
  err = StderrOf(
      [&] { EXPECT_EQ(aclrtDestroyContext(def), ACL_ERROR_RT_PARAM_INVALID); });
  EXPECT_THAT(err, HasSubstr("is the default context of device 2"));
  EXPECT_EQ(aclrtResetDevice(2), ACL_SUCCESS);

  EXPECT_EQ(aclrtDestroyContext(b), ACL_SUCCESS);
  err = StderrOf([&] {
    EXPECT_EQ(aclrtDestroyContext(b), ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtSetCurrentContext(b), ACL_ERROR_RT_PARAM_INVALID);
  });
  EXPECT_THAT(err, HasSubstr("already destroyed"));
  EXPECT_EQ(aclrtDestroyContext(a), ACL_SUCCESS);
  EXPECT_EQ(Stats(1).contexts_alive, 0u);
  EXPECT_EQ(Stats(3).contexts_alive, 0u);
}

TEST_F(AclApiTest, GetCurrentContextOnAnUnboundThreadIsContextNull) {
  Init();
  aclrtContext cur = &cur;  // must be overwritten
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
  });
  EXPECT_EQ(cur, nullptr);
  EXPECT_THAT(err, HasSubstr("the current thread has no context"));
  EXPECT_EQ(Stats(0).implicit_bindings, 0u);
  EXPECT_EQ(Stats(0).contexts_created, 0u);
}

TEST_F(AclApiTest, MallocFreeAndTheirErrors) {
  auto sim = testing::InstallSim({0, 1}, std::nullopt, /*memory_bytes=*/4096);
  Init();
  ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
  void* p = nullptr;
  ASSERT_EQ(aclrtMalloc(&p, 1024, ACL_MEM_MALLOC_NORMAL_ONLY), ACL_SUCCESS);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(Stats(1).mem_used_bytes, 1024u);
  EXPECT_EQ(Stats(0).mem_used_bytes, 0u);
  void* q = nullptr;
  int host = 0;
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtMalloc(nullptr, 8, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMalloc(&q, 0, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMalloc(&q, 8, static_cast<aclrtMemMallocPolicy>(6)),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMalloc(&q, 8192, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_RT_MEMORY_ALLOCATION);
    EXPECT_EQ(aclrtFree(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFree(&host), ACL_ERROR_RT_PARAM_INVALID);
  });
  EXPECT_THAT(err, HasSubstr("aclrtMalloc(NULL, 8, 0): devPtr is NULL"));
  EXPECT_THAT(err, HasSubstr(", 0, 0): size is 0"));
  EXPECT_THAT(err, HasSubstr("policy 6 is not an aclrtMemMallocPolicy"));
  EXPECT_THAT(err, HasSubstr(", 8192, 0): Malloc"));
  EXPECT_THAT(err, HasSubstr("aclrtFree(NULL): devPtr is NULL"));
  EXPECT_EQ(q, nullptr);
  EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
  EXPECT_EQ(Stats(1).mem_used_bytes, 0u);
  EXPECT_EQ(Stats(1).live_allocations, 0u);
}

TEST_F(AclApiTest, MemcpyMemsetAndTheirChecks) {
  Init();
  ASSERT_EQ(aclrtSetDevice(2), ACL_SUCCESS);
  void* a = nullptr;
  void* b = nullptr;
  ASSERT_EQ(aclrtMalloc(&a, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  ASSERT_EQ(aclrtMalloc(&b, 64, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  std::vector<uint8_t> in(64), out(64, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 3);
  EXPECT_EQ(aclrtMemcpy(a, 64, in.data(), 64, ACL_MEMCPY_HOST_TO_DEVICE),
            ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(b, 64, a, 64, ACL_MEMCPY_DEVICE_TO_DEVICE),
            ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(out.data(), 64, b, 64, ACL_MEMCPY_DEVICE_TO_HOST),
            ACL_SUCCESS);
  EXPECT_EQ(out, in);
  EXPECT_EQ(aclrtMemset(b, 64, 0x5a, 16), ACL_SUCCESS);
  EXPECT_EQ(aclrtMemcpy(out.data(), 64, b, 64, ACL_MEMCPY_DEVICE_TO_HOST),
            ACL_SUCCESS);
  EXPECT_EQ(out[15], 0x5a);
  EXPECT_EQ(out[16], in[16]);
  std::vector<uint8_t> copy(64, 0);
  EXPECT_EQ(
      aclrtMemcpy(copy.data(), 64, in.data(), 64, ACL_MEMCPY_HOST_TO_HOST),
      ACL_SUCCESS);
  EXPECT_EQ(copy, in);

  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtMemcpy(out.data(), 8, a, 64, ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemcpy(nullptr, 64, a, 64, ACL_MEMCPY_DEVICE_TO_HOST),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(
        aclrtMemcpy(out.data(), 64, nullptr, 64, ACL_MEMCPY_DEVICE_TO_HOST),
        ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(
        aclrtMemcpy(out.data(), 64, a, 64, static_cast<aclrtMemcpyKind>(7)),
        ACL_ERROR_INVALID_PARAM);
    // A host buffer is no device allocation.
    EXPECT_EQ(
        aclrtMemcpy(out.data(), 64, in.data(), 64, ACL_MEMCPY_DEVICE_TO_HOST),
        ACL_ERROR_RT_PARAM_INVALID);
    EXPECT_EQ(aclrtMemset(b, 8, 0, 16), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemset(nullptr, 8, 0, 8), ACL_ERROR_INVALID_PARAM);
  });
  EXPECT_THAT(err, HasSubstr(", 8, 0x"));
  EXPECT_THAT(err, HasSubstr("count 64 exceeds destMax 8; the destination "
                             "cannot hold the copy"));
  EXPECT_THAT(err, HasSubstr("aclrtMemcpy(NULL, 64, 0x"));
  EXPECT_THAT(err, HasSubstr("kind 7 is not an aclrtMemcpyKind"));
  EXPECT_THAT(err, HasSubstr("is not inside a live allocation"));
  EXPECT_THAT(err, HasSubstr("count 16 exceeds maxCount 8"));
  EXPECT_EQ(aclrtFree(a), ACL_SUCCESS);
  EXPECT_EQ(aclrtFree(b), ACL_SUCCESS);
}

TEST_F(AclApiTest, HostToHostCopiesNeedNoDevice) {
  auto sim = testing::InstallSim({3, 6, 7});  // no default device
  testing::RunOnFreshThread([] {
    int src = 42, dst = 0;
    EXPECT_EQ(aclrtMemcpy(&dst, sizeof(dst), &src, sizeof(src),
                          ACL_MEMCPY_HOST_TO_HOST),
              ACL_SUCCESS);
    EXPECT_EQ(dst, 42);
    void* h = nullptr;
    ASSERT_EQ(aclrtMallocHost(&h, 32), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreeHost(h), ACL_SUCCESS);
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  });
  EXPECT_EQ(testing::ContextsCreated(*sim, {3, 6, 7}), 0u);
  std::string err = StderrOf([] {
    void* h = nullptr;
    EXPECT_EQ(aclrtMallocHost(nullptr, 8), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocHost(&h, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFreeHost(nullptr), ACL_ERROR_INVALID_PARAM);
  });
  EXPECT_THAT(err, HasSubstr("aclrtMallocHost(NULL, 8): hostPtr is NULL"));
}

TEST_F(AclApiTest, MemInfoReportsTheCurrentDevice) {
  auto sim =
      testing::InstallSim({0, 1}, std::nullopt, /*memory_bytes=*/1 << 20);
  ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
  void* p = nullptr;
  ASSERT_EQ(aclrtMalloc(&p, 4096, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
  size_t free_b = 0, total_b = 0;
  EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, &total_b), ACL_SUCCESS);
  EXPECT_EQ(total_b, size_t{1} << 20);
  EXPECT_EQ(free_b, (size_t{1} << 20) - 4096);
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, nullptr, &total_b),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtGetMemInfo(ACL_HBM_MEM, &free_b, nullptr),
              ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtGetMemInfo(static_cast<aclrtMemAttr>(10), &free_b, &total_b),
              ACL_ERROR_INVALID_PARAM);
  });
  EXPECT_THAT(err, HasSubstr("attr 10 is not an aclrtMemAttr"));
  EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
}

TEST_F(AclApiTest, LostDeviceAndInjectedFaultsMapToAclCodes) {
  auto sim = testing::InstallSim({0, 1, 2});
  ASSERT_EQ(aclrtSetDevice(2), ACL_SUCCESS);
  sim->InjectFault(rt::Op::kMalloc, 1, Status::OutOfMemory("injected"));
  void* p = nullptr;
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtMalloc(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_RT_MEMORY_ALLOCATION);
  });
  EXPECT_THAT(err, HasSubstr("injected [ACL error 207001]"));
  sim->MarkDeviceLost(2);
  err = StderrOf([&] {
    EXPECT_EQ(aclrtMalloc(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_RT_LOST_HEARTBEAT);
    EXPECT_EQ(aclrtSetDevice(2), ACL_ERROR_RT_LOST_HEARTBEAT);
  });
  EXPECT_THAT(err, HasSubstr("device 2: the device is lost"));
}

}  // namespace
}  // namespace hflow
