// Unit tests of memory groups (docs/architecture.md, "Device-side
// services") created and used through ExchangeService proxy events:
// permission errors and their messages, capacity and budget errors, and block
// reuse. Teardown, MemoryGroup directly and MbufHead:
// memory_group_lifetime_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "hflow/rt.h"
#include "rt/device_binding.h"
#include "services/exchange_service.h"
#include "services/mbuf.h"
#include "services/memory_group.h"
#include "services/memory_group_test_util.h"
#include "services_test_util.h"
#include "test_util.h"

namespace hflow {
namespace services {
namespace {

using ::hflow::testing::ContextsCreated;
using ::hflow::testing::DevStats;
using ::hflow::testing::ImplicitBindings;
using ::hflow::testing::MakeGroup;
using ::hflow::testing::Submit;
using memory_group_test::MemoryGroupTest;
using ::testing::AllOf;
using ::testing::HasSubstr;

// --- Through the proxy events -------------------------------------------

TEST_F(MemoryGroupTest, CreateAddCacheAllocThroughEvents) {
  {
    ExchangeService svc(sim_.get());
    ASSERT_TRUE(Submit(svc, 3, CreateGroupRequest{"g", 1 << 20}).ok());
    ASSERT_TRUE(
        Submit(svc, 3, AddGroupRequest{"g", "exec", kPermAlloc | kPermRead})
            .ok());
    ASSERT_TRUE(Submit(svc, 3, AllocCacheRequest{"g", 64 << 10, 4096}).ok());
    EventReply reply;
    Status s = Submit(svc, 3, AllocMbufRequest{"g", 1000, "exec"}, &reply);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_NE(reply.mbuf, nullptr);
    EXPECT_EQ(reply.mbuf->size(), 1000u);
    EXPECT_EQ(reply.mbuf->device(), 3);
    ASSERT_NE(reply.mbuf->group(), nullptr);
    EXPECT_EQ(reply.mbuf->group()->name(), "g");
    EXPECT_EQ(reply.mbuf->group()->device(), 3);
    EXPECT_NE(reply.mbuf->data(), nullptr);

    GroupStats gs = reply.mbuf->group()->Stats();
    EXPECT_EQ(gs.size_bytes, 1u << 20);
    EXPECT_EQ(gs.reserved_bytes, 64u << 10);  // the cache
    EXPECT_EQ(gs.in_use_bytes, 1024u);        // 1000 rounded to its block
    EXPECT_EQ(gs.live_mbufs, 1u);
    EXPECT_EQ(gs.caches, 1u);
    // One device allocation (the cache) on device 3 only.
    EXPECT_EQ(DevStats(*sim_, 3).mem_used_bytes, 64u << 10);
    EXPECT_EQ(DevStats(*sim_, 3).live_allocations, 1u);
    for (int32_t d : {2, 4, 5}) {
      EXPECT_EQ(DevStats(*sim_, d).mem_used_bytes, 0u) << d;
    }

    // FreeMbuf: the device side drops its reference; ours is the last.
    std::weak_ptr<MemoryGroup> group = reply.mbuf->group();
    ASSERT_TRUE(Submit(svc, 3, FreeMbufRequest{std::move(reply.mbuf)}).ok());
    // Events on a device run in order: once the next one is answered, the
    // agent has dropped the FreeMbuf event with its reference.
    ASSERT_TRUE(Submit(svc, 3, AddGroupRequest{"g", "late", kPermRead}).ok());
    EXPECT_EQ(group.lock()->Stats().live_mbufs, 0u);
    EXPECT_EQ(group.lock()->Stats().in_use_bytes, 0u);
    ASSERT_TRUE(svc.DestroyGroup(3, "g").ok());
  }
  EXPECT_EQ(DevStats(*sim_, 3).mem_used_bytes, 0u);
  EXPECT_EQ(DevStats(*sim_, 3).live_allocations, 0u);
  EXPECT_EQ(ContextsCreated(*sim_, {2, 4, 5}), 0u);
  EXPECT_EQ(ImplicitBindings(*sim_, devices_), 0u);
}

TEST_F(MemoryGroupTest, DuplicateCreateGroupIsAlreadyExists) {
  ExchangeService svc(sim_.get());
  ASSERT_TRUE(Submit(svc, 4, CreateGroupRequest{"dup", 4096}).ok());
  Status s = Submit(svc, 4, CreateGroupRequest{"dup", 8192});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'dup'"), HasSubstr("device 4"),
                                 HasSubstr("CreateGroup event on device 4")));
  // The same name on another device is a different group.
  EXPECT_TRUE(Submit(svc, 5, CreateGroupRequest{"dup", 4096}).ok());
}

TEST_F(MemoryGroupTest, CreateGroupNeedsNameAndSize) {
  ExchangeService svc(sim_.get());
  Status s = Submit(svc, 2, CreateGroupRequest{"", 4096});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  s = Submit(svc, 2, CreateGroupRequest{"g", 0});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

TEST_F(MemoryGroupTest, UnknownGroupIsNotFoundNamingGroupAndDevice) {
  ExchangeService svc(sim_.get());
  ASSERT_TRUE(Submit(svc, 3, CreateGroupRequest{"real", 4096}).ok());
  auto expect_not_found = [](const Status& s, const std::string& device) {
    EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
    EXPECT_THAT(s.message(), AllOf(HasSubstr("'ghost'"), HasSubstr(device)));
  };
  expect_not_found(Submit(svc, 3, AddGroupRequest{"ghost", "m", kPermRead}),
                   "device 3");
  expect_not_found(Submit(svc, 3, AllocCacheRequest{"ghost", 1024, 64}),
                   "device 3");
  EventReply reply;
  expect_not_found(Submit(svc, 3, AllocMbufRequest{"ghost", 64}, &reply),
                   "device 3");
  EXPECT_EQ(reply.mbuf, nullptr);
  MbufPtr m;
  expect_not_found(svc.AllocMbuf(3, "ghost", "deployer", 64, &m), "device 3");
  EXPECT_EQ(m, nullptr);
  expect_not_found(svc.DestroyGroup(3, "ghost"), "device 3");
  // A group exists only on its own device.
  Status s = svc.AllocMbuf(4, "real", "deployer", 64, &m);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'real'"), HasSubstr("device 4")));
  s = svc.DestroyGroup(4, "real");
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
}

TEST_F(MemoryGroupTest, MemberNotAddedIsDeniedNamingGroupDeviceMember) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 5, "pool", 1 << 16, 1 << 14, 1024);
  EventReply reply;
  Status s = Submit(svc, 5, AllocMbufRequest{"pool", 64, "stranger"}, &reply);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("memory group 'pool'"), HasSubstr("device 5"),
                    HasSubstr("'stranger'"), HasSubstr("alloc"),
                    HasSubstr("not a member")));
  EXPECT_EQ(reply.mbuf, nullptr);
  // Directly, too.
  MbufPtr m;
  s = svc.AllocMbuf(5, "pool", "stranger", 64, &m);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(s.message(), HasSubstr("'stranger'"));
  EXPECT_EQ(m, nullptr);
}

TEST_F(MemoryGroupTest, MemberWithoutAllocPermissionIsDenied) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "pool", 1 << 16);
  ASSERT_TRUE(
      Submit(svc, 2, AddGroupRequest{"pool", "reader", kPermRead | kPermWrite})
          .ok());
  MbufPtr m;
  Status s = svc.AllocMbuf(2, "pool", "reader", 64, &m);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_THAT(
      s.message(),
      AllOf(HasSubstr("'pool'"), HasSubstr("device 2"), HasSubstr("'reader'"),
            HasSubstr("needs alloc"), HasSubstr("has read|write")));
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("not a member")));
  // Granting alloc later adds to the existing permissions.
  ASSERT_TRUE(
      Submit(svc, 2, AddGroupRequest{"pool", "reader", kPermAlloc}).ok());
  s = svc.AllocMbuf(2, "pool", "reader", 64, &m);
  EXPECT_TRUE(s.ok()) << s.ToString();
  auto g = m->group();
  EXPECT_TRUE(
      g->CheckPermission("reader", kPermRead | kPermWrite | kPermAlloc).ok());
  EXPECT_FALSE(g->CheckPermission("reader", kPermAdmin).ok());
}

TEST_F(MemoryGroupTest, NonAdminCannotAddMembers) {
  ExchangeService svc(sim_.get());
  ASSERT_TRUE(
      Submit(svc, 3, CreateGroupRequest{"pool", 1 << 16, "owner"}).ok());
  ASSERT_TRUE(
      Submit(svc, 3,
             AddGroupRequest{"pool", "worker", kPermAll & ~kPermAdmin, "owner"})
          .ok());
  // The default "deployer" is not the creator here, so not an admin.
  Status s = Submit(svc, 3, AddGroupRequest{"pool", "x", kPermRead});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'pool'"), HasSubstr("device 3"),
                                 HasSubstr("'deployer'"), HasSubstr("admin"),
                                 HasSubstr("AddGroup event on device 3")));
  // A member without admin cannot add either.
  s = Submit(svc, 3, AddGroupRequest{"pool", "x", kPermRead, "worker"});
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("'worker'"), HasSubstr("needs admin"),
                    HasSubstr("has read|write|alloc")));
  // Nothing was granted to "x".
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(3, "pool", "worker", 64, &m).ok());
  EXPECT_EQ(m->group()->CheckPermission("x", kPermRead).code(),
            StatusCode::kPermissionDenied);
  // Once admin, the worker can add members.
  ASSERT_TRUE(
      Submit(svc, 3, AddGroupRequest{"pool", "worker", kPermAdmin, "owner"})
          .ok());
  EXPECT_TRUE(
      Submit(svc, 3, AddGroupRequest{"pool", "x", kPermRead, "worker"}).ok());
  EXPECT_TRUE(m->group()->CheckPermission("x", kPermRead).ok());
}

TEST_F(MemoryGroupTest, InvalidPermissionMasksAreRejected) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 4, "pool", 1 << 16);
  for (uint32_t mask : {0u, 16u, 0xFFFFFFFFu}) {
    Status s = Submit(svc, 4, AddGroupRequest{"pool", "m", mask});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << mask;
    EXPECT_THAT(s.message(),
                AllOf(HasSubstr("'pool'"), HasSubstr("device 4"),
                      HasSubstr("'m'"), HasSubstr(std::to_string(mask))));
  }
  MbufPtr m;
  EXPECT_EQ(svc.AllocMbuf(4, "pool", "m", 64, &m).code(),
            StatusCode::kPermissionDenied);
}

// --- Capacity and budget --------------------------------------------------

TEST_F(MemoryGroupTest, CacheLargerThanBudgetIsResourceExhausted) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "small", 8192);
  Status s = Submit(svc, 3, AllocCacheRequest{"small", 16384, 1024});
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'small'"), HasSubstr("device 3"),
                                 HasSubstr("budget"), HasSubstr("16384"),
                                 HasSubstr("8192")));
  EXPECT_EQ(DevStats(*sim_, 3).mem_used_bytes, 0u);  // nothing allocated
  // Caches add up against the budget.
  ASSERT_TRUE(Submit(svc, 3, AllocCacheRequest{"small", 6144, 1024}).ok());
  s = Submit(svc, 3, AllocCacheRequest{"small", 4096, 1024});
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("6144 of 8192"));
  EXPECT_TRUE(Submit(svc, 3, AllocCacheRequest{"small", 2048, 1024}).ok());
  EXPECT_EQ(DevStats(*sim_, 3).mem_used_bytes, 8192u);
  // Malformed caches.
  for (auto [size, max] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, 0}, {1024, 0}, {1024, 2048}}) {
    MakeGroup(svc, 2, "g" + std::to_string(size) + "_" + std::to_string(max),
              1 << 16);
    s = Submit(
        svc, 2,
        AllocCacheRequest{
            "g" + std::to_string(size) + "_" + std::to_string(max), size, max});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  }
}

TEST_F(MemoryGroupTest, DirectAllocationBeyondBudgetIsResourceExhausted) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 5, "direct", 4096);
  MbufPtr m1, m2;
  Status s = svc.AllocMbuf(5, "direct", "deployer", 5000, &m1);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'direct'"), HasSubstr("device 5"),
                                 HasSubstr("budget")));
  ASSERT_TRUE(svc.AllocMbuf(5, "direct", "deployer", 4096, &m1).ok());
  EXPECT_EQ(DevStats(*sim_, 5).mem_used_bytes, 4096u);
  s = svc.AllocMbuf(5, "direct", "deployer", 1, &m2);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr("4096 of 4096"));
  EXPECT_EQ(m2, nullptr);
  // Through the event, the same.
  EventReply reply;
  s = Submit(svc, 5, AllocMbufRequest{"direct", 64}, &reply);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  m1.reset();  // the block goes back to the device
  EXPECT_EQ(DevStats(*sim_, 5).mem_used_bytes, 0u);
  EXPECT_TRUE(svc.AllocMbuf(5, "direct", "deployer", 1, &m2).ok());
}

TEST_F(MemoryGroupTest, ExhaustedCacheIsResourceExhaustedAndRecovers) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 4, "c", 1 << 16, 1024, 256);
  std::vector<MbufPtr> held(4);
  std::set<void*> addrs;
  for (auto& m : held) {
    Status s = svc.AllocMbuf(4, "c", "deployer", 256, &m);
    ASSERT_TRUE(s.ok()) << s.ToString();
    addrs.insert(m->data());
  }
  EXPECT_EQ(addrs.size(), 4u);  // distinct blocks
  MbufPtr extra;
  Status s = svc.AllocMbuf(4, "c", "deployer", 200, &extra);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("'c'"), HasSubstr("device 4"),
                                 HasSubstr("exhausted"), HasSubstr("4 mbufs")));
  EXPECT_EQ(extra, nullptr);
  void* freed = held[2]->data();
  held[2].reset();
  ASSERT_TRUE(svc.AllocMbuf(4, "c", "deployer", 256, &extra).ok());
  EXPECT_EQ(extra->data(), freed);  // the freed block is reused
}

TEST_F(MemoryGroupTest, OversizeBeyondMaxAllocIsInvalidArgumentNamingTheMax) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "c", 1 << 16, 4096, 512);
  MbufPtr m;
  Status s = svc.AllocMbuf(2, "c", "deployer", 513, &m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(),
              AllOf(HasSubstr("'c'"), HasSubstr("device 2"), HasSubstr("513"),
                    HasSubstr("max alloc size 512")));
  EventReply reply;
  s = Submit(svc, 2, AllocMbufRequest{"c", 100000}, &reply);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("AllocMbuf event on device 2"),
                                 HasSubstr("max alloc size 512")));
  // A larger cache lifts the limit.
  ASSERT_TRUE(Submit(svc, 2, AllocCacheRequest{"c", 8192, 2048}).ok());
  EXPECT_TRUE(svc.AllocMbuf(2, "c", "deployer", 513, &m).ok());
  EXPECT_EQ(svc.AllocMbuf(2, "c", "deployer", 2049, &m).code(),
            StatusCode::kInvalidArgument);
}

// --- Reuse ----------------------------------------------------------------

TEST_F(MemoryGroupTest, CacheBlocksAreReusedWithoutDeviceCalls) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 3, "c", 1 << 16, 8192, 1024);
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(3, "c", "deployer", 100, &m).ok());
  void* first = m->data();
  auto group = m->group();
  const GroupStats before = group->Stats();
  const uint64_t used = DevStats(*sim_, 3).mem_used_bytes;
  m.reset();
  sim_->SetCountCalls(true);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(svc.AllocMbuf(3, "c", "deployer", 100, &m).ok());
    EXPECT_EQ(m->data(), first);
    m.reset();
  }
  // Steady-state traffic makes no device allocation at all.
  EXPECT_EQ(sim_->CallCount(rt::Op::kMalloc), 0u);
  EXPECT_EQ(sim_->CallCount(rt::Op::kFree), 0u);
  sim_->SetCountCalls(false);
  const GroupStats after = group->Stats();
  EXPECT_EQ(after.reserved_bytes, before.reserved_bytes);
  EXPECT_EQ(after.in_use_bytes, 0u);
  EXPECT_EQ(after.live_mbufs, 0u);
  EXPECT_EQ(DevStats(*sim_, 3).mem_used_bytes, used);
  EXPECT_EQ(DevStats(*sim_, 3).live_allocations, 1u);
}

TEST_F(MemoryGroupTest, DirectBlocksFreeThenAllocDoesNotGrowReserved) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 5, "d", 1 << 16);
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(5, "d", "deployer", 100, &m).ok());
  auto group = m->group();
  EXPECT_EQ(group->Stats().reserved_bytes, 128u);
  for (int i = 0; i < 20; ++i) {
    m.reset();
    EXPECT_EQ(group->Stats().reserved_bytes, 0u);
    ASSERT_TRUE(svc.AllocMbuf(5, "d", "deployer", 100, &m).ok());
    EXPECT_EQ(group->Stats().reserved_bytes, 128u);
    EXPECT_EQ(DevStats(*sim_, 5).live_allocations, 1u);
    EXPECT_EQ(DevStats(*sim_, 5).mem_used_bytes, 128u);
  }
}

// Note [A Free that fails]: a transient failure is retried; a block that
// cannot be freed twice stays counted and listed, and Destroy frees it.
TEST_F(MemoryGroupTest, FailedFreeOfADirectBlockIsRetriedThenKept) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 5, "d", 1 << 16);
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(5, "d", "deployer", 100, &m).ok());
  auto group = m->group();
  sim_->InjectFault(rt::Op::kFree, 1, Status::Internal("transient"));
  m.reset();
  EXPECT_EQ(DevStats(*sim_, 5).live_allocations, 0u) << "the retry freed it";
  EXPECT_EQ(group->Stats().reserved_bytes, 0u);
  EXPECT_EQ(group->Stats().unfreed_bytes, 0u);

  ASSERT_TRUE(svc.AllocMbuf(5, "d", "deployer", 100, &m).ok());
  sim_->InjectFault(rt::Op::kFree, 1, Status::Internal("stuck"));
  sim_->InjectFault(rt::Op::kFree, 1, Status::Internal("stuck"));
  m.reset();
  EXPECT_EQ(DevStats(*sim_, 5).live_allocations, 1u);
  EXPECT_EQ(group->Stats().unfreed_bytes, 128u);
  EXPECT_EQ(group->Stats().reserved_bytes, 128u) << "still against the budget";
  Status st = svc.DestroyGroup(5, "d");
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(group->Stats().unfreed_bytes, 0u);
  EXPECT_EQ(group->Stats().reserved_bytes, 0u);
  EXPECT_EQ(DevStats(*sim_, 5).live_allocations, 0u);
  EXPECT_EQ(DevStats(*sim_, 5).mem_used_bytes, 0u);
}

TEST_F(MemoryGroupTest, ConcurrentAllocAndReleaseBalance) {
  ExchangeService svc(sim_.get());
  MakeGroup(svc, 2, "c", 1 << 20, 1 << 18, 4096);
  MakeGroup(svc, 2, "d", 1 << 20);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::string g = t % 2 ? "c" : "d";
      for (int i = 0; i < 200; ++i) {
        MbufPtr m;
        if (!svc.AllocMbuf(2, g, "deployer", 64 + (i % 7) * 300, &m).ok()) {
          ++errors;
        }
      }
      if (rt::GetCurrentContext() != nullptr) ++errors;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  MbufPtr m;
  ASSERT_TRUE(svc.AllocMbuf(2, "c", "deployer", 64, &m).ok());
  EXPECT_EQ(m->group()->Stats().live_mbufs, 1u);
  m.reset();
  ASSERT_TRUE(svc.DestroyGroup(2, "c").ok());
  ASSERT_TRUE(svc.DestroyGroup(2, "d").ok());
  EXPECT_EQ(DevStats(*sim_, 2).mem_used_bytes, 0u);
  EXPECT_EQ(DevStats(*sim_, 2).live_allocations, 0u);
}

}  // namespace
}  // namespace services
}  // namespace hflow
