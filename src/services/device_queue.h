// DeviceQueue: a bounded FIFO of mbufs living on one device (GE's device
// queues). Enqueue/Dequeue take a timeout in ms: 0 = try once, -1 = wait
// forever, >0 = wait at most that long (kTimeout after). Waiters sleep on
// condition variables and are woken on the transitions that matter
// (empty -> not empty for consumers, full -> not full for producers), never
// by polling. Closing the queue (destroy, device loss) wakes every waiter
// with the reason.
//
// An OVERWRITE queue (GE's enqueue policy "OVERWRITE") never makes a
// producer wait: an enqueue into a full one drops the oldest message
// (its mbuf is released, counted by dropped()) and appends the new one;
// PushOverDepth keeps its depth the same way and WaitForRoom returns at
// once. FIFO queues (the default) work as described above.
//
// Executors that must never block (a pool thread waiting on a full queue
// could starve the very consumer it waits for) push with PushOverDepth and
// keep the bound themselves: listeners tell them when a queue gains an item
// and when it drops below its depth (exec/graph_runner.h).
//
// Thread-safety: all methods are thread-safe; any number of producers and
// consumers. Listeners run on the thread that caused the transition, after
// it released the queue's lock (a listener that schedules work must not
// hold up the queue's other side); SetListeners waits for listener calls in
// flight, so once it returns the old listeners never run again. Listeners
// must be short and must not call SetListeners.
#ifndef HFLOW_SERVICES_DEVICE_QUEUE_H_
#define HFLOW_SERVICES_DEVICE_QUEUE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "services/mbuf.h"
#include "util/mutex.h"
#include "util/ring_deque.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace services {

enum class QueuePolicy { kFifo, kOverwrite };

class DeviceQueue {
 public:
  DeviceQueue(uint32_t id, int32_t device, uint32_t depth, std::string name,
              QueuePolicy policy = QueuePolicy::kFifo);

  uint32_t id() const { return id_; }
  int32_t device() const { return device_; }
  uint32_t depth() const { return depth_; }
  const std::string& name() const { return name_; }
  // OVERWRITE: never full for a producer (see above).
  bool overwrite() const { return overwrite_; }
  // Messages an OVERWRITE queue dropped to make room (0 for FIFO).
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

  Status Enqueue(MbufPtr mbuf, int32_t timeout_ms);
  Status Dequeue(MbufPtr* out, int32_t timeout_ms);

  // Takes up to `max` queued mbufs (appended to `out`, oldest first) without
  // waiting; returns how many. One lock for the lot: fetchers of small
  // messages take what is ready in one go.
  size_t DequeueUpTo(size_t max, std::vector<MbufPtr>* out);
  // Appends ignoring the depth (the caller bounds the queue by not
  // producing while it is full); wakes a waiting consumer.
  Status PushOverDepth(MbufPtr mbuf);
  // Waits (as Enqueue would) until the queue has room for one more, without
  // adding anything: a producer filling several queues with one transaction
  // checks them all before it fills any. OK, kTimeout or the close reason.
  Status WaitForRoom(int32_t timeout_ms);

  // `on_item` runs after every successful enqueue; `on_space` after a
  // dequeue that takes the queue from full (size >= depth) to not full.
  using Listener = std::function<void()>;
  void SetListeners(Listener on_item, Listener on_space);

  // Puts back an mbuf just dequeued (a consumer that failed to process it)
  // at the front, ignoring the depth for this one slot, so it is not lost.
  Status Return(MbufPtr mbuf);

  // Refuses further operations with `reason` and wakes all waiters. Queued
  // mbufs are dropped (their memory returns to the groups), unless
  // `keep_queued`: then Dequeue, DequeueUpTo and Return go on with what is
  // queued, and only an empty queue answers `reason` (a failed graph's
  // outputs already produced stay fetchable, Note [Failing a graph]).
  // Idempotent: the first close sticks.
  void Close(const Status& reason, bool keep_queued = false);
  // Opens a closed queue again, empty (a graph reset: its executors are
  // stopped and its feeders and fetchers have left; what a kept close left
  // is dropped). No-op when open.
  void Reopen();

  size_t Size() const;
  bool closed() const;

 private:
  std::string Where() const;
  // Enqueue and PushOverDepth of an OVERWRITE queue: append, dropping the
  // oldest message when the queue holds depth_ already; never waits.
  Status PushOverwrite(MbufPtr mbuf);
  // Under mu_: whether `l` may be called once the lock is released (counts
  // the call; EndListener uncounts it).
  bool BeginListener(const Listener& l) REQUIRES(mu_);
  void EndListener(const Listener& l);
  // After taking from the front of items_, which held `before`: updates
  // the size mirror under mu_ and says what to do once it is released
  // (FinishTake: wake parked producers, run on_space if the queue went
  // from full to not full). Two steps, so that the caller's MutexLock
  // releases the lock where the analysis sees it.
  struct TakeWakeups {
    size_t taken = 0;
    bool wake = false;  // producers are parked
    bool call = false;  // run on_space (counted by BeginListener)
  };
  TakeWakeups AfterTakeLocked(size_t before) REQUIRES(mu_);
  void FinishTake(const TakeWakeups& w) EXCLUDES(mu_);
  // Waits on `cv` until `ready` or timeout/close; returns the status.
  // `*parked` counts the threads asleep on `cv` (a member guarded by mu_).
  // `ready` may be evaluated without the lock, so it reads only atomics.
  template <typename Ready>
  Status Wait(util::MutexLock& lock, std::condition_variable& cv, int* parked,
              int32_t timeout_ms, const char* what, Ready ready) REQUIRES(mu_);

  const uint32_t id_;
  const int32_t device_;
  const uint32_t depth_;
  const std::string name_;
  const bool overwrite_;
  std::atomic<uint64_t> dropped_{0};

  mutable util::Mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  // A ring: a queue at a steady depth allocates nothing.
  util::RingDeque<MbufPtr> items_ GUARDED_BY(mu_);
  // Mirrors of items_.size() and the closed flag, written under mu_ and read
  // without it: Size() and waiters that are yielding (Note [Yield before
  // parking]) must not contend for mu_ with the threads doing the work.
  std::atomic<size_t> size_{0};
  std::atomic<bool> is_closed_{false};
  Status closed_ GUARDED_BY(mu_);              // OK while open
  bool keep_queued_ GUARDED_BY(mu_) = false;   // a close that drains
  int waiting_consumers_ GUARDED_BY(mu_) = 0;  // parked on not_empty_
  int waiting_producers_ GUARDED_BY(mu_) = 0;  // parked on not_full_
  // Listeners are written under mu_ but read outside it by calls counted
  // in listener_calls_, which SetListeners drains before replacing them:
  // no GUARDED_BY (the analysis cannot express the drain).
  Listener on_item_;
  Listener on_space_;
  bool listeners_on_ GUARDED_BY(mu_) = false;
  std::atomic<int> listener_calls_{0};
};

}  // namespace services
}  // namespace hflow

#endif  // HFLOW_SERVICES_DEVICE_QUEUE_H_
