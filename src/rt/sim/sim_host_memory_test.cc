// Unit tests of the sim's registered host memory: a registered range is a
// valid device-side pointer of every device's copies (and only while
// registered), registrations are accounted, overlapping ones refused, and
// both calls can be failed by fault injection.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "rt/sim/sim_runtime.h"
#include "test_util.h"

namespace hflow {
namespace rt {
namespace {

using ::hflow::testing::MakeSim;
using ::hflow::testing::RunOnFreshThread;
using ::testing::HasSubstr;

TEST(SimHostMemoryTest, RegisteredMemoryIsCopiedFromByAnyDevice) {
  auto sim = MakeSim({2, 3, 4, 5});
  std::vector<uint8_t> host(4096, 7);
  ASSERT_TRUE(sim->HostRegister(host.data(), host.size()).ok());
  EXPECT_EQ(sim->RegisteredHostBytes(), 4096u);
  EXPECT_EQ(sim->HostRegistrations(), 1u);
  RunOnFreshThread([&] {
    for (int32_t d : {3, 5}) {
      ASSERT_TRUE(sim->SetDevice(d).ok());
      void* dev = nullptr;
      ASSERT_TRUE(sim->Malloc(d, 1024, &dev).ok());
      // As a device-side source, on device d: into its memory, and out.
      ASSERT_TRUE(sim->Memcpy(d, dev, host.data() + 100, 1024,
                              MemcpyKind::kDeviceToDevice)
                      .ok());
      std::vector<uint8_t> back(512, 0);
      ASSERT_TRUE(sim->Memcpy(d, back.data(), host.data(), 512,
                              MemcpyKind::kDeviceToHost)
                      .ok());
      EXPECT_EQ(back[511], 7);
      // A range running past the registration is refused.
      Status s = sim->Memcpy(d, dev, host.data() + 4000, 1024,
                             MemcpyKind::kDeviceToDevice);
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
      ASSERT_TRUE(sim->Free(d, dev).ok());
      ASSERT_TRUE(sim->ResetDevice(d).ok());
    }
  });
  ASSERT_TRUE(sim->HostUnregister(host.data()).ok());
  EXPECT_EQ(sim->RegisteredHostBytes(), 0u);
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());
    std::vector<uint8_t> back(16);
    Status s =
        sim->Memcpy(2, back.data(), host.data(), 16, MemcpyKind::kDeviceToHost);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument)
        << "unregistered memory is host memory again";
    ASSERT_TRUE(sim->ResetDevice(2).ok());
  });
}

TEST(SimHostMemoryTest, BadRegistrationsAreRefused) {
  auto sim = MakeSim({2, 3});
  std::vector<uint8_t> host(4096);
  EXPECT_EQ(sim->HostRegister(nullptr, 16).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(sim->HostRegister(host.data(), 0).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(sim->HostRegister(host.data() + 1024, 1024).ok());
  for (size_t at : {size_t(512), size_t(1500), size_t(2047)}) {
    Status s = sim->HostRegister(host.data() + at, 1024);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << at;
    EXPECT_THAT(s.message(), HasSubstr("overlaps"));
  }
  EXPECT_TRUE(sim->HostRegister(host.data(), 1024).ok()) << "adjacent is fine";
  EXPECT_EQ(sim->HostUnregister(host.data() + 1).code(),
            StatusCode::kInvalidArgument);
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());
    void* dev = nullptr;
    ASSERT_TRUE(sim->Malloc(2, 256, &dev).ok());
    EXPECT_EQ(sim->HostRegister(dev, 64).code(), StatusCode::kInvalidArgument)
        << "device memory is not host memory";
    EXPECT_EQ(sim->HostUnregister(dev).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(sim->Free(2, host.data()).code(), StatusCode::kInvalidArgument)
        << "a registration is not an allocation";
    ASSERT_TRUE(sim->Free(2, dev).ok());
    ASSERT_TRUE(sim->ResetDevice(2).ok());
  });
  EXPECT_EQ(sim->HostRegistrations(), 2u);
  ASSERT_TRUE(sim->HostUnregister(host.data()).ok());
  ASSERT_TRUE(sim->HostUnregister(host.data() + 1024).ok());
  EXPECT_EQ(sim->HostUnregister(host.data()).code(),
            StatusCode::kInvalidArgument);
}

// A registration left at the runtime's end is the caller's memory: the
// runtime gives back its own leaked allocations, never that.
TEST(SimHostMemoryTest, RuntimeEndLeavesRegisteredMemoryAlone) {
  std::vector<uint8_t> host(2 << 20, 5);  // past the mapping threshold too
  std::vector<uint8_t> small(64, 6);
  {
    auto sim = MakeSim({2});
    ASSERT_TRUE(sim->HostRegister(host.data(), host.size()).ok());
    ASSERT_TRUE(sim->HostRegister(small.data(), small.size()).ok());
  }
  host[0] = 1;
  small[0] = 2;
  EXPECT_EQ(host[0] + small[0], 3);
  EXPECT_EQ(host.back(), 5);
}

TEST(SimHostMemoryTest, FaultsReachBothCalls) {
  auto sim = MakeSim({2});
  std::vector<uint8_t> host(64);
  sim->InjectFault(Op::kHostRegister, 1, Status::Internal("injected"));
  EXPECT_EQ(sim->HostRegister(host.data(), 64).code(), StatusCode::kInternal);
  EXPECT_EQ(sim->HostRegistrations(), 0u) << "a failed call has no effect";
  ASSERT_TRUE(sim->HostRegister(host.data(), 64).ok());
  sim->InjectFault(Op::kHostUnregister, 1, Status::Internal("injected"));
  EXPECT_EQ(sim->HostUnregister(host.data()).code(), StatusCode::kInternal);
  EXPECT_EQ(sim->HostRegistrations(), 1u);
  ASSERT_TRUE(sim->HostUnregister(host.data()).ok());
  EXPECT_STREQ(OpName(Op::kHostRegister), "HostRegister");
}

}  // namespace
}  // namespace rt
}  // namespace hflow
