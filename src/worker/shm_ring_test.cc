// ShmRing: records come out whole and in order across wrap-arounds and
// threads, a full ring refuses rather than overwrites, the parking
// handshake rings exactly once per park, a record overwritten in memory
// ends the reading with an error, and what a process pushed before it
// died is read by the other afterwards.
//
// Thread-safety: each test owns its ring; the threaded test has one
// producer and one consumer thread.
#include "worker/shm_ring.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hflow {
namespace worker {
namespace {

// Shared anonymous memory: a fork's writes are the parent's to read.
class SharedMemory {
 public:
  explicit SharedMemory(size_t bytes) : bytes_(bytes) {
    p_ = static_cast<char*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  }
  ~SharedMemory() { munmap(p_, bytes_); }
  char* get() const { return p_; }

 private:
  size_t bytes_;
  char* p_;
};

std::string Record(uint64_t i) {
  // 1 to 300 bytes: lengths that cross the end at many offsets.
  return std::string(1 + (i * 37) % 300, char('a' + i % 26)) +
         std::to_string(i);
}

TEST(ShmRingTest, RecordsComeOutWholeAndInOrderAcrossWraps) {
  SharedMemory mem(4096);
  ShmRing ring(mem.get(), 1024);
  Status bad;
  std::string out;
  uint64_t pushed = 0;
  uint64_t popped = 0;
  while (popped < 500) {
    while (pushed < 500 &&
           ring.TryPush(Record(pushed).data(), Record(pushed).size())) {
      ++pushed;
    }
    ASSERT_TRUE(ring.Pop(&out, &bad)) << bad.ToString();
    EXPECT_EQ(out, Record(popped));
    ++popped;
  }
  EXPECT_FALSE(ring.Pop(&out, &bad));
  EXPECT_TRUE(bad.ok());
  EXPECT_TRUE(ring.Empty());
}

TEST(ShmRingTest, AFullRingRefusesAndTakesAgainOnceRead) {
  SharedMemory mem(4096);
  ShmRing ring(mem.get(), 256);
  const std::string rec(60, 'x');  // 64 bytes with its length
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(ring.TryPush(rec.data(), rec.size()));
  EXPECT_FALSE(ring.TryPush(rec.data(), rec.size()));
  const std::string big(253, 'y');  // larger than the ring
  EXPECT_FALSE(ring.TryPush(big.data(), big.size()));
  std::string out;
  Status bad;
  ASSERT_TRUE(ring.Pop(&out, &bad));
  EXPECT_TRUE(ring.TryPush(rec.data(), rec.size()));
}

TEST(ShmRingTest, AParkedConsumerIsRungOncePerPark) {
  SharedMemory mem(4096);
  ShmRing ring(mem.get(), 256);
  EXPECT_FALSE(ring.TakeParked());  // not parked: no doorbell
  ring.Park();
  ASSERT_TRUE(ring.TryPush("a", 1));
  EXPECT_TRUE(ring.TakeParked());
  ASSERT_TRUE(ring.TryPush("b", 1));
  EXPECT_FALSE(ring.TakeParked());  // rung already
  ring.Park();
  ring.Unpark();  // woken for something else: busy again
  ASSERT_TRUE(ring.TryPush("c", 1));
  EXPECT_FALSE(ring.TakeParked());
}

// The consumer parks only when the ring is empty, and a producer that
// finds it parked wakes it: no record is left unread while it sleeps.
TEST(ShmRingTest, ThreadsHandOverEveryRecordWithoutALostWakeUp) {
  SharedMemory mem(1 << 16);
  ShmRing ring(mem.get(), 4096);
  constexpr uint64_t kRecords = 200000;
  // The doorbell: a count under a mutex.
  std::mutex mu;
  std::condition_variable cv;
  int bell = 0;
  std::thread producer([&] {
    for (uint64_t i = 0; i < kRecords; ++i) {
      while (!ring.TryPush(&i, sizeof(i))) std::this_thread::yield();
      if (ring.TakeParked()) {
        std::lock_guard<std::mutex> l(mu);
        ++bell;
        cv.notify_one();
      }
    }
  });
  std::string out;
  Status bad;
  uint64_t next = 0;
  while (next < kRecords) {
    while (ring.Pop(&out, &bad)) {
      uint64_t v = 0;
      std::memcpy(&v, out.data(), sizeof(v));
      ASSERT_EQ(v, next);
      ++next;
    }
    std::unique_lock<std::mutex> l(mu);
    const int seen = bell;
    l.unlock();
    ring.Park();
    if (!ring.Empty()) {
      ring.Unpark();
      continue;
    }
    if (next < kRecords) {  // only a doorbell wakes it
      l.lock();
      ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(10),
                              [&] { return bell != seen; }))
          << "a record pushed with nobody rung: " << next;
      l.unlock();
    }
    ring.Unpark();
  }
  producer.join();
  EXPECT_TRUE(bad.ok());
}

TEST(ShmRingTest, AnOverwrittenRecordEndsTheReading) {
  SharedMemory mem(4096);
  ShmRing ring(mem.get(), 256);
  ASSERT_TRUE(ring.TryPush("hello", 5));
  const uint32_t huge = 1u << 30;
  std::memcpy(mem.get() + ShmRing::kHeaderBytes, &huge, sizeof(huge));
  std::string out;
  Status bad;
  EXPECT_FALSE(ring.Pop(&out, &bad));
  EXPECT_NE(bad.message().find("overwritten"), std::string::npos)
      << bad.ToString();
  ASSERT_TRUE(ring.TryPush("again", 5));
  Status quiet;
  EXPECT_FALSE(ring.Pop(&out, &quiet)) << "read on after a bad record";
}

TEST(ShmRingTest, WhatADeadProducerPushedIsRead) {
  SharedMemory mem(1 << 16);
  ShmRing ring(mem.get(), 4096);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ShmRing child(mem.get(), 4096);
    for (uint64_t i = 0; i < 10; ++i) (void)child.TryPush(&i, sizeof(i));
    raise(SIGKILL);  // gone with nothing said
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  std::string out;
  Status bad;
  for (uint64_t i = 0; i < 10; ++i) {
    ASSERT_TRUE(ring.Pop(&out, &bad)) << i << ": " << bad.ToString();
    uint64_t v = 0;
    std::memcpy(&v, out.data(), sizeof(v));
    EXPECT_EQ(v, i);
  }
  EXPECT_FALSE(ring.Pop(&out, &bad));
}

}  // namespace
}  // namespace worker
}  // namespace hflow
