// WorkerServer: the hflow-worker side of the control protocol. It reads
// the host's messages on its main thread (`hflow-worker`) and runs each
// instance it serves on an executor thread of its own (`wk-exec-<slot>`),
// bound to the instance's device in the worker's own runtime for as long
// as the process lives. The first Load maps the shared segment and creates
// the runtime (on the main thread, which binds nothing); every Load then
// loads its UDF libraries, creates its instance and runs Init on its
// slot's thread. Proc wraps the inputs over the segment and runs Proc;
// Reset, Unload and Stop as their names say. Release is handled at once on
// the main thread, so a Proc waiting for segment memory sees the host give
// it back; so is EmitDone, the host's answer to an output set outside
// Proc, for which the UDF's thread waits.
//
// A slot's outputs the host linked to another slot's instance (Links) go
// straight into that instance's Proc, on the calling slot's thread (Note
// [Chains in a worker] in worker_chain.cc).
//
// Thread-safety: Run owns the process. A slot's instance is called by its
// executor thread, or by another slot's thread for a chained call, always
// under the slot's call_mu; slots_ changes only on the main thread (under
// slots_mu_, which slot threads read it under). The segment, arena and
// runtime are made once, before any slot thread uses them; lent_, each
// slot's released blocks and the counters have mutexes of their own.
#ifndef HFLOW_WORKER_WORKER_SERVER_H_
#define HFLOW_WORKER_WORKER_SERVER_H_

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "flow_func/instance.h"
#include "flow_func/mbuf_msg.h"
#include "rt/device_binding.h"
#include "worker/channel.h"
#include "worker/proto/worker.pb.h"
#include "worker/segment.h"
#include "worker/serve.h"
#include "worker/shm_ring.h"

namespace hflow {
namespace worker {

class WorkerServer {
 public:
  // `heartbeat_ms` > 0: the main thread sends a Beat every fifth of it.
  // `loader`: how functions with a payload are registered (null: they
  // are refused).
  WorkerServer(int control_fd, int heartbeat_ms, PayloadLoader loader = {})
      : channel_(control_fd),
        heartbeat_ms_(heartbeat_ms),
        loader_(std::move(loader)) {}
  // Serves until Stop or the host's end; returns the exit code.
  int Run();

 private:
  // One instance and the thread that runs it.
  struct Slot {
    uint32_t id = 0;
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::pair<v1::HostMessage, int>> work;  // under mu
    // The host's Procs for this slot, in the segment (Note [Requests in
    // the segment] in worker_server.cc); set and cleared by the slot's
    // thread under mu (Load, Unload), read by the main thread under mu.
    std::unique_ptr<ShmRing> requests;
    // Its Proc replies, read by the host's caller (Note [A caller reads
    // its own replies] in worker_calls.cc); set with `requests`, pushed
    // to by the slot's thread only.
    std::unique_ptr<ShmRing> replies;
    bool unloaded = false;  // under mu (Stop)
    // The executor thread's own; the instance and the per-call fields
    // below are touched under call_mu by whichever thread calls it.
    std::unique_ptr<rt::ScopedDevice> bound;
    int32_t device = -1;
    std::unique_ptr<flow_func::Instance> instance;
    std::atomic<bool> in_proc{false};  // read by UDF threads (outputs)
    // The thread running the instance's Proc now: its own, or, for a
    // chained call, the thread of the slot that feeds it (Note [Chains in
    // a worker] in worker_chain.cc).
    std::atomic<std::thread::id> caller{};
    // One Proc, Reset or Unload of the instance at a time, whichever
    // thread runs it; held over a chained call by the calling thread.
    std::mutex call_mu;
    // Under call_mu: where chained outputs go, by UDF output index (slot
    // 0: back to the host), the node's error tag and its output count.
    std::vector<v1::Link> links;
    uint32_t error_tag = 0;
    uint32_t output_num = 0;
    std::vector<std::pair<uint32_t, services::MbufPtr>> outputs;
    std::vector<v1::Raised> raised;  // this Proc's RaiseException calls
    bool has_pending = false;        // the Proc's GetException answer
    v1::Raised pending;
    // Host blocks of this slot's inputs whose last worker reference went
    // (input messages die on any thread a UDF keeps them on). Reported
    // in this slot's replies only: the host must read an output over a
    // block before it learns of its release (Note [Releases per slot]).
    std::mutex released_mu;
    std::vector<uint64_t> released;
  };

  // Ends the worker with `code`, its output flushed.
  [[noreturn]] static void Exit(int code);
  void Dispatch(v1::HostMessage m, int fd);
  void Post(Slot* slot, v1::HostMessage m);
  bool TakeRequest(Slot* slot, std::string* bytes);
  void StopAll(const v1::HostMessage& m, const std::vector<Slot*>& slots);
  void ExecLoop(Slot* slot);
  void Handle(Slot* slot, const v1::HostMessage& m, int fd);
  // `slot` (may be null): the slot whose request this answers; `quiet`:
  // its caller waits for a later reply (Proc.quiet).
  void Reply(v1::WorkerMessage* reply, Slot* slot = nullptr,
             bool quiet = false);
  // Into the slot's own reply ring; false when it has none or the reply
  // is larger than it.
  bool ReplyToSlot(Slot* slot, const std::string& bytes, bool quiet);
  void RingDoorbell();
  void SendReply(const v1::WorkerMessage& reply);  // exits when it cannot
  // The segment and runtime, at the first Load (main thread).
  Status Open(const v1::Load& load, int fd);
  v1::Done Load(Slot* slot, const v1::Load& load);
  Status SetUp(Slot* slot, const v1::Load& load);
  Status OpenRequests(Slot* slot, const v1::Load& load);
  Status CheckRing(const char* what, uint64_t at, uint64_t bytes) const;
  Status LoadPayload(const v1::FuncDesc& f);
  v1::Done Unload(Slot* slot);
  v1::ProcDone Proc(Slot* slot, const v1::Proc& proc);
  void DropOutputs(v1::ProcDone* done);
  // The chain half (worker_chain.cc, Note [Chains in a worker]): a
  // request's Proc and the chained calls its outputs make, on the
  // request's slot thread.
  using Msgs = std::vector<std::shared_ptr<FlowFunc::FlowMsg>>;
  struct ChainState {
    ChainState(v1::ProcDone* d, Slot* t, const v1::Proc& proc)
        : done(d),
          top(t),
          linked(!t->links.empty()),
          has_pending(proc.has_pending()),
          pending(proc.pending()),
          held{t} {}
    v1::ProcDone* done;  // the request's reply
    Slot* top;           // the request's slot
    bool linked;         // it chains: outputs carry their slots
    bool has_pending;    // the request's GetException answer
    v1::Raised pending;
    std::vector<Slot*> held;  // in a call on this thread, outermost first
    // The chain itself failed (an output it could not describe, an error
    // message it could not make): the request fails with the host.
    bool failed = false;
  };
  // Slot's Proc (under its call_mu, held by the caller) on this thread.
  int32_t RunProc(Slot* slot, size_t func, const Msgs& msgs, uint64_t trans,
                  ChainState* st);
  // Where the outputs of slot's call on `msgs` go, then its failure `rc`
  // (if any); whether that failure was passed on here.
  bool Route(Slot* slot, const Msgs& msgs, uint64_t trans, int32_t rc,
             ChainState* st);
  // An error message for `slot`'s every output, as the host's executor
  // makes for a failed call (GraphRunner::EmitError).
  void PassOn(Slot* slot, int32_t rc, uint32_t error_node, uint64_t trans,
              const services::MbufHead* input, ChainState* st);
  void Deliver(Slot* from, uint32_t index, services::MbufPtr m, ChainState* st);
  // A chained call of `to` (its call_mu held) on message `m`.
  void Chain(Slot* to, uint32_t func, services::MbufPtr m, ChainState* st);
  void ToHost(Slot* from, uint32_t index, const services::MbufPtr& m,
              ChainState* st);
  v1::Done SetLinks(Slot* slot,
                    const google::protobuf::RepeatedPtrField<v1::Link>& links);
  Slot* FindSlot(uint32_t id);
  v1::Done Reset(Slot* slot);
  // An output set outside Proc (Note [Outputs outside Proc] in
  // worker_data.cc): sent as an Emit; the host's code once delivered.
  int32_t EmitOutside(Slot* slot, uint32_t index,
                      std::shared_ptr<flow_func::MbufFlowMsg> msg);
  void OnEmitDone(uint64_t id, int32_t rc);
  void Unlend(uint64_t offset);
  Status Wire(const services::MbufPtr& m, v1::Msg* out);
  // A message over [at, at + bytes) of the worker's part, which goes back
  // to the arena with its last reference.
  services::MbufPtr BlockAt(int32_t device, uint64_t at, uint64_t bytes);
  services::MbufPtr Over(Slot* slot, const v1::Msg& w, Status* s);
  void ReleaseUnread(Slot* slot, const v1::Proc& proc, int from);
  void OnRelease(const v1::Release& r);
  // Adds the runtime's counters that changed since the last reply.
  void AddCounters(v1::WorkerMessage* reply);

  Channel channel_;
  const int heartbeat_ms_;
  const PayloadLoader loader_;
  std::mutex payload_mu_;
  std::set<std::string> payloads_;  // loaded, under payload_mu_

  // Changed by the main thread only, read by slot threads (a chained
  // call's target) under slots_mu_; a slot, once made, lives as long as
  // the process.
  std::mutex slots_mu_;
  std::map<uint32_t, std::unique_ptr<Slot>> slots_;

  // Made by Open before any slot thread reads them.
  Status opened_ = Status::FailedPrecondition("worker: nothing loaded");
  bool open_tried_ = false;
  std::shared_ptr<rt::DeviceRuntime> runtime_;
  std::unique_ptr<rt::DeviceContexts> contexts_;
  std::vector<int32_t> devices_;  // the runtime's (Load)
  std::shared_ptr<Segment> segment_;
  std::shared_ptr<SegmentArena> arena_;  // the worker's part
  // The reply ring (Note [Replies in the segment] in worker_server.cc);
  // slot threads push under ring_mu_.
  std::unique_ptr<ShmRing> ring_;
  std::mutex ring_mu_;
  uint64_t host_bytes_ = 0;
  uint64_t segment_bytes_ = 0;

  std::mutex counters_mu_;
  std::map<int32_t, std::pair<uint64_t, uint64_t>> sent_;  // AddCounters
  // Worker blocks the host reads: offset -> one message per lending.
  std::mutex lent_mu_;
  std::multimap<uint64_t, services::MbufPtr> lent_;
  // Emits waiting for the host's EmitDone: id -> the waiter's answer.
  struct PendingEmit {
    bool done = false;
    int32_t rc = 0;
  };
  std::mutex emit_mu_;
  std::condition_variable emit_cv_;
  uint64_t next_emit_ = 1;                  // under emit_mu_
  std::map<uint64_t, PendingEmit*> emits_;  // under emit_mu_
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_WORKER_SERVER_H_
