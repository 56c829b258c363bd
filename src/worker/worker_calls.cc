// WorkerProcess's calls (see worker_process.h): one request and its reply
// (Call), a batch of them (CallEach, Note [Replies before the death]),
// requests without a reply (Send), and the replies read from the rings:
// the segment's (DrainRing, the supervisor's) and a slot's own
// (AwaitOnRing, its caller's; Note [A caller reads its own replies]).
//
// Thread-safety: see worker_process.h. A call registers its slot under
// mu_; whichever thread reads its reply (the caller from its slot's ring,
// else the supervisor) fills it (OnMessage) and wakes the caller.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "worker/worker_process.h"

namespace hflow {
namespace worker {

WorkerProcess::WorkerProcess(WorkerSpec spec)
    : spec_(std::move(spec)), what_(spec_.what), prefix_(spec_.prefix) {
  if (spec_.segment && spec_.ring_bytes != 0 &&
      ControlBytes(spec_.ring_bytes) <= spec_.segment->bytes()) {
    ring_ = std::make_unique<ShmRing>(spec_.segment->base() + kCallPageBytes,
                                      spec_.ring_bytes);
  }
}

namespace {
std::atomic<uint64_t> g_ring_replies{0};
std::atomic<uint64_t> g_ring_overflows{0};
std::atomic<uint64_t> g_caller_replies{0};
std::atomic<uint64_t> g_guard_expiries{0};
std::atomic<uint64_t> g_caller_waits{0};
}  // namespace

uint64_t CallerRingWaits() {
  return g_caller_waits.load(std::memory_order_relaxed);
}

uint64_t CallerRepliesRead() {
  return g_caller_replies.load(std::memory_order_relaxed);
}

uint64_t RingGuardExpiries() {
  return g_guard_expiries.load(std::memory_order_relaxed);
}

uint64_t RingRepliesRead() {
  return g_ring_replies.load(std::memory_order_relaxed);
}

uint64_t RingOverflows() {
  return g_ring_overflows.load(std::memory_order_relaxed);
}

// Note [Replies in the segment]: see worker_server.cc.
void WorkerProcess::DrainRing(std::chrono::steady_clock::time_point* heard) {
  if (DrainReplies(ring_.get()) > 0) *heard = std::chrono::steady_clock::now();
}

size_t WorkerProcess::DrainReplies(ShmRing* ring) {
  std::string bytes;
  Status bad;
  size_t n = 0;
  while (ring->Pop(&bytes, &bad)) {
    ++n;
    g_ring_replies.fetch_add(1, std::memory_order_relaxed);
    v1::WorkerMessage msg;
    if (!msg.ParseFromString(bytes)) {
      bad = Status::Internal("worker reply ring: a record that is no reply");
      break;
    }
    OnMessage(std::move(msg));
  }
  if (bad.ok()) return n;
  // What the worker wrote can no longer be trusted: it ends, and its
  // death is reported as any other.
  const std::string line =
      "hflow: " + What() + ": " + bad.ToString() + "; the worker is killed\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
  Signal(SIGKILL);
  return n;
}

// Note [A caller reads its own replies]
// With the segment's reply ring (Note [Replies in the segment] in
// worker_server.cc) a reply still passes the host's supervisor thread,
// which reads it and wakes the caller: two wake-ups a batch on the host.
// A slot's Proc calls read their replies themselves instead, from a
// reply ring of the slot's own (in the block that holds its request
// ring), waiting on its futex while it is empty: the worker's slot
// thread puts each reply there and rings the caller only when it is
// parked, so a batch costs the caller one wake-up and the supervisor
// none; a batch's requests but the last are marked quiet, so the caller
// is rung once a batch, by its last reply (or when the ring is full).
// What else ends a wait rings the same futex: a reply that came
// the supervisor's way after all (larger than the ring: through the
// segment's ring or the socket), and the socket's end. After the end the caller
// reads the ring once more, so every reply the worker put there before it died
// is handed out (for a batch before the death is reported: Note [Replies before
// the death]); a caller that stops waiting (a timeout) leaves the worker
// killed, so no reply waits for room in a ring nobody reads. The wait is
// bounded (a second) as a guard, not as a way to notice anything, but for a
// batch whose later request could not be sent at all (too large), whose quiet
// replies ring nobody.
void WorkerProcess::AwaitOnRing(const SlotRings& rings,
                                std::unique_lock<std::mutex>* l,
                                const std::function<bool()>& done,
                                std::chrono::steady_clock::time_point deadline,
                                int max_wait_ms) {
  ShmRing* ring = rings.replies;
  for (;;) {
    const bool end = closed_;
    l->unlock();
    {
      std::lock_guard<std::mutex> reading(*rings.reading);
      g_caller_replies.fetch_add(DrainReplies(ring), std::memory_order_relaxed);
    }
    l->lock();
    if (end || (done() && !closed_)) return;
    if (closed_) continue;  // one last reading first
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return;
    ring->Park();  // then look again: a reply or the end rings it
    const bool sleep = !done() && !closed_ && ring->Empty();
    l->unlock();
    if (sleep) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now)
              .count();
      const int64_t wait = std::min<int64_t>(left + 1, max_wait_ms);
      g_caller_waits.fetch_add(1, std::memory_order_relaxed);
      if (!ring->Wait(int(wait)) && wait == max_wait_ms &&
          max_wait_ms >= 1000) {
        g_guard_expiries.fetch_add(1, std::memory_order_relaxed);
      }
    }
    ring->Unpark();
    l->lock();
  }
}

void WorkerProcess::WakeReader(ShmRing* ring) {
  if (ring != nullptr && ring->TakeParked()) ring->Wake();
}

Status WorkerProcess::Call(v1::HostMessage* req, v1::WorkerMessage* reply,
                           int timeout_ms, const std::string& doing,
                           int pass_fd, bool* delivered,
                           const SlotRings* rings) {
  if (delivered != nullptr) *delivered = false;
  ShmRing* via = rings != nullptr ? rings->requests : nullptr;
  const bool read_ring = via != nullptr && rings->replies != nullptr;
  Slot slot;
  if (read_ring) slot.ring = rings->replies;
  const uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
  req->set_id(id);
  {
    std::lock_guard<std::mutex> l(mu_);
    if (dead_.load(std::memory_order_acquire)) {
      return death_.WithContext(doing + ": ");
    }
    calls_[id] = &slot;
  }
  std::vector<uint64_t> ends;
  const bool pushed = pass_fd < 0 && PushAll(req, 1, via, false, &ends) == 1;
  Status sent = pushed ? Status::OK() : channel_.Send(*req, pass_fd);
  if (delivered != nullptr) *delivered = sent.ok();
  if (sent.code() == StatusCode::kInvalidArgument) {  // too large: not sent
    std::lock_guard<std::mutex> l(mu_);
    calls_.erase(id);
    return sent.WithContext(doing + ": ");
  }
  std::unique_lock<std::mutex> l(mu_);
  auto ready = [&] {
    return slot.done || dead_.load(std::memory_order_acquire);
  };
  if (!sent.ok()) {
    // Its death is on the way: the send failed because the peer is gone.
    cv_.wait_for(l, std::chrono::seconds(2), ready);
  } else if (read_ring) {
    const auto deadline = timeout_ms < 0
                              ? std::chrono::steady_clock::time_point::max()
                              : std::chrono::steady_clock::now() +
                                    std::chrono::milliseconds(timeout_ms);
    AwaitOnRing(
        *rings, &l, [&] { return slot.done; }, deadline);
    // After the end, the death's report (on_death first) before the call
    // fails.
    if (!slot.done && closed_) {
      if (timeout_ms < 0) {
        cv_.wait(l, ready);
      } else {
        cv_.wait_until(l, deadline, ready);
      }
    }
  } else if (timeout_ms < 0) {
    cv_.wait(l, ready);
  } else {
    cv_.wait_for(l, std::chrono::milliseconds(timeout_ms), ready);
  }
  calls_.erase(id);
  if (slot.done) {
    *reply = std::move(slot.reply);
    return Status::OK();
  }
  if (dead_.load(std::memory_order_acquire)) {
    // Never taken from the ring: the worker never saw it.
    if (pushed && delivered != nullptr && via->tail() < ends[0]) {
      *delivered = false;
    }
    return death_.WithContext(doing + ": ");
  }
  l.unlock();
  if (!sent.ok()) return sent.WithContext(doing + ": ");
  Kill();
  return Status::Timeout(doing + ": the worker process (pid " +
                         std::to_string(pid()) + ") of " + What() +
                         " did not answer within " +
                         std::to_string(timeout_ms) + " ms; it was killed");
}

// Note [Replies before the death]
// A batch's replies are handed out on the caller's thread once all are in
// (one wake-up a batch, not one a reply): a worker that answers calls 1
// and 2 and dies in 3 has its socket's end seen before the caller has
// passed on 1's and 2's outputs. Its death, reported then, would fail the
// graph (close its queues) under outputs the worker had delivered, which
// calls made one at a time never lose. So the end of the socket is marked
// first (closed_: no reply comes any more; it wakes the callers), and
// Reap waits, bounded, until every caller of CallEach has handed out the
// replies it got (draining_); only then is the death reported and
// marked, and the calls left unanswered fail with it.
void WorkerProcess::CallEach(std::vector<v1::HostMessage>* reqs,
                             const std::string& doing, const EachReply& each,
                             const std::function<void(size_t)>* answered,
                             const SlotRings* rings) {
  ShmRing* via = rings != nullptr ? rings->requests : nullptr;
  ShmRing* replies = via != nullptr ? rings->replies : nullptr;
  const size_t n = reqs->size();
  std::vector<Slot> slots(n);
  size_t left = n;  // under mu_
  std::condition_variable wake;
  std::unique_lock<std::mutex> l(mu_);
  if (dead_.load(std::memory_order_acquire)) {
    const Status why = death_.WithContext(doing + ": ");
    l.unlock();
    for (size_t i = 0; i < n; ++i) each(i, why, false, nullptr);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    (*reqs)[i].set_id(next_id_.fetch_add(1, std::memory_order_relaxed));
    slots[i].left = &left;
    slots[i].wake = &wake;
    slots[i].answered = answered;
    slots[i].index = i;
    slots[i].ring = replies;
    calls_[(*reqs)[i].id()] = &slots[i];
  }
  ++draining_;
  l.unlock();
  // Registered first: a reply may come before the last send.
  std::vector<Status> unsent(n);
  Status gone;  // a send that found the peer gone: the rest stay unsent
  std::vector<uint64_t> ends;  // of those in the ring
  const size_t pushed =
      PushAll(reqs->data(), n, via, replies != nullptr, &ends);
  if (pushed < n && !SendAsOne(reqs, pushed, &gone)) {
    for (size_t i = pushed; i < n; ++i) {
      Status sent = gone.ok() ? channel_.Send((*reqs)[i]) : gone;
      if (sent.ok()) continue;
      unsent[i] = sent;
      if (sent.code() != StatusCode::kInvalidArgument) gone = sent;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!gone.ok() && unsent[i].ok()) unsent[i] = gone;
    if (!unsent[i].ok()) unsent[i] = unsent[i].WithContext(doing + ": ");
  }
  l.lock();
  for (size_t i = 0; i < n; ++i) {
    if (unsent[i].ok()) continue;
    calls_.erase((*reqs)[i].id());
    --left;
  }
  // One wake-up for the batch: its last reply, or the socket's end. A
  // send that found the peer gone has its end on the way; bounded anyway.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto ready = [&] { return left == 0 || closed_; };
  if (replies != nullptr) {
    // A request that could not go (too large) after quiet ones leaves
    // their replies unrung: look every millisecond then.
    bool unrung = false;
    for (size_t i = pushed; i < n; ++i) unrung = unrung || !unsent[i].ok();
    AwaitOnRing(
        *rings, &l, [&] { return left == 0; },
        gone.ok() ? std::chrono::steady_clock::time_point::max() : deadline,
        unrung && pushed > 0 ? 1 : 1000);
  } else if (gone.ok()) {
    wake.wait(l, ready);
  } else {
    wake.wait_until(l, deadline, ready);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!slots[i].done) calls_.erase((*reqs)[i].id());
  }
  l.unlock();
  // Handed out in order up to the first without a reply (a slot's
  // replies come in order: none after it).
  size_t i = 0;
  for (; i < n && (slots[i].done || !unsent[i].ok()); ++i) {
    if (slots[i].done) {
      each(i, Status::OK(), true, &slots[i].reply);
    } else {
      each(i, unsent[i], false, nullptr);
    }
  }
  l.lock();
  --draining_;  // Note [Replies before the death]
  cv_.notify_all();
  if (i == n) return;
  cv_.wait_until(l, deadline + std::chrono::seconds(2),
                 [&] { return dead_.load(std::memory_order_acquire); });
  const Status why = dead_.load(std::memory_order_acquire)
                         ? death_.WithContext(doing + ": ")
                         : gone.WithContext(doing + ": ");
  l.unlock();
  for (; i < n; ++i) {
    // One the worker never took from the ring was never seen.
    const bool taken = i >= pushed || via->tail() >= ends[i];
    each(i, unsent[i].ok() ? why : unsent[i], unsent[i].ok() && taken, nullptr);
  }
}

size_t WorkerProcess::PushAll(v1::HostMessage* reqs, size_t n, ShmRing* via,
                              bool quiet, std::vector<uint64_t>* ends) {
  if (via == nullptr) return 0;
  std::string bytes;
  size_t k = 0;
  for (; k < n; ++k) {
    uint64_t end = 0;
    v1::HostMessage& req = reqs[k];
    // Proc.quiet: a later request of the batch rings the caller; those on
    // the socket never are (one may fail to go).
    const bool mark = quiet && k + 1 < n && req.has_proc();
    if (mark) req.mutable_proc()->set_quiet(true);
    req.SerializeToString(&bytes);
    if (!via->TryPush(bytes.data(), bytes.size(), &end)) {
      if (mark) req.mutable_proc()->set_quiet(false);
      break;
    }
    ends->push_back(end);
  }
  if (k > 0 && via->TakeParked()) via->Wake();
  g_ring_overflows.fetch_add(n - k, std::memory_order_relaxed);
  return k;
}

// One datagram (v1::Batch) instead of one a request: the worker's
// reader wakes once for the batch. False when it is too large for the
// socket (send them one by one); `*gone` when the peer is.
bool WorkerProcess::SendAsOne(std::vector<v1::HostMessage>* reqs, size_t from,
                              Status* gone) {
  if (reqs->size() - from < 2) return false;
  v1::HostMessage batch;
  auto* msgs = batch.mutable_batch()->mutable_msgs();
  for (size_t i = from; i < reqs->size(); ++i) {
    *msgs->Add() = std::move((*reqs)[i]);
  }
  Status sent = channel_.Send(batch);
  for (size_t i = from; i < reqs->size(); ++i) {
    (*reqs)[i] = std::move(*msgs->Mutable(int(i - from)));
  }
  if (sent.code() == StatusCode::kInvalidArgument) return false;
  *gone = sent;
  return true;
}

void WorkerProcess::Send(const v1::HostMessage& msg) {
  if (dead_.load(std::memory_order_acquire)) return;
  (void)channel_.Send(msg);
}

}  // namespace worker
}  // namespace hflow
