// ACL's per-thread context semantics on hflow's sim, and the seed bug made
// visible through ACL: a std::thread calling aclrtMalloc without
// aclrtSetDevice works by luck on a cluster with device 0 (the runtime
// binds device 0 implicitly, whatever device the program meant) and fails
// with ACL_ERROR_RT_CONTEXT_NULL on device sets without 0 (2,3,4,5 and
// 3,6,7), which RESOURCE_CONFIG_PATH names as GE programs do.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "acl_test_util.h"
#include "rt/ctxcheck.h"
#include "rt/sim/sim_runtime.h"
#include "test_util.h"
#include "util/thread_name.h"

namespace hflow {
namespace {

using ::testing::HasSubstr;
using testing::StderrOf;

class AclThreadTest : public testing::AclTest {
 protected:
  void InitOn(const std::vector<int32_t>& devices) {
    testing::UseClusterFile(devices);
    aclError code = ACL_SUCCESS;
    std::string err = StderrOf([&] { code = aclInit(nullptr); });
    ASSERT_EQ(code, ACL_SUCCESS) << err;
    ASSERT_EQ(rt::CurrentRuntime()->DeviceIds(), devices);
  }
};

TEST_F(AclThreadTest, SetDeviceOnOneThreadLeavesAnotherAlone) {
  InitOn({0, 1, 2, 3});
  ASSERT_EQ(aclrtSetDevice(1), ACL_SUCCESS);
  std::thread other([] {
    int32_t d = -1;
    std::string err = StderrOf(
        [&] { EXPECT_EQ(aclrtGetDevice(&d), ACL_ERROR_RT_CONTEXT_NULL); });
    EXPECT_THAT(err, HasSubstr("no context is bound"));
    ASSERT_EQ(aclrtSetDevice(3), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
    EXPECT_EQ(d, 3);
    EXPECT_EQ(aclrtResetDevice(3), ACL_SUCCESS);
  });
  other.join();
  int32_t d = -1;
  EXPECT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
  EXPECT_EQ(d, 1);
  EXPECT_EQ(aclrtResetDevice(1), ACL_SUCCESS);
}

TEST_F(AclThreadTest, ContextsRoundTripAndMoveBetweenThreads) {
  InitOn({2, 3, 4, 5});
  aclrtContext ctx = nullptr, cur = nullptr;
  ASSERT_EQ(aclrtCreateContext(&ctx, 4), ACL_SUCCESS);
  testing::RunOnFreshThread([&] {
    aclrtContext mine = nullptr;
    (void)StderrOf([&] {
      EXPECT_EQ(aclrtGetCurrentContext(&mine), ACL_ERROR_RT_CONTEXT_NULL);
    });
    ASSERT_EQ(aclrtSetCurrentContext(ctx), ACL_SUCCESS);
    EXPECT_EQ(aclrtGetCurrentContext(&mine), ACL_SUCCESS);
    EXPECT_EQ(mine, ctx);
    int32_t d = -1;
    EXPECT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
    EXPECT_EQ(d, 4);
    void* p = nullptr;
    ASSERT_EQ(aclrtMalloc(&p, 16, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    // Rebinding here changes this thread only.
    ASSERT_EQ(aclrtSetDevice(5), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(5), ACL_SUCCESS);
  });
  EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_SUCCESS);
  EXPECT_EQ(cur, ctx);
  EXPECT_EQ(aclrtDestroyContext(ctx), ACL_SUCCESS);
  EXPECT_EQ(testing::ImplicitBindings(*Sim(), {2, 3, 4, 5}), 0u);
}

TEST_F(AclThreadTest, DestroyingTheCurrentContext) {
  InitOn({3, 6, 7});
  aclrtContext ctx = nullptr, cur = nullptr;
  ASSERT_EQ(aclrtCreateContext(&ctx, 6), ACL_SUCCESS);
  std::atomic<bool> bound{false}, destroyed{false};
  std::string other_err;
  aclError other_code = ACL_SUCCESS;
  std::thread other([&] {
    ASSERT_EQ(aclrtSetCurrentContext(ctx), ACL_SUCCESS);
    bound = true;
    while (!destroyed) std::this_thread::yield();
    void* p = nullptr;
    other_code = aclrtMalloc(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST);
  });
  while (!bound) std::this_thread::yield();
  ASSERT_EQ(aclrtDestroyContext(ctx), ACL_SUCCESS);
  // The destroying thread is left without a context...
  std::string err = StderrOf([&] {
    EXPECT_EQ(aclrtGetCurrentContext(&cur), ACL_ERROR_RT_CONTEXT_NULL);
    void* p = nullptr;
    EXPECT_EQ(aclrtMalloc(&p, 8, ACL_MEM_MALLOC_HUGE_FIRST),
              ACL_ERROR_RT_CONTEXT_NULL);
  });
  EXPECT_EQ(cur, nullptr);
  // ...and a thread still bound to it fails its next device call.
  other_err = StderrOf([&] {
    destroyed = true;
    other.join();
  });
  EXPECT_EQ(other_code, ACL_ERROR_RT_CONTEXT_NULL);
  EXPECT_THAT(other_err, HasSubstr("was destroyed; bind a live context"));
  EXPECT_EQ(Stats(6).contexts_alive, 0u);
}

// The seed bug through ACL: the main thread binds device `work`, a worker
// thread forgets aclrtSetDevice and allocates.
struct SeedCase {
  std::vector<int32_t> devices;
  int32_t work;
};

class AclSeedTest : public AclThreadTest,
                    public ::testing::WithParamInterface<SeedCase> {};

TEST_P(AclSeedTest, WorkerWithoutSetDeviceFailsOrWorksByLuckOnDeviceZero) {
  const SeedCase& c = GetParam();
  InitOn(c.devices);
  ASSERT_EQ(aclrtSetDevice(c.work), ACL_SUCCESS);
  const bool has_zero = c.devices.front() == 0;
  aclError code = ACL_SUCCESS;
  void* p = nullptr;
  std::string err;
  std::thread worker([&] {
    util::SetCurrentThreadName("acl-worker");
    err = StderrOf(
        [&] { code = aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST); });
    if (code == ACL_SUCCESS) {
      // Where did the memory go? Onto device 0, not the device meant.
      int32_t d = -1;
      EXPECT_EQ(aclrtGetDevice(&d), ACL_SUCCESS);
      EXPECT_EQ(d, 0);
      EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
    }
  });
  worker.join();
  if (has_zero) {
    EXPECT_EQ(code, ACL_SUCCESS) << err;
    EXPECT_EQ(Stats(0).implicit_bindings, 1u);
    EXPECT_EQ(Stats(c.work).live_allocations, 0u);
  } else {
    EXPECT_EQ(code, ACL_ERROR_RT_CONTEXT_NULL);
    EXPECT_THAT(err, HasSubstr("hflow acl: aclrtMalloc("));
    EXPECT_THAT(err, HasSubstr("no valid context is bound to the current "
                               "thread 'acl-worker' (EE1018)"));
    EXPECT_EQ(testing::ImplicitBindings(*Sim(), c.devices), 0u);
  }
  // Only the device the main thread set got a context.
  for (int32_t d : c.devices) {
    if (d == c.work || (has_zero && d == 0)) continue;
    EXPECT_EQ(Stats(d).contexts_created, 0u) << "device " << d;
  }

  // The fix: the worker binds its device first, and nothing is implicit.
  const uint64_t implicit_before = testing::ImplicitBindings(*Sim(), c.devices);
  std::thread fixed([&] {
    ASSERT_EQ(aclrtSetDevice(c.work), ACL_SUCCESS);
    void* q = nullptr;
    ASSERT_EQ(aclrtMalloc(&q, 256, ACL_MEM_MALLOC_HUGE_FIRST), ACL_SUCCESS);
    EXPECT_EQ(Stats(c.work).live_allocations, 1u);
    EXPECT_EQ(aclrtFree(q), ACL_SUCCESS);
    EXPECT_EQ(aclrtResetDevice(c.work), ACL_SUCCESS);
  });
  fixed.join();
  EXPECT_EQ(testing::ImplicitBindings(*Sim(), c.devices), implicit_before);
  EXPECT_EQ(aclrtResetDevice(c.work), ACL_SUCCESS);
}

// hflow ctxcheck through ACL (docs/ctxcheck.md): the seed's worker is a
// finding on every device set. Report mode lets it go on (on the default
// device, else the cluster's lowest as a stand-in); strict mode fails it
// with ACL_ERROR_RT_CONTEXT_NULL and EE1018 even where device 0 would have
// passed it.
TEST_P(AclSeedTest, CtxCheckFindsTheWorkerOnEveryDeviceSet) {
  const SeedCase& c = GetParam();
  InitOn(c.devices);
  const std::string file = ::testing::TempDir() + "acl_ctxcheck_" +
                           std::to_string(getpid()) + ".jsonl";
  rt::ctxcheck::internal::SetOutputFile(file);
  for (rt::ctxcheck::Mode mode :
       {rt::ctxcheck::Mode::kReport, rt::ctxcheck::Mode::kStrict}) {
    rt::ctxcheck::internal::ResetSites();
    Sim()->SetCtxCheck(mode);
    aclError code = ACL_SUCCESS;
    std::string err;
    std::thread worker([&] {
      util::SetCurrentThreadName("acl-worker");
      void* p = nullptr;
      err = StderrOf(
          [&] { code = aclrtMalloc(&p, 256, ACL_MEM_MALLOC_HUGE_FIRST); });
      if (code == ACL_SUCCESS) {
        EXPECT_EQ(aclrtFree(p), ACL_SUCCESS);
      }
    });
    worker.join();
    std::vector<rt::ctxcheck::Site> sites = rt::ctxcheck::Sites();
    ASSERT_FALSE(sites.empty()) << rt::ctxcheck::ModeName(mode);
    EXPECT_EQ(sites[0].kind, rt::ctxcheck::Kind::kUnbound);
    EXPECT_EQ(sites[0].note.op, rt::Op::kMalloc);
    EXPECT_EQ(sites[0].thread, "acl-worker");
    EXPECT_EQ(sites[0].note.device, c.devices.front());
    if (mode == rt::ctxcheck::Mode::kReport) {
      EXPECT_EQ(code, ACL_SUCCESS) << err;
    } else {
      EXPECT_EQ(code, ACL_ERROR_RT_CONTEXT_NULL);
      EXPECT_THAT(err, HasSubstr("(EE1018)"));
      EXPECT_EQ(sites[0].result, "no_context");
    }
  }
  Sim()->SetCtxCheck(rt::ctxcheck::Mode::kOff);
  rt::ctxcheck::internal::ResetSites();
  const char* env = std::getenv("HFLOW_CTXCHECK_FILE");
  rt::ctxcheck::internal::SetOutputFile(env ? env : "");
  std::remove(file.c_str());
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, AclSeedTest,
                         ::testing::Values(SeedCase{{0, 1, 2, 3}, 2},
                                           SeedCase{{2, 3, 4, 5}, 4},
                                           SeedCase{{3, 6, 7}, 6}),
                         [](const ::testing::TestParamInfo<SeedCase>& info) {
                           return testing::DevicesName(info.param.devices);
                         });

TEST_F(AclThreadTest, DeviceSetsWithoutZeroNameTheirDevices) {
  InitOn({2, 3, 4, 5});
  uint32_t n = 0;
  EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
  EXPECT_EQ(n, 4u);
  for (int32_t d : {2, 3, 4, 5}) {
    EXPECT_EQ(aclrtSetDevice(d), ACL_SUCCESS) << d;
    EXPECT_EQ(aclrtResetDevice(d), ACL_SUCCESS) << d;
  }
  std::string err = StderrOf(
      [] { EXPECT_EQ(aclrtSetDevice(0), ACL_ERROR_RT_INVALID_DEVICEID); });
  EXPECT_THAT(err, HasSubstr("aclrtSetDevice(0): device 0 is not in the "
                             "cluster (devices 2..5)"));
  EXPECT_EQ(aclFinalize(), ACL_SUCCESS);

  InitOn({3, 6, 7});
  EXPECT_EQ(aclrtGetDeviceCount(&n), ACL_SUCCESS);
  EXPECT_EQ(n, 3u);
  err = StderrOf(
      [] { EXPECT_EQ(aclrtSetDevice(4), ACL_ERROR_RT_INVALID_DEVICEID); });
  EXPECT_THAT(err, HasSubstr("(devices 3,6,7)"));
  aclrtContext ctx = nullptr;
  EXPECT_EQ(aclrtCreateContext(&ctx, 7), ACL_SUCCESS);
  EXPECT_EQ(aclrtDestroyContext(ctx), ACL_SUCCESS);
}

TEST_F(AclThreadTest, ManyThreadsEachOnTheirOwnDevice) {
  const std::vector<int32_t> devices = {2, 3, 4, 5};
  InitOn(devices);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const int32_t d = devices[t % devices.size()];
      if (aclrtSetDevice(d) != ACL_SUCCESS) ++failures;
      for (int i = 0; i < 50; ++i) {
        void* p = nullptr;
        int64_t v = t * 1000 + i, back = -1;
        if (aclrtMalloc(&p, sizeof(v), ACL_MEM_MALLOC_HUGE_FIRST) !=
                ACL_SUCCESS ||
            aclrtMemcpy(p, sizeof(v), &v, sizeof(v),
                        ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS ||
            aclrtMemcpy(&back, sizeof(back), p, sizeof(v),
                        ACL_MEMCPY_DEVICE_TO_HOST) != ACL_SUCCESS ||
            back != v || aclrtFree(p) != ACL_SUCCESS) {
          ++failures;
        }
        int32_t cur = -1;
        if (aclrtGetDevice(&cur) != ACL_SUCCESS || cur != d) ++failures;
      }
      if (aclrtResetDevice(d) != ACL_SUCCESS) ++failures;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(testing::ImplicitBindings(*Sim(), devices), 0u);
  for (int32_t d : devices) {
    EXPECT_EQ(Stats(d).contexts_alive, 0u) << d;
    EXPECT_EQ(Stats(d).mem_used_bytes, 0u) << d;
  }
}

}  // namespace
}  // namespace hflow
