// ExecPool: a fixed set of named threads that run ready work items, one
// item on one thread at a time. An item is scheduled whenever it may have
// work (an input arrived, an output queue drained); scheduling an item that
// is queued or running only makes sure it runs once more, so no wake-up is
// lost and none is duplicated. Threads yield a few times before parking
// (taking new work then costs no wake-up); a parked thread is woken for any
// new work, also work scheduled from inside a run, which may be long or
// blocked (Note [Executor design] in graph_runner.cc).
//
// Stop waits a bounded time: a thread still inside Item::Run at the
// deadline (a UDF that never returns) is detached, never joined, and the
// pool must then outlive it (Note [Abandoning a stuck graph] in
// graph_runner.cc).
//
// Thread-safety: Schedule may be called from any thread, also from inside
// Item::Run; Stop from the owner only, after which Schedule is a no-op.
#ifndef HFLOW_EXEC_EXEC_POOL_H_
#define HFLOW_EXEC_EXEC_POOL_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "util/ring_deque.h"

namespace hflow {
namespace exec {

class ExecPool {
 public:
  class Item {
   public:
    virtual ~Item() = default;
    // Does a bounded amount of work. Returns true when work is left (the
    // item is queued again, behind the others).
    virtual bool Run() = 0;

   private:
    friend class ExecPool;
    std::atomic<int> state_{0};  // ExecPool::State
  };

  // `threads` >= 1; threads are named "<prefix><i>".
  ExecPool(std::string prefix, int threads);
  ~ExecPool();
  ExecPool(const ExecPool&) = delete;
  ExecPool& operator=(const ExecPool&) = delete;

  void Schedule(Item* item);
  // Direct hand-off (Note [Hand-off] in exec_pool.cc), from inside
  // Item::Run on a pool thread. TryClaim marks an idle item running, for
  // the caller alone (false if it is queued or running, or this thread
  // already holds a hand-off). HandOff(claimed) makes it the item this
  // thread runs next, after the current run, unless an idle thread steals
  // it first; with a thread parked it is queued at once instead. Returns
  // whether this thread holds it.
  bool TryClaim(Item* item);
  bool HandOff(Item* claimed);
  // Gives up a claim that was not handed off.
  void Release(Item* claimed);
  // Lets running items finish, drops queued ones and joins the threads,
  // waiting at most `timeout_ms` (-1: forever) for them. Returns false when
  // some thread did not finish in time: it is detached, and the pool must
  // not be destroyed (its owner keeps it for the rest of the process).
  // `on_late`, when given, runs once the timeout has passed with threads
  // still busy, to end their calls by force (Instance::Cancel); they then
  // get kLateGraceMs more.
  bool Stop(int32_t timeout_ms = -1,
            const std::function<void()>& on_late = nullptr);
  static constexpr int32_t kLateGraceMs = 2000;
  // Whether a Stop gave up on a thread.
  bool abandoned() const { return abandoned_; }

  int threads() const { return static_cast<int>(threads_.size()); }

 private:
  enum State { kIdle = 0, kQueued = 1, kRunning = 2, kRerun = 3 };
  // A thread's hand-off slot: filled by its owner, emptied by the owner or
  // a thief with exchange. Padded: each owner writes its own often.
  struct alignas(64) Slot {
    std::atomic<Item*> item{nullptr};
  };
  void Push(Item* item);
  Item* Pop(int index);
  Item* Steal(int index);
  // After `item` ran: idle, or queued again when it has work or was
  // scheduled meanwhile.
  void Settle(Item* item, bool more);
  void Loop(int index);

  const std::string prefix_;
  std::mutex mu_;
  std::condition_variable cv_;
  util::RingDeque<Item*> ready_;  // a ring: no allocation per item
  // ready_.size() and stop_, mirrored for threads yielding in Pop: they
  // look for work without taking mu_ from the threads scheduling it.
  std::atomic<size_t> ready_count_{0};
  std::atomic<bool> stop_{false};
  std::atomic<int> parked_{0};  // waiting on cv_ (changed under mu_)
  int searching_ = 0;           // yielding in Pop before parking
  // One per thread; the count is fixed before any thread starts (threads_
  // grows while the first threads already look for work).
  const int num_slots_;
  std::unique_ptr<Slot[]> slots_;
  std::vector<std::thread> threads_;
  // Threads that left Loop (under mu_), for a bounded Stop.
  std::condition_variable exit_cv_;
  std::vector<bool> exited_;
  bool abandoned_ = false;
};

}  // namespace exec
}  // namespace hflow

#endif  // HFLOW_EXEC_EXEC_POOL_H_
