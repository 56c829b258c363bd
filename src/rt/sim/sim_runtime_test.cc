// Unit tests of the sim runtime's context rules (docs/architecture.md): fresh
// threads are unbound, getters never bind, the binding rule for
// device-dependent calls, the default-device quirk, reference-counted
// ResetDevice, user contexts and bad arguments.
#include "rt/sim/sim_runtime.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "test_util.h"

namespace hflow {
namespace rt {
namespace {

using ::hflow::testing::MakeSim;
using ::hflow::testing::RunOnFreshThread;
using ::testing::HasSubstr;

TEST(SimRuntimeTest, FreshThreadHasNoContext) {
  auto sim = MakeSim({0, 1, 2, 3});
  RunOnFreshThread([&] {
    EXPECT_EQ(sim->GetCurrentContext(), nullptr);
    int32_t d = -1;
    Status s = sim->GetDevice(&d);
    EXPECT_EQ(s.code(), StatusCode::kNoContext) << s.ToString();
    EXPECT_EQ(d, -1);
  });
}

TEST(SimRuntimeTest, GettersNeverBind) {
  auto sim = MakeSim({0, 1, 2, 3});
  RunOnFreshThread([&] {
    for (int i = 0; i < 3; ++i) {
      EXPECT_EQ(sim->GetCurrentContext(), nullptr);
      int32_t d;
      EXPECT_FALSE(sim->GetDevice(&d).ok());
    }
    DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(2, &st).ok());
    EXPECT_EQ(st.contexts_created, 0u);
    EXPECT_EQ(sim->GetCurrentContext(), nullptr);
  });
  EXPECT_EQ(testing::ContextsCreated(*sim, {0, 1, 2, 3}), 0u);
  EXPECT_EQ(testing::ImplicitBindings(*sim, {0, 1, 2, 3}), 0u);
}

TEST(SimRuntimeTest, UnboundCallOnDefaultDeviceBindsImplicitlyAndCounts) {
  auto sim = MakeSim({0, 1, 2, 3});
  ASSERT_EQ(sim->DefaultDevice(), 0);
  RunOnFreshThread([&] {
    void* p = nullptr;
    ASSERT_TRUE(sim->Malloc(0, 128, &p).ok());
    ASSERT_NE(sim->GetCurrentContext(), nullptr);  // the quirk bound it
    int32_t d = -1;
    ASSERT_TRUE(sim->GetDevice(&d).ok());
    EXPECT_EQ(d, 0);
    EXPECT_TRUE(sim->Free(0, p).ok());
  });
  DeviceStats st;
  ASSERT_TRUE(sim->GetDeviceStats(0, &st).ok());
  EXPECT_EQ(st.implicit_bindings, 1u);
  EXPECT_EQ(st.contexts_created, 1u);
  EXPECT_EQ(testing::ContextsCreated(*sim, {1, 2, 3}), 0u);
}

TEST(SimRuntimeTest, UnboundCallOnOtherDeviceFailsNamingIt) {
  auto sim = MakeSim({0, 1, 2, 3});
  RunOnFreshThread([&] {
    void* p = nullptr;
    Status s = sim->Malloc(2, 128, &p);
    EXPECT_EQ(s.code(), StatusCode::kNoContext);
    EXPECT_THAT(s.message(), HasSubstr("device 2"));
    EXPECT_THAT(s.message(), HasSubstr("no valid context is bound"));
    EXPECT_THAT(s.message(), HasSubstr("test-fresh"));  // the thread's name
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(sim->GetCurrentContext(), nullptr);
  });
  DeviceStats st;
  ASSERT_TRUE(sim->GetDeviceStats(2, &st).ok());
  EXPECT_EQ(st.mem_used_bytes, 0u);
  EXPECT_EQ(st.contexts_created, 0u);
}

TEST(SimRuntimeTest, BoundToOtherDeviceFailsWithMismatchNamingBoth) {
  auto sim = MakeSim({0, 1, 2, 3});
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(3).ok());
    void* p = nullptr;
    Status s = sim->Malloc(2, 64, &p);
    EXPECT_EQ(s.code(), StatusCode::kContextMismatch);
    EXPECT_THAT(s.message(), HasSubstr("device 3"));
    EXPECT_THAT(s.message(), HasSubstr("device 2"));
    // Still bound to 3; mismatch never rebinds.
    int32_t d;
    ASSERT_TRUE(sim->GetDevice(&d).ok());
    EXPECT_EQ(d, 3);
    // And the default device does not rescue a bound thread either.
    EXPECT_EQ(sim->Malloc(0, 64, &p).code(), StatusCode::kContextMismatch);
    ASSERT_TRUE(sim->ResetDevice(3).ok());
  });
  EXPECT_EQ(testing::ImplicitBindings(*sim, {0, 1, 2, 3}), 0u);
}

TEST(SimRuntimeTest, BoundToRightDeviceProceeds) {
  auto sim = MakeSim({2, 3, 4, 5});
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(4).ok());
    void* p = nullptr;
    ASSERT_TRUE(sim->Malloc(4, 1000, &p).ok());
    std::vector<char> host(1000, 7), back(1000, 0);
    ASSERT_TRUE(
        sim->Memcpy(4, p, host.data(), 1000, MemcpyKind::kHostToDevice).ok());
    ASSERT_TRUE(
        sim->Memcpy(4, back.data(), p, 1000, MemcpyKind::kDeviceToHost).ok());
    EXPECT_EQ(back, host);
    ASSERT_TRUE(sim->Free(4, p).ok());
    ASSERT_TRUE(sim->ResetDevice(4).ok());
  });
}

// Device sets that do not start at 0, and one that does.
class DeviceSetTest : public ::testing::TestWithParam<std::vector<int32_t>> {};

TEST_P(DeviceSetTest, EveryDeviceNeedsItsOwnBinding) {
  const std::vector<int32_t> devices = GetParam();
  auto sim = MakeSim(devices, kNoDefaultDevice);
  EXPECT_EQ(sim->DeviceIds(), devices);
  for (int32_t d : devices) {
    RunOnFreshThread([&] {
      void* p = nullptr;
      EXPECT_EQ(sim->Malloc(d, 8, &p).code(), StatusCode::kNoContext)
          << "device " << d;
      ASSERT_TRUE(sim->SetDevice(d).ok());
      ASSERT_TRUE(sim->Malloc(d, 8, &p).ok());
      ASSERT_TRUE(sim->Free(d, p).ok());
      ASSERT_TRUE(sim->ResetDevice(d).ok());
    });
  }
  for (int32_t d : devices) {
    DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(d, &st).ok());
    EXPECT_EQ(st.contexts_created, 1u);
    EXPECT_EQ(st.contexts_alive, 0u);  // ResetDevice released it
    EXPECT_EQ(st.implicit_bindings, 0u);
    EXPECT_EQ(st.mem_used_bytes, 0u);
  }
}

TEST_P(DeviceSetTest, DefaultDeviceIsZeroOnlyWhenPresent) {
  const std::vector<int32_t> devices = GetParam();
  auto sim = MakeSim(devices);
  bool has_zero = devices.front() == 0;
  EXPECT_EQ(sim->DefaultDevice().has_value(), has_zero);
  RunOnFreshThread([&] {
    void* p = nullptr;
    Status s = sim->Malloc(devices.front(), 8, &p);
    EXPECT_EQ(s.ok(), has_zero) << s.ToString();
    if (s.ok()) {
      EXPECT_TRUE(sim->Free(devices.front(), p).ok());
    }
  });
}

TEST_P(DeviceSetTest, DefaultDeviceIsConfigurable) {
  const std::vector<int32_t> devices = GetParam();
  const int32_t chosen = devices.back();
  auto sim = MakeSim(devices, chosen);
  EXPECT_EQ(sim->DefaultDevice(), chosen);
  RunOnFreshThread([&] {
    void* p = nullptr;
    ASSERT_TRUE(sim->Malloc(chosen, 8, &p).ok());
    ASSERT_TRUE(sim->Free(chosen, p).ok());
  });
  RunOnFreshThread([&] {
    void* p = nullptr;
    EXPECT_EQ(sim->Malloc(devices.front(), 8, &p).code(),
              StatusCode::kNoContext);
  });
  EXPECT_EQ(testing::ImplicitBindings(*sim, {chosen}), 1u);
}

INSTANTIATE_TEST_SUITE_P(Sets, DeviceSetTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1, 2, 3}));

TEST(SimRuntimeTest, DefaultDeviceOutsideClusterRejected) {
  SimOptions opts;
  opts.cluster = MakeLocalCluster({2, 3});
  opts.default_device = 0;
  std::shared_ptr<SimRuntime> sim;
  Status s = SimRuntime::Create(opts, &sim);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("default device 0"));
}

TEST(SimRuntimeTest, ResetDeviceIsReferenceCounted) {
  auto sim = MakeSim({2, 3});
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());
    Context* first = sim->GetCurrentContext();
    ASSERT_TRUE(sim->SetDevice(2).ok());  // same default context, ref 2
    EXPECT_EQ(sim->GetCurrentContext(), first);
    DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(2, &st).ok());
    EXPECT_EQ(st.default_context_refs, 2);
    EXPECT_EQ(st.contexts_created, 1u);
    ASSERT_TRUE(sim->ResetDevice(2).ok());
    ASSERT_TRUE(sim->GetDeviceStats(2, &st).ok());
    EXPECT_EQ(st.contexts_alive, 1u);  // one reference left
    ASSERT_TRUE(sim->ResetDevice(2).ok());
    ASSERT_TRUE(sim->GetDeviceStats(2, &st).ok());
    EXPECT_EQ(st.contexts_alive, 0u);
    EXPECT_EQ(sim->GetCurrentContext(), nullptr);  // our binding went with it
    Status s = sim->ResetDevice(2);
    EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
    EXPECT_THAT(s.message(), HasSubstr("in pairs"));
    // A later SetDevice creates a fresh default context.
    ASSERT_TRUE(sim->SetDevice(2).ok());
    EXPECT_NE(sim->ContextId(sim->GetCurrentContext()), sim->ContextId(first));
    ASSERT_TRUE(sim->ResetDevice(2).ok());
  });
}

TEST(SimRuntimeTest, DefaultContextSharedAcrossThreads) {
  auto sim = MakeSim({3, 6, 7});
  Context* a = nullptr;
  Context* b = nullptr;
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(6).ok());
    a = sim->GetCurrentContext();
    RunOnFreshThread([&] {
      EXPECT_EQ(sim->GetCurrentContext(), nullptr);  // not inherited
      ASSERT_TRUE(sim->SetDevice(6).ok());
      b = sim->GetCurrentContext();
      ASSERT_TRUE(sim->ResetDevice(6).ok());
    });
    ASSERT_TRUE(sim->ResetDevice(6).ok());
  });
  EXPECT_EQ(a, b);
  DeviceStats st;
  ASSERT_TRUE(sim->GetDeviceStats(6, &st).ok());
  EXPECT_EQ(st.contexts_created, 1u);
}

TEST(SimRuntimeTest, UserContextsBindAndDestroy) {
  auto sim = MakeSim({2, 3, 4, 5});
  RunOnFreshThread([&] {
    Context* ctx = nullptr;
    ASSERT_TRUE(sim->CreateContext(5, &ctx).ok());
    EXPECT_EQ(sim->GetCurrentContext(), ctx);
    int32_t d = -1;
    ASSERT_TRUE(sim->GetContextDevice(ctx, &d).ok());
    EXPECT_EQ(d, 5);
    void* p;
    ASSERT_TRUE(sim->Malloc(5, 16, &p).ok());
    ASSERT_TRUE(sim->SetCurrentContext(nullptr).ok());
    EXPECT_EQ(sim->Free(5, p).code(), StatusCode::kNoContext);
    ASSERT_TRUE(sim->SetCurrentContext(ctx).ok());
    ASSERT_TRUE(sim->Free(5, p).ok());
    ASSERT_TRUE(sim->DestroyContext(ctx).ok());
    EXPECT_EQ(sim->GetCurrentContext(), nullptr);
    // A destroyed handle is rejected, not dereferenced.
    EXPECT_EQ(sim->SetCurrentContext(ctx).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->DestroyContext(ctx).code(), StatusCode::kInvalidArgument);
  });
}

TEST(SimRuntimeTest, ThreadBoundToContextDestroyedElsewhereGetsClearError) {
  auto sim = MakeSim({2, 3});
  Context* ctx = nullptr;
  RunOnFreshThread([&] { ASSERT_TRUE(sim->CreateContext(3, &ctx).ok()); });
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetCurrentContext(ctx).ok());
    RunOnFreshThread([&] { ASSERT_TRUE(sim->DestroyContext(ctx).ok()); });
    void* p = nullptr;
    Status s = sim->Malloc(3, 8, &p);
    EXPECT_EQ(s.code(), StatusCode::kNoContext);
    EXPECT_THAT(s.message(), HasSubstr("destroyed"));
  });
}

TEST(SimRuntimeTest, InvalidArgumentsNeverCrash) {
  auto sim = MakeSim({2, 3});
  RunOnFreshThread([&] {
    EXPECT_EQ(sim->SetDevice(9).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->SetDevice(-1).code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(sim->SetDevice(9).message(), HasSubstr("devices: 2,3"));
    EXPECT_EQ(sim->ResetDevice(9).code(), StatusCode::kInvalidArgument);
    Context* c = nullptr;
    EXPECT_EQ(sim->CreateContext(7, &c).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->CreateContext(2, nullptr).code(),
              StatusCode::kInvalidArgument);
    int bogus = 0;
    auto* fake = reinterpret_cast<Context*>(&bogus);
    EXPECT_EQ(sim->SetCurrentContext(fake).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->DestroyContext(fake).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->DestroyContext(nullptr).code(),
              StatusCode::kInvalidArgument);
    int32_t d;
    EXPECT_EQ(sim->GetContextDevice(fake, &d).code(),
              StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->GetCurrentContext(), nullptr);
    ASSERT_TRUE(sim->SetDevice(2).ok());
    void* p = nullptr;
    EXPECT_EQ(sim->Malloc(2, 0, &p).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->Free(2, &bogus).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->Malloc(9, 8, &p).code(), StatusCode::kInvalidArgument);
    ASSERT_TRUE(sim->ResetDevice(2).ok());
  });
}

TEST(SimRuntimeTest, DefaultContextCannotBeDestroyedDirectly) {
  auto sim = MakeSim({2});
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());
    Status s = sim->DestroyContext(sim->GetCurrentContext());
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("ResetDevice"));
    ASSERT_TRUE(sim->ResetDevice(2).ok());
  });
}

TEST(SimRuntimeTest, BindingIsPrivateToRuntimeInstance) {
  auto a = MakeSim({2, 3});
  auto b = MakeSim({2, 3});
  RunOnFreshThread([&] {
    ASSERT_TRUE(a->SetDevice(2).ok());
    EXPECT_NE(a->GetCurrentContext(), nullptr);
    EXPECT_EQ(b->GetCurrentContext(), nullptr);
    ASSERT_TRUE(a->ResetDevice(2).ok());
  });
}

}  // namespace
}  // namespace rt
}  // namespace hflow
