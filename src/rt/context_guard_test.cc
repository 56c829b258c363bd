// ContextGuard tests: the guard restores the caller's exact context (none, a
// default context, a user context, a context of a device nothing else uses)
// on normal return, early error return and exception, whatever the guarded
// code did to the binding; and it never creates or binds anything itself.
#include "hflow/context_guard.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "hflow/rt.h"
#include "test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::InstallSim;
using ::hflow::testing::RunOnFreshThread;

enum class Caller { kNone, kDefaultOfUsed, kUser, kUnusedDevice };
enum class Exit { kNormal, kEarlyError, kException };
// What the guarded body does to the binding before leaving.
enum class Body { kSetDevice, kCreateContext, kUnbind, kImplicitBind };

std::string Name(Caller c) {
  switch (c) {
    case Caller::kNone:
      return "None";
    case Caller::kDefaultOfUsed:
      return "DefaultOfUsed";
    case Caller::kUser:
      return "User";
    case Caller::kUnusedDevice:
      return "UnusedDevice";
  }
  return "";
}

// Device set {0,2,3,7}: the guarded code uses 2 and 3 (and 0 through the
// quirk); 7 is a device it never touches.
Status Guarded(Body body, Exit exit) {
  ContextGuard guard;
  rt::Context* ctx = nullptr;
  switch (body) {
    case Body::kSetDevice:
      HFLOW_RETURN_IF_ERROR(rt::SetDevice(2));
      break;
    case Body::kCreateContext:
      HFLOW_RETURN_IF_ERROR(rt::CreateContext(3, &ctx));
      break;
    case Body::kUnbind:
      HFLOW_RETURN_IF_ERROR(rt::SetCurrentContext(nullptr));
      break;
    case Body::kImplicitBind: {
      HFLOW_RETURN_IF_ERROR(rt::SetCurrentContext(nullptr));
      void* p = nullptr;
      HFLOW_RETURN_IF_ERROR(rt::Malloc(0, 8, &p));  // default device quirk
      HFLOW_RETURN_IF_ERROR(rt::Free(0, p));
      break;
    }
  }
  if (exit == Exit::kEarlyError) return Status::Internal("early");
  if (exit == Exit::kException) throw std::runtime_error("thrown");
  return Status::OK();
}

class ContextGuardMatrix
    : public ::testing::TestWithParam<std::tuple<Caller, Exit, Body>> {};

TEST_P(ContextGuardMatrix, RestoresExactCallerContext) {
  // Plain variables, not a structured binding: the lambda below captures
  // them, which C++17 allows only for variables (clang refuses bindings).
  const Caller caller = std::get<0>(GetParam());
  const Exit exit = std::get<1>(GetParam());
  const Body body = std::get<2>(GetParam());
  auto sim = InstallSim({0, 2, 3, 7});
  RunOnFreshThread([&] {
    rt::Context* user = nullptr;
    switch (caller) {
      case Caller::kNone:
        break;
      case Caller::kDefaultOfUsed:
        ASSERT_TRUE(rt::SetDevice(2).ok());
        break;
      case Caller::kUser:
        ASSERT_TRUE(rt::CreateContext(3, &user).ok());
        break;
      case Caller::kUnusedDevice:
        ASSERT_TRUE(rt::SetDevice(7).ok());
        break;
    }
    rt::Context* before = rt::GetCurrentContext();
    rt::DeviceStats s7_before;
    ASSERT_TRUE(sim->GetDeviceStats(7, &s7_before).ok());
    try {
      Status s = Guarded(body, exit);
      EXPECT_EQ(s.ok(), exit == Exit::kNormal) << s.ToString();
    } catch (const std::runtime_error&) {
      EXPECT_EQ(exit, Exit::kException);
    }
    EXPECT_EQ(rt::GetCurrentContext(), before);
    rt::DeviceStats s7;
    ASSERT_TRUE(sim->GetDeviceStats(7, &s7).ok());
    EXPECT_EQ(s7.contexts_created, s7_before.contexts_created);
    EXPECT_EQ(s7.implicit_bindings, 0u);
  });
}

INSTANTIATE_TEST_SUITE_P(
    All, ContextGuardMatrix,
    ::testing::Combine(::testing::Values(Caller::kNone, Caller::kDefaultOfUsed,
                                         Caller::kUser, Caller::kUnusedDevice),
                       ::testing::Values(Exit::kNormal, Exit::kEarlyError,
                                         Exit::kException),
                       ::testing::Values(Body::kSetDevice, Body::kCreateContext,
                                         Body::kUnbind, Body::kImplicitBind)),
    [](const auto& info) {
      return Name(std::get<0>(info.param)) + "_" +
             std::to_string(static_cast<int>(std::get<1>(info.param))) + "_" +
             std::to_string(static_cast<int>(std::get<2>(info.param)));
    });

TEST(ContextGuardTest, UnchangedContextMakesNoRuntimeCall) {
  auto sim = InstallSim({2, 3});
  sim->SetRecordCalls(true);
  RunOnFreshThread([&] {
    { ContextGuard g; }
    ASSERT_TRUE(rt::SetDevice(3).ok());
    sim->ClearCallLog();
    { ContextGuard g; }
    EXPECT_TRUE(sim->CallLog().empty());
    ASSERT_TRUE(rt::ResetDevice(3).ok());
  });
}

TEST(ContextGuardTest, NeverCreatesContextsOnRestore) {
  // The PyTorch #91122 shape: restoring "none" must not touch device 0.
  auto sim = InstallSim({0, 1});
  RunOnFreshThread([&] {
    {
      ContextGuard g;
      ASSERT_TRUE(rt::SetDevice(1).ok());
    }
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
    ASSERT_TRUE(rt::ResetDevice(1).ok());
  });
  rt::DeviceStats s0;
  ASSERT_TRUE(sim->GetDeviceStats(0, &s0).ok());
  EXPECT_EQ(s0.contexts_created, 0u);
  EXPECT_EQ(s0.implicit_bindings, 0u);
}

TEST(ContextGuardTest, SavedContextDestroyedInsideLeavesThreadUnbound) {
  InstallSim({2, 3});
  RunOnFreshThread([&] {
    rt::Context* user = nullptr;
    ASSERT_TRUE(rt::CreateContext(3, &user).ok());
    {
      ContextGuard g;
      ASSERT_TRUE(rt::SetDevice(2).ok());
      ASSERT_TRUE(rt::DestroyContext(user).ok());
    }
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
    ASSERT_TRUE(rt::ResetDevice(2).ok());
  });
}

TEST(ContextGuardTest, WithoutRuntimeIsHarmless) {
  rt::InstallRuntime(nullptr);
  ContextGuard g;
  EXPECT_EQ(g.saved(), nullptr);
  EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  EXPECT_EQ(rt::SetDevice(0).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace hflow
