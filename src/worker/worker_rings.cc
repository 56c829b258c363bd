// WorkerServer's rings (worker_server.h): the slots' threads and the
// request rings they wait on (Note [Requests in the segment]), and the
// reply ring their Proc replies go into (Note [Replies in the segment]).
//
// Thread-safety: see worker_server.h. A slot's request ring is set and
// cleared by its own thread under the slot's mu, which the main thread
// reads it under to ring it; the reply ring's producers serialise on
// ring_mu_.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <utility>

#include "util/thread_name.h"
#include "worker/worker_server.h"

namespace hflow {
namespace worker {

// Note [Requests in the segment]
// A Proc on the socket wakes the worker's reader, which hands it to the
// slot's thread: two wake-ups and a read before the UDF runs. The host
// writes its Procs for a slot into a ring of the slot's own instead (a
// block of the host's part it lends for the slot's life, Load's
// request_ring_*), and the slot's thread waits on that ring (a futex in
// the segment) when it has nothing to do, so a batch costs one wake-up,
// none while the thread is busy. What the ring cannot take goes on the
// socket after it, and the thread takes the ring's first. A Proc the
// worker never took before it died is known to the host by the ring's
// tail, so it runs again in a new worker instead of counting as lost.
Status WorkerServer::OpenRequests(Slot* slot, const v1::Load& load) {
  const uint64_t at = load.request_ring_offset();
  const uint64_t bytes = load.request_ring_bytes();
  if (bytes == 0) return Status::OK();
  HFLOW_RETURN_IF_ERROR(CheckRing("request", at, bytes));
  const uint64_t reply_at = load.slot_reply_ring_offset();
  const uint64_t reply_bytes = load.slot_reply_ring_bytes();
  if (reply_bytes != 0) {
    HFLOW_RETURN_IF_ERROR(CheckRing("reply", reply_at, reply_bytes));
    if (reply_at < at + ShmRing::kHeaderBytes + bytes &&
        at < reply_at + ShmRing::kHeaderBytes + reply_bytes) {
      return Status::InvalidArgument(
          "worker: a slot's reply ring over its request ring");
    }
  }
  std::lock_guard<std::mutex> l(slot->mu);
  slot->requests = std::make_unique<ShmRing>(segment_->base() + at, bytes);
  if (reply_bytes != 0) {
    slot->replies =
        std::make_unique<ShmRing>(segment_->base() + reply_at, reply_bytes);
  }
  return Status::OK();
}

// A ring the host lends a slot: a power of two, 64-aligned, in its part.
Status WorkerServer::CheckRing(const char* what, uint64_t at,
                               uint64_t bytes) const {
  if (bytes < 64 || (bytes & (bytes - 1)) != 0 || at % 64 != 0 ||
      at < kCallPageBytes || at > host_bytes_ ||
      host_bytes_ - at < ShmRing::kHeaderBytes + bytes) {
    return Status::InvalidArgument(
        std::string("worker: a ") + what + " ring of " + std::to_string(bytes) +
        " bytes at " + std::to_string(at) +
        " (a power of two, 64-aligned, in the host's part)");
  }
  return Status::OK();
}

// The slot thread waits on its condition variable, or, once it has a
// request ring, on the ring (Note [Requests in the segment]): both are
// rung.
void WorkerServer::Post(Slot* slot, v1::HostMessage m) {
  std::lock_guard<std::mutex> l(slot->mu);
  slot->work.emplace_back(std::move(m), -1);
  slot->cv.notify_one();
  if (slot->requests && slot->requests->TakeParked()) slot->requests->Wake();
}

void WorkerServer::ExecLoop(Slot* slot) {
  util::SetCurrentThreadName("wk-exec-" + std::to_string(slot->id));
  std::string bytes;
  for (;;) {
    // The ring first: the host sends on the socket only what the ring
    // could not take, after it (Note [Requests in the segment]).
    ShmRing* ring = slot->requests.get();  // this thread's to change
    if (ring != nullptr && TakeRequest(slot, &bytes)) continue;
    std::pair<v1::HostMessage, int> item;
    {
      std::unique_lock<std::mutex> l(slot->mu);
      if (ring == nullptr) {
        slot->cv.wait(l, [&] { return !slot->work.empty(); });
      } else if (slot->work.empty()) {
        l.unlock();
        ring->Park();  // then look again: a request or a post rings it
        l.lock();
        if (slot->work.empty() && ring->Empty()) {
          l.unlock();
          ring->Wait(-1);
          l.lock();
        }
        ring->Unpark();
        if (slot->work.empty()) continue;
      }
      // A socket request follows every ring request pushed before it:
      // the ring's go first, whatever woke this thread.
      if (ring != nullptr && !ring->Empty()) continue;
      item = std::move(slot->work.front());
      slot->work.pop_front();
    }
    Handle(slot, item.first, item.second);
  }
}

// One request from the slot's ring, handled; false when there is none.
// A record that is no request ends the worker: the host's memory under
// it is not what the two agreed.
bool WorkerServer::TakeRequest(Slot* slot, std::string* bytes) {
  Status bad;
  if (!slot->requests->Pop(bytes, &bad)) {
    if (bad.ok()) return false;
    std::fprintf(stderr, "hflow-worker: %s; exiting\n", bad.ToString().c_str());
    Exit(4);
  }
  v1::HostMessage m;
  if (!m.ParseFromString(*bytes) || !m.has_proc()) {
    std::fprintf(stderr,
                 "hflow-worker: a record in slot %u's request ring that is "
                 "no Proc; exiting\n",
                 slot->id);
    Exit(4);
  }
  Handle(slot, m, -1);
  return true;
}

// Note [Replies in the segment]
// A reply on the socket costs its sender a system call and the host's
// supervisor a wake-up, a poll and a read, per Proc: with batches of calls
// and chains in the worker, most of what an isolated message costs. A Proc
// reply goes instead into the slot's own reply ring, read by its caller
// (Note [A caller reads its own replies] in worker_calls.cc), or, for a
// slot without one, into the reply ring after the segment's call page
// (ShmRing), and the socket carries a Doorbell only when the supervisor is
// parked on it, so a busy host reads a batch's replies with no system call
// at all. The ring is the segment's, so what the worker put there before
// it died is read after its death as well, and handed out before the
// calls in flight fail (nothing produced is lost). A reply the ring has no
// room for waits until the host has read the ring empty, so none
// overtakes another; one larger than the ring then goes on the socket.
// Control replies (Load, Reset, Unload, Links, Stop) and Emits stay on
// the socket.
void WorkerServer::Reply(v1::WorkerMessage* reply, Slot* slot, bool quiet) {
  AddCounters(reply);
  if (!reply->has_proc_done() || (!ring_ && !(slot && slot->replies))) {
    SendReply(*reply);
    return;
  }
  const std::string bytes = reply->SerializeAsString();
  if (slot != nullptr && ReplyToSlot(slot, bytes, quiet)) return;
  if (slot != nullptr && slot->replies) {
    // Larger than the slot's ring: it goes after every reply there.
    while (!slot->replies->Empty()) {
      if (slot->replies->TakeParked()) slot->replies->Wake();
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  if (!ring_) {
    SendReply(*reply);
    return;
  }
  std::unique_lock<std::mutex> l(ring_mu_);
  if (!ring_->TryPush(bytes.data(), bytes.size())) {
    // Replies keep their order: this one waits until the host has read
    // every reply before it (a socket reply overtakes none), then goes
    // in the ring, or on the socket if it is larger than the ring.
    RingDoorbell();
    while (!ring_->Empty()) {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      RingDoorbell();
    }
    if (!ring_->TryPush(bytes.data(), bytes.size())) {
      // Larger than the ring (hundreds of outputs): a reply pushed
      // after it may be read first; only a death report's naming of the
      // call in flight looks at that order.
      SendReply(*reply);
      return;
    }
  }
  l.unlock();
  RingDoorbell();
}

// The host's caller reads the slot's ring while it waits for its replies
// (a reply comes only to a call in flight), so one that does not fit now
// waits for room; one larger than the ring waits until the caller has
// read the ring empty (none overtakes another), then goes the segment's
// way (Reply), where the caller's wait finds it too.
bool WorkerServer::ReplyToSlot(Slot* slot, const std::string& bytes,
                               bool quiet) {
  ShmRing* ring = slot->replies.get();  // this thread's own
  if (ring == nullptr || bytes.size() + 64 > ring->data_bytes()) return false;
  while (!ring->TryPush(bytes.data(), bytes.size())) {
    if (ring->TakeParked()) ring->Wake();
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (!quiet && ring->TakeParked()) ring->Wake();
  return true;
}

// The supervisor parked on the socket reads the ring when rung.
void WorkerServer::RingDoorbell() {
  if (!ring_->TakeParked()) return;
  v1::WorkerMessage bell;
  bell.mutable_doorbell();
  SendReply(bell);
}

void WorkerServer::SendReply(const v1::WorkerMessage& reply) {
  Status sent = channel_.Send(reply);
  if (!sent.ok()) {
    // The host waits for this reply: a death it sees beats a silence.
    std::fprintf(stderr, "hflow-worker: cannot reply (%s); exiting\n",
                 sent.ToString().c_str());
    Exit(3);
  }
}

}  // namespace worker
}  // namespace hflow
