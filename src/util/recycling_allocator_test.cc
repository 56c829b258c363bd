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
  many.clear();
  EXPECT_EQ(Listed(), kRecycledPerThread);
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
  EXPECT_EQ(before_drain, 10u);
  EXPECT_EQ(after_drain, 0u);
  EXPECT_EQ(after_free, 0u);
}

TEST(RecyclingAllocatorTest, AnOversizedArrayIsRefused) {
  Alloc a;
  EXPECT_THROW(a.allocate(static_cast<size_t>(-1) / sizeof(Payload) + 1),
               std::bad_array_new_length);
}

}  // namespace
}  // namespace util
}  // namespace hflow
