// ScopedDevice tests: the default scope restores the thread's exact previous
// binding; an OnExit::kKeep scope (executor threads) leaves its device
// bound, makes no runtime call when the thread is already on the device's
// context, and rebinds when something switched the thread meanwhile. Device
// sets without 0 ({2,3,4,5}, {3,6,7}) and with it ({0,1}).
#include "rt/device_binding.h"

#include <gtest/gtest.h>

#include <vector>

#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "test_util.h"

namespace hflow {
namespace rt {
namespace {

using ::hflow::testing::InstallSim;
using ::hflow::testing::RunOnFreshThread;

class ScopedDeviceTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  int32_t First() const { return GetParam().front(); }
  int32_t Last() const { return GetParam().back(); }
};

int32_t BoundDevice() {
  int32_t d = -1;
  rt::Context* ctx = rt::GetCurrentContext();
  if (ctx == nullptr || !rt::GetContextDevice(ctx, &d).ok()) return -1;
  return d;
}

size_t Count(const std::vector<rt::CallRecord>& log, rt::Op op) {
  size_t n = 0;
  for (const auto& r : log) n += r.op == op;
  return n;
}

TEST_P(ScopedDeviceTest, RestoreLeavesTheThreadAsItWas) {
  auto sim = InstallSim(GetParam());
  DeviceContexts contexts(sim.get());
  RunOnFreshThread([&] {
    {
      ScopedDevice bound(&contexts, Last());
      ASSERT_TRUE(bound.status().ok()) << bound.status().ToString();
      EXPECT_EQ(BoundDevice(), Last());
    }
    EXPECT_EQ(rt::GetCurrentContext(), nullptr);
  });
}

TEST_P(ScopedDeviceTest, KeepLeavesTheDeviceBoundAndRebindsForFree) {
  auto sim = InstallSim(GetParam());
  DeviceContexts contexts(sim.get());
  RunOnFreshThread([&] {
    {
      ScopedDevice bound(&contexts, Last(), ScopedDevice::OnExit::kKeep);
      ASSERT_TRUE(bound.status().ok()) << bound.status().ToString();
    }
    EXPECT_EQ(BoundDevice(), Last());
    sim->SetRecordCalls(true);
    sim->ClearCallLog();
    {
      ScopedDevice again(&contexts, Last(), ScopedDevice::OnExit::kKeep);
      ASSERT_TRUE(again.status().ok());
      EXPECT_TRUE(again.Require(Last()).ok());
    }
    EXPECT_TRUE(sim->CallLog().empty())
        << "a thread already on the device's context needs no call";
    sim->SetRecordCalls(false);
    ASSERT_TRUE(rt::SetCurrentContext(nullptr).ok());
  });
}

// A UDF that switched its executor thread to another device (the bug class
// hflow exists for) is corrected by the next run's scope.
TEST_P(ScopedDeviceTest, KeepRebindsAfterTheThreadWasSwitched) {
  auto sim = InstallSim(GetParam());
  DeviceContexts contexts(sim.get());
  RunOnFreshThread([&] {
    { ScopedDevice run(&contexts, Last(), ScopedDevice::OnExit::kKeep); }
    ASSERT_TRUE(rt::SetDevice(First()).ok());  // the "library" switches
    sim->SetRecordCalls(true);
    sim->ClearCallLog();
    {
      ScopedDevice run(&contexts, Last(), ScopedDevice::OnExit::kKeep);
      ASSERT_TRUE(run.status().ok());
      EXPECT_EQ(BoundDevice(), Last());
    }
    EXPECT_EQ(Count(sim->CallLog(), rt::Op::kSetCurrentContext), 1u);
    sim->SetRecordCalls(false);
    EXPECT_EQ(BoundDevice(), Last());
    ASSERT_TRUE(rt::SetCurrentContext(nullptr).ok());
    ASSERT_TRUE(rt::ResetDevice(First()).ok());
  });
}

// The check compares contexts, not devices: a user's own context on the
// same device is not hflow's, so both kinds bind the default context, and
// kRestore gives the user's back.
TEST_P(ScopedDeviceTest, AUsersContextOnTheDeviceIsNotTakenForOurs) {
  auto sim = InstallSim(GetParam());
  DeviceContexts contexts(sim.get());
  RunOnFreshThread([&] {
    rt::Context* mine = nullptr;
    ASSERT_TRUE(rt::CreateContext(Last(), &mine).ok());
    rt::Context* ours = nullptr;
    {
      ScopedDevice bound(&contexts, Last());
      ASSERT_TRUE(bound.status().ok());
      ours = rt::GetCurrentContext();
      EXPECT_NE(ours, mine);
      EXPECT_EQ(BoundDevice(), Last());
    }
    EXPECT_EQ(rt::GetCurrentContext(), mine);
    {
      ScopedDevice run(&contexts, Last(), ScopedDevice::OnExit::kKeep);
      ASSERT_TRUE(run.status().ok());
      EXPECT_EQ(rt::GetCurrentContext(), ours);
      // Something switches the thread inside the scope; Reassert undoes it
      // and is free when nothing did.
      ASSERT_TRUE(rt::SetCurrentContext(mine).ok());
      ASSERT_TRUE(run.Reassert().ok());
      EXPECT_EQ(rt::GetCurrentContext(), ours);
      sim->SetRecordCalls(true);
      sim->ClearCallLog();
      ASSERT_TRUE(run.Reassert().ok());
      sim->SetRecordCalls(false);
      EXPECT_TRUE(sim->CallLog().empty());
    }
    EXPECT_EQ(rt::GetCurrentContext(), ours);
    ASSERT_TRUE(rt::SetCurrentContext(nullptr).ok());
    ASSERT_TRUE(rt::DestroyContext(mine).ok());
  });
}

INSTANTIATE_TEST_SUITE_P(Devices, ScopedDeviceTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1}),
                         [](const auto& info) {
                           return testing::DevicesName(info.param);
                         });

}  // namespace
}  // namespace rt
}  // namespace hflow
