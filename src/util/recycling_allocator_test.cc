// RecyclingAllocator: freed blocks are listed on the freeing thread and
// handed out again from its list, the list is bounded, a block freed on
// another thread joins that thread's list, and a drained (exiting)
// thread's list is empty and closed. The list counts are what the tests
// look at: the heap itself often hands a just-freed block back, so
// addresses alone would not show whether the list did it. Under ASan and
// TSan the lists are bypassed and only the plain behaviour is checked.
#include "util/recycling_allocator.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace hflow {
namespace util {
namespace {

struct Payload {
  explicit Payload(int v) : value(v) {}
  int value;
  char pad[40];
};

using Alloc = RecyclingAllocator<Payload>;

std::shared_ptr<Payload> Make(int v) {
  return std::allocate_shared<Payload>(Alloc(), v);
}

// The list allocate_shared<Payload> uses (its block holds the count too).
using SharedList = std::allocator_traits<Alloc>::rebind_alloc<
    std::_Sp_counted_ptr_inplace<Payload, Alloc, __gnu_cxx::_S_atomic>>::List;

uint32_t Listed() { return SharedList::count; }

TEST(RecyclingAllocatorTest, ObjectsWork) {
  auto a = Make(1);
  auto b = Make(2);
  EXPECT_EQ(a->value, 1);
  EXPECT_EQ(b->value, 2);
  EXPECT_NE(a.get(), b.get());
}

TEST(RecyclingAllocatorTest, AFreedBlockIsListedAndHandedOutAgain) {
  if (!recycling::kEnabled) GTEST_SKIP() << "lists bypassed under sanitizers";
  auto p = Make(1);
  const Payload* where = p.get();
  const uint32_t listed = Listed();
  p.reset();
  EXPECT_EQ(Listed(), listed + 1);
  auto q = Make(2);
  EXPECT_EQ(Listed(), listed);
  EXPECT_EQ(q.get(), where);  // the list is LIFO
  EXPECT_EQ(q->value, 2);
}

TEST(RecyclingAllocatorTest, TheListIsBounded) {
  if (!recycling::kEnabled) GTEST_SKIP() << "lists bypassed under sanitizers";
  std::vector<std::shared_ptr<Payload>> many;
  for (uint32_t i = 0; i < kRecycledPerThread + 100; ++i) {
    many.push_back(Make(static_cast<int>(i)));
  }
  const size_t depot = SharedList::DepotBatches();
  many.clear();
  // A full list trades batches to the depot (while it has room).
  EXPECT_LE(Listed(), kRecycledPerThread);
  const size_t traded = SharedList::DepotBatches() - depot;
  if (depot + traded < kDepotBatches) {
    EXPECT_EQ(Listed() + traded * kRecycledBatch, kRecycledPerThread + 100);
  }
}

TEST(RecyclingAllocatorTest, BlocksFreedElsewhereComeBackThroughTheDepot) {
  if (!recycling::kEnabled) GTEST_SKIP() << "lists bypassed under sanitizers";
  // Made here, freed on another thread until its list trades batches.
  std::vector<std::shared_ptr<Payload>> many;
  for (uint32_t i = 0; i < 2 * kRecycledPerThread; ++i) {
    many.push_back(Make(static_cast<int>(i)));
  }
  size_t depot_after_free = 0;
  std::thread freer([&] {
    many.clear();
    depot_after_free = SharedList::DepotBatches();
  });
  freer.join();
  ASSERT_GT(depot_after_free, 0u);
  uint32_t listed_after_make = 0;
  std::thread maker([&] {  // a fresh thread: its list starts empty
    auto p = Make(1);
    listed_after_make = Listed();
  });
  maker.join();
  EXPECT_EQ(listed_after_make, kRecycledBatch - 1) << "a batch came in";
}

TEST(RecyclingAllocatorTest, ABlockFreedOnAnotherThreadJoinsThatThreadsList) {
  if (!recycling::kEnabled) GTEST_SKIP() << "lists bypassed under sanitizers";
  auto p = Make(7);
  const Payload* where = p.get();
  const uint32_t mine = Listed();
  uint32_t theirs_after_free = 0, theirs_after_make = 0;
  const Payload* reused = nullptr;
  std::thread other([&] {
    p.reset();
    theirs_after_free = Listed();
    auto again = Make(8);
    theirs_after_make = Listed();
    reused = again.get();
  });
  other.join();
  EXPECT_EQ(theirs_after_free, 1u);
  EXPECT_EQ(theirs_after_make, 0u);
  EXPECT_EQ(reused, where);
  EXPECT_EQ(Listed(), mine);  // this thread's list never saw it
}

TEST(RecyclingAllocatorTest, ADrainedListIsEmptyAndClosed) {
  if (!recycling::kEnabled) GTEST_SKIP() << "lists bypassed under sanitizers";
  uint32_t before_drain = 0, after_drain = 0, after_free = 0;
  std::thread t([&] {  // a thread of its own: draining closes its list
    std::vector<std::shared_ptr<Payload>> some;
    for (int i = 0; i < 10; ++i) some.push_back(Make(i));
    some.clear();
    before_drain = Listed();
    SharedList::Drain();  // what its exit does
    after_drain = Listed();
    Make(1).reset();  // freed after the drain: to the heap
    after_free = Listed();
  });
  t.join();
  EXPECT_GE(before_drain, 10u);  // more if its first block came from the depot
  EXPECT_EQ(after_drain, 0u);
  EXPECT_EQ(after_free, 0u);
}

TEST(RecyclingAllocatorTest, AnOversizedArrayIsRefused) {
  Alloc a;
  EXPECT_THROW(a.allocate(static_cast<size_t>(-1) / sizeof(Payload) + 1),
               std::bad_array_new_length);
}

using Dims = std::vector<int64_t, RecyclingArrayAllocator<int64_t, 8>>;
using DimsList = RecyclingArrayAllocator<int64_t, 8>::List;

TEST(RecyclingArrayAllocatorTest, SmallArraysOfAnySizeShareOneList) {
  Dims a{1, 2, 3};
  EXPECT_EQ(a, (Dims{1, 2, 3}));
  if (!recycling::kEnabled) GTEST_SKIP() << "lists bypassed under sanitizers";
  const int64_t* where = a.data();
  const uint32_t listed = DimsList::count;
  a = Dims();  // frees the three dims' block
  EXPECT_EQ(DimsList::count, listed + 1);
  Dims b(7, 5);  // seven dims: the same block serves them
  EXPECT_EQ(DimsList::count, listed);
  EXPECT_EQ(b.data(), where);
  EXPECT_EQ(b[6], 5);
}

TEST(RecyclingArrayAllocatorTest, LargeArraysGoToTheHeap) {
  if (!recycling::kEnabled) GTEST_SKIP() << "lists bypassed under sanitizers";
  const uint32_t listed = DimsList::count;
  { Dims big(9, 1); }
  EXPECT_EQ(DimsList::count, listed);
}

TEST(RecyclingArrayAllocatorTest, AnOversizedArrayIsRefused) {
  RecyclingArrayAllocator<int64_t, 8> a;
  EXPECT_THROW(a.allocate(static_cast<size_t>(-1) / sizeof(int64_t) + 1),
               std::bad_array_new_length);
}

}  // namespace
}  // namespace util
}  // namespace hflow
