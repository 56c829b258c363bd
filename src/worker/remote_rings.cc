// RemoteInstance's rings (remote_instance.h): the block of the host's part
// that holds a slot's request ring and its own reply ring for a life
// (Note [Requests in the segment] in worker_server.cc, Note [A caller
// reads its own replies] in worker_calls.cc).
//
// Thread-safety: PlanRing runs in Load, on the thread loading the
// instance; a Ring is shared by the calls of its life, which read its
// reply ring one at a time (`reading`).
#include <cstdlib>
#include <cstring>
#include <string>

#include "worker/remote_instance.h"

namespace hflow {
namespace worker {

namespace {

// $HFLOW_WORKER_SLOT_REPLIES=0 sends a slot's replies through the
// segment's ring (read by the supervisor) instead: for the benchmark's
// comparison and for tests of that path.
bool SlotRepliesOn() {
  const char* env = std::getenv("HFLOW_WORKER_SLOT_REPLIES");
  return env == nullptr || std::string(env) != "0";
}

}  // namespace

RemoteInstance::Ring::Ring(char* base, const v1::Load& load,
                           std::shared_ptr<ArenaBlock> b, uint64_t l)
    : ring(base + load.request_ring_offset(), load.request_ring_bytes()),
      block(std::move(b)),
      life(l) {
  if (load.slot_reply_ring_bytes() != 0) {
    replies = std::make_unique<ShmRing>(base + load.slot_reply_ring_offset(),
                                        load.slot_reply_ring_bytes());
  }
  rings.requests = &ring;
  rings.replies = replies.get();
  rings.reading = &reading;
}

// One block: the request ring's header and bytes, then the reply ring's
// (the same size), both 64-aligned as the arena's blocks and the ring
// sizes are.
void RemoteInstance::PlanRing(const Life& life, v1::Load* load,
                              std::shared_ptr<ArenaBlock>* block) {
  const uint64_t ring = seat_->request_ring_bytes();
  if (ring == 0) return;  // no room, or $HFLOW_WORKER_RING=0
  const uint64_t one = ShmRing::kHeaderBytes + ring;
  const bool replies = SlotRepliesOn();
  const uint64_t bytes = replies ? 2 * one : one;
  uint64_t at = 0;
  if (!life.arena->Take(bytes, 0, &at).ok()) return;
  *block = std::make_shared<ArenaBlock>(life.arena, at, bytes);
  if (at % 64 != 0) {  // the arena's blocks are; a ring must be
    block->reset();
    return;
  }
  std::memset(life.segment->base() + at, 0, ShmRing::kHeaderBytes);
  load->set_request_ring_offset(at);
  load->set_request_ring_bytes(ring);
  if (!replies) return;
  std::memset(life.segment->base() + at + one, 0, ShmRing::kHeaderBytes);
  load->set_slot_reply_ring_offset(at + one);
  load->set_slot_reply_ring_bytes(ring);
}

}  // namespace worker
}  // namespace hflow
