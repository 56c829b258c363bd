// Unit tests of sim device memory: capacity accounting, pointer validation
// of copies (host/device, cross-device), double frees.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "rt/sim/sim_runtime.h"
#include "test_util.h"

namespace hflow {
namespace rt {
namespace {

using ::hflow::testing::MakeSim;
using ::hflow::testing::RunOnFreshThread;
using ::testing::HasSubstr;

TEST(SimMemoryTest, CapacityIsEnforcedAndReported) {
  auto sim = MakeSim({2, 3}, std::nullopt, /*memory_bytes=*/1000);
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());
    void* a = nullptr;
    void* b = nullptr;
    ASSERT_TRUE(sim->Malloc(2, 600, &a).ok());
    Status s = sim->Malloc(2, 600, &b);
    EXPECT_EQ(s.code(), StatusCode::kOutOfMemory);
    EXPECT_THAT(s.message(), HasSubstr("device 2"));
    EXPECT_THAT(s.message(), HasSubstr("600 of 1000"));
    EXPECT_EQ(b, nullptr);
    uint64_t free_b = 0, total = 0;
    ASSERT_TRUE(sim->GetMemInfo(2, &free_b, &total).ok());
    EXPECT_EQ(total, 1000u);
    EXPECT_EQ(free_b, 400u);
    ASSERT_TRUE(sim->Free(2, a).ok());
    DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(2, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, 0u);
    EXPECT_EQ(st.mem_peak_bytes, 600u);
    EXPECT_EQ(st.live_allocations, 0u);
    ASSERT_TRUE(sim->ResetDevice(2).ok());
  });
}

// Large blocks are mapped (Note [Mapped device memory]): they hold data,
// copy and free like small ones, and are counted the same; one left
// allocated is released with the runtime.
TEST(SimMemoryTest, LargeAllocationsAreUsableCountedAndFreed) {
  auto sim = MakeSim({2, 3});
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(3).ok());
    constexpr size_t kBig = (4u << 20) + 123;  // past the mapping threshold
    void* big = nullptr;
    void* kept = nullptr;
    ASSERT_TRUE(sim->Malloc(3, kBig, &big).ok());
    ASSERT_TRUE(sim->Malloc(3, kBig, &kept).ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % 64, 0u);
    ASSERT_TRUE(sim->Memset(3, big, 7, kBig).ok());
    std::vector<uint8_t> back(kBig);
    ASSERT_TRUE(
        sim->Memcpy(3, back.data(), big, kBig, MemcpyKind::kDeviceToHost).ok());
    EXPECT_EQ(back.front(), 7);
    EXPECT_EQ(back.back(), 7);
    DeviceStats st;
    ASSERT_TRUE(sim->GetDeviceStats(3, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, 2 * kBig);
    ASSERT_TRUE(sim->Free(3, big).ok());
    ASSERT_TRUE(sim->GetDeviceStats(3, &st).ok());
    EXPECT_EQ(st.mem_used_bytes, kBig);
    EXPECT_EQ(st.live_allocations, 1u);
    ASSERT_TRUE(sim->ResetDevice(3).ok());
  });
  sim.reset();  // frees `kept` (a leak check would see it otherwise)
}

TEST(SimMemoryTest, DoubleFreeAndForeignFreeAreRejected) {
  auto sim = MakeSim({2, 3});
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(2).ok());
    void* p = nullptr;
    ASSERT_TRUE(sim->Malloc(2, 32, &p).ok());
    ASSERT_TRUE(sim->Free(2, p).ok());
    Status s = sim->Free(2, p);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("double free"));
    ASSERT_TRUE(sim->ResetDevice(2).ok());
    // Memory of device 3 cannot be freed as device 2's.
    ASSERT_TRUE(sim->SetDevice(3).ok());
    ASSERT_TRUE(sim->Malloc(3, 32, &p).ok());
    ASSERT_TRUE(sim->ResetDevice(3).ok());
    ASSERT_TRUE(sim->SetDevice(2).ok());
    EXPECT_EQ(sim->Free(2, p).code(), StatusCode::kInvalidArgument);
    ASSERT_TRUE(sim->ResetDevice(2).ok());
    ASSERT_TRUE(sim->SetDevice(3).ok());
    EXPECT_TRUE(sim->Free(3, p).ok());
    ASSERT_TRUE(sim->ResetDevice(3).ok());
  });
}

TEST(SimMemoryTest, CopiesValidateEveryDevicePointer) {
  auto sim = MakeSim({3, 6, 7});
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(6).ok());
    void* d6 = nullptr;
    ASSERT_TRUE(sim->Malloc(6, 256, &d6).ok());
    std::vector<char> host(512, 1);
    // Overrunning the allocation.
    EXPECT_EQ(
        sim->Memcpy(6, d6, host.data(), 512, MemcpyKind::kHostToDevice).code(),
        StatusCode::kInvalidArgument);
    // Host pointer passed as device pointer.
    EXPECT_EQ(
        sim->Memcpy(6, host.data(), d6, 16, MemcpyKind::kHostToDevice).code(),
        StatusCode::kInvalidArgument);
    // Interior pointer within bounds is fine.
    EXPECT_TRUE(sim->Memcpy(6, static_cast<char*>(d6) + 128, host.data(), 128,
                            MemcpyKind::kHostToDevice)
                    .ok());
    EXPECT_TRUE(sim->Memset(6, d6, 0, 256).ok());
    ASSERT_TRUE(sim->Free(6, d6).ok());
    ASSERT_TRUE(sim->ResetDevice(6).ok());
  });
}

// Lookups are cached per thread (Note [Allocation lookup cache]): a copy
// that succeeded must not vouch for the allocation once any thread freed
// it, and a neighbour's allocation must not be mistaken for it.
TEST(SimMemoryTest, CopyAfterAnotherThreadFreedIsRejected) {
  auto sim = MakeSim({3, 6, 7});
  void* d6 = nullptr;
  std::vector<char> host(256, 1);
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(6).ok());
    ASSERT_TRUE(sim->Malloc(6, 256, &d6).ok());
    for (int i = 0; i < 3; ++i) {  // the first fills the cache
      ASSERT_TRUE(
          sim->Memcpy(6, d6, host.data(), 256, MemcpyKind::kHostToDevice).ok());
    }
    RunOnFreshThread([&] {
      ASSERT_TRUE(sim->SetDevice(6).ok());
      ASSERT_TRUE(sim->Free(6, d6).ok());
      ASSERT_TRUE(sim->ResetDevice(6).ok());
    });
    Status s = sim->Memcpy(6, d6, host.data(), 256, MemcpyKind::kHostToDevice);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
    EXPECT_THAT(s.message(), HasSubstr("not inside a live allocation"));
    EXPECT_EQ(sim->Memset(6, d6, 0, 16).code(), StatusCode::kInvalidArgument);
    // The freed address may come back for another device: a copy naming
    // device 6 must still be refused.
    ASSERT_TRUE(sim->ResetDevice(6).ok());
    ASSERT_TRUE(sim->SetDevice(7).ok());
    void* again = nullptr;
    ASSERT_TRUE(sim->Malloc(7, 256, &again).ok());
    ASSERT_TRUE(
        sim->Memcpy(7, again, host.data(), 256, MemcpyKind::kHostToDevice)
            .ok());
    ASSERT_TRUE(sim->ResetDevice(7).ok());
    ASSERT_TRUE(sim->SetDevice(6).ok());
    EXPECT_EQ(sim->Memcpy(6, again, host.data(), 256, MemcpyKind::kHostToDevice)
                  .code(),
              StatusCode::kInvalidArgument)
        << (again == d6 ? "same address reused" : "new address");
    ASSERT_TRUE(sim->ResetDevice(6).ok());
    ASSERT_TRUE(sim->SetDevice(7).ok());
    ASSERT_TRUE(sim->Free(7, again).ok());
    // A cached hit still checks the range against the allocation it found.
    void* d7 = nullptr;
    ASSERT_TRUE(sim->Malloc(7, 128, &d7).ok());
    ASSERT_TRUE(
        sim->Memcpy(7, d7, host.data(), 128, MemcpyKind::kHostToDevice).ok());
    EXPECT_EQ(
        sim->Memcpy(7, d7, host.data(), 129, MemcpyKind::kHostToDevice).code(),
        StatusCode::kInvalidArgument);
    ASSERT_TRUE(sim->Free(7, d7).ok());
    ASSERT_TRUE(sim->ResetDevice(7).ok());
  });
}

TEST(SimMemoryTest, CrossDeviceCopyIssuedOnEitherEnd) {
  auto sim = MakeSim({3, 6, 7});
  void* d3 = nullptr;
  void* d7 = nullptr;
  RunOnFreshThread([&] {
    ASSERT_TRUE(sim->SetDevice(3).ok());
    ASSERT_TRUE(sim->Malloc(3, 1024, &d3).ok());
    std::vector<uint8_t> src(1024);
    std::iota(src.begin(), src.end(), 0);
    ASSERT_TRUE(
        sim->Memcpy(3, d3, src.data(), 1024, MemcpyKind::kHostToDevice).ok());
    ASSERT_TRUE(sim->ResetDevice(3).ok());
    ASSERT_TRUE(sim->SetDevice(7).ok());
    ASSERT_TRUE(sim->Malloc(7, 1024, &d7).ok());
    ASSERT_TRUE(sim->Memcpy(7, d7, d3, 1024, MemcpyKind::kDeviceToDevice).ok());
    std::vector<uint8_t> back(1024);
    ASSERT_TRUE(
        sim->Memcpy(7, back.data(), d7, 1024, MemcpyKind::kDeviceToHost).ok());
    EXPECT_EQ(back, src);
    ASSERT_TRUE(sim->ResetDevice(7).ok());
    // Issued on a third device: rejected.
    ASSERT_TRUE(sim->SetDevice(6).ok());
    Status s = sim->Memcpy(6, d7, d3, 1024, MemcpyKind::kDeviceToDevice);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(), HasSubstr("from device 3 to device 7"));
    ASSERT_TRUE(sim->ResetDevice(6).ok());
    ASSERT_TRUE(sim->SetDevice(3).ok());
    ASSERT_TRUE(sim->Free(3, d3).ok());
    ASSERT_TRUE(sim->ResetDevice(3).ok());
    ASSERT_TRUE(sim->SetDevice(7).ok());
    ASSERT_TRUE(sim->Free(7, d7).ok());
    ASSERT_TRUE(sim->ResetDevice(7).ok());
  });
}

}  // namespace
}  // namespace rt
}  // namespace hflow
