// RemoteInstance: a UDF instance whose code runs in an hflow-worker
// process (flow_func::Instance; docs/architecture.md, "Worker processes").
// The host keeps everything else: queues, routing, pairing, errors. The
// worker is a seat (SharedWorker) the instance may share with the other
// isolated instances on its device; the instance has a slot in it. Init
// sends the instance's description (Load) and waits for the worker's Init;
// Proc puts the inputs in the worker's shared segment (no copy when a
// message already lies there: an earlier output of this worker, from this
// instance or another), sends their offsets, and hands each output the
// worker reports to the host's output function as a message over the
// segment (no copy), whose last release tells the worker to free it.
// ProcBatch sends many Proc calls before it waits for their replies, one
// round trip for them all (Note [Batched calls] in remote_batch.cc).
//
// A worker that dies fails the calls in flight; the seat reports the death
// (shared_worker.h). With restarts left (RemoteConfig::max_restarts) a call
// in flight returns FLOW_FUNC_STATUS_REDEPLOYING (its transaction is lost,
// and its fetch says so), and the instance's next call starts a new worker
// if no other member has, and Inits a new object in it (Note [Restarting a
// worker]). Without, the call returns FLOW_FUNC_FAILED and the graph has
// failed. ResetState starts a dead worker again either way
// (Session::ResetGraph recovers such a graph) and gives the seat its
// restarts back.
//
// Thread-safety: as flow_func::Instance. Cancel, and the SeatMember
// methods, may be called from any thread.
#ifndef HFLOW_WORKER_REMOTE_INSTANCE_H_
#define HFLOW_WORKER_REMOTE_INSTANCE_H_

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flow_func/instance.h"
#include "flow_func/udf_context.h"
#include "worker/remote_config.h"
#include "worker/shared_worker.h"

namespace hflow {
namespace worker {

class RemoteInstance final : public flow_func::Instance, public SeatMember {
 public:
  // Joins `seat` (and starts its worker unless it runs); Init loads the
  // instance into it.
  static Status Create(std::vector<flow_func::FuncDesc> funcs,
                       flow_func::InstanceEnv env,
                       std::shared_ptr<SharedWorker> seat,
                       std::unique_ptr<RemoteInstance>* out);
  ~RemoteInstance() override;  // unloads it (user destructors run)

  Status Init(const rt::ScopedDevice& bound) override;
  int32_t Proc(const rt::ScopedDevice& bound, size_t index,
               const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
               uint64_t trans = 0) override;
  size_t BatchLimit() const override { return max_batch_; }
  void ProcBatch(const rt::ScopedDevice& bound, size_t index,
                 std::vector<flow_func::ProcCall>* calls,
                 const flow_func::DeliverScope& scope) override;
  int32_t ProcQueues(const rt::ScopedDevice& bound, size_t index,
                     const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>&
                         queues) override;
  Status ResetState(const rt::ScopedDevice& bound, bool* recreated) override;
  bool InCall(std::string* what) const override;
  const std::vector<flow_func::FuncDesc>& funcs() const override {
    return funcs_;
  }
  void Cancel() override;
  // Links to another RemoteInstance of the same seat (Note [Chains in a
  // worker] in worker_chain.cc); $HFLOW_WORKER_CHAIN=0 refuses every link.
  bool CopiesInputs() const override { return true; }  // PutInput
  // An island's first stage (links set before the first call).
  bool TakesFailures() const override { return !links_.empty(); }
  bool LinkOutput(uint32_t output, flow_func::Instance* to,
                  size_t func) override;

  pid_t pid() const;
  // Workers of its seat started again after a death (not the first).
  int32_t restarts() const { return seat_->restarts(); }

  // SeatMember.
  std::string Node() const override { return env_.node; }
  std::string Name() const override;   // "node 'n' (replica r)"
  std::string Doing() const override;  // "in Init", "in Proc of ..."
  bool Busy() const override { return phase_.load() != 0; }
  // Names the instance it feeds in the worker when the call page says one
  // was in a chained call (Note [The call page] in segment.h).
  std::string CallReport() const override;
  int32_t Emitted(const SharedWorker::Life& life,
                  const v1::Emit& emit) override;

 private:
  using Life = SharedWorker::Life;
  // Calls sent to the worker before the first reply is awaited (Note
  // [Batched calls] in remote_batch.cc); $HFLOW_WORKER_BATCH (1 to 64)
  // sets another, 1 turning batches off.
  static constexpr size_t kMaxBatch = 16;

  RemoteInstance() = default;
  std::string What() const;  // "node 'n' (replica r) on device d"
  const RemoteConfig& config() const { return seat_->config(); }
  // `own`: on this instance's own caller, which it marks in Init
  // meanwhile (a Load for another, EnsureLoaded's, leaves its phase).
  Status Load(const rt::ScopedDevice& bound, const Life& life, bool own = true);
  // Loads this instance into `life` unless it is there, then the
  // instances its links reach (Note [A restarted island loads whole] in
  // remote_restart.cc). On the calling thread, bound to their device.
  // `own`: as Load's.
  Status EnsureLoaded(const rt::ScopedDevice& bound, const Life& life,
                      bool own = true);
  // Makes sure the seat's current life lives and holds this instance
  // (a new worker after a death, a new object Init'ed in it); fails
  // the graph when it cannot. FLOW_FUNC_SUCCESS, or the code to return.
  int32_t Recover(const rt::ScopedDevice& bound, uint64_t trans,
                  std::shared_ptr<const Life>* life);
  // One Proc; `*delivered`: whether its request reached the worker.
  int32_t ProcOnce(
      const rt::ScopedDevice& bound, size_t index,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
      uint64_t trans, bool* delivered);
  // The request for one Proc, its inputs lent (waiting up to `wait_ms`
  // for segment memory); on failure nothing stays lent.
  Status Prepare(const Life& life, size_t index,
                 const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
                 uint64_t trans, int32_t wait_ms, v1::HostMessage* req);
  // The code for a Proc whose Prepare failed with `s`.
  int32_t PrepareFailed(const Life& life, const Status& s, bool* delivered);
  // The code for a Proc sent as `req`, from its call's status and reply;
  // takes its outputs.
  int32_t Finish(const Life& life, const v1::HostMessage& req, const Status& s,
                 bool delivered, const v1::WorkerMessage& reply);
  // Waits (bounded) for the death of a worker whose segment was found
  // cancelled to be marked; whether it was.
  static bool AwaitDeath(const Life& life);
  Status PutInput(const Life& life, const FlowFunc::FlowMsg& in,
                  int32_t wait_ms, v1::Msg* out);
  Status CheckOutputs(const Life& life, const v1::ProcDone& done) const;
  // `*last_rc` (if given): the failing code of the last output that
  // failed in delivery, else left as it is.
  Status TakeOutputs(const Life& life, const v1::ProcDone& done,
                     int32_t* last_rc = nullptr);
  v1::HostMessage Request() const;  // with this instance's slot
  // The instance in `slot` this one's links reach (directly or through
  // the instances they link to); null when none does.
  const RemoteInstance* Downstream(uint32_t slot, int depth = 0) const;
  void AddLinks(v1::Load* load) const;
  void Unlend(const Life& life, const v1::Proc& proc) const;

  std::vector<flow_func::FuncDesc> funcs_;
  flow_func::InstanceEnv env_;
  std::shared_ptr<SharedWorker> seat_;
  uint32_t slot_ = 0;
  // The seat's life this instance is loaded into (0: none yet).
  std::atomic<uint64_t> loaded_{0};
  // Held over a Load in a restarted worker: an instance's own caller and
  // the first stage of its island may both load it (EnsureLoaded; taken
  // upstream first, as links go).
  std::mutex load_mu_;
  // The call in progress (InCall, the death report): util::UdfPhase and
  // its transaction.
  std::atomic<uint32_t> phase_{0};
  std::atomic<uint64_t> trans_{0};
  size_t max_batch_ = kMaxBatch;
  // Chained outputs, set by LinkOutput before the first Proc; read by the
  // calls (and by instances linking to this one) after that.
  struct Link {
    uint32_t output = 0;
    RemoteInstance* to = nullptr;
    uint32_t func = 0;
  };
  std::vector<Link> links_;
  std::string linked_nodes_;  // "'b', 'c'": for Doing
  bool chains_ = true;        // $HFLOW_WORKER_CHAIN
  // This instance's rings in life `life`'s segment (Note [Requests in
  // the segment] in worker_server.cc, Note [A caller reads its own
  // replies] in worker_calls.cc): the request ring and, after it in the
  // same block of the host's part held for that life, the slot's reply
  // ring; made by Load, used by the calls (remote_rings.cc).
  struct Ring {
    Ring(char* base, const v1::Load& load, std::shared_ptr<ArenaBlock> b,
         uint64_t l);
    ShmRing ring;
    std::unique_ptr<ShmRing> replies;  // null: none
    std::mutex reading;
    SlotRings rings;  // over the two
    std::shared_ptr<ArenaBlock> block;
    uint64_t life;
  };
  // A call holds its own reference: a Load in the middle of it (a retry
  // in a new worker) replaces ring_.
  // Under ring_mu_: a Load on another instance's thread (EnsureLoaded)
  // may replace it while this one's own call reads it.
  std::shared_ptr<Ring> ring_;
  mutable std::mutex ring_mu_;
  // The ring of `life` when Load made one for it, else null.
  std::shared_ptr<Ring> RingOf(const Life& life) const {
    std::lock_guard<std::mutex> l(ring_mu_);
    return ring_ && ring_->life == life.number ? ring_ : nullptr;
  }
  // Rings for `life` into `load` (none when the segment has no room to
  // spare or rings are off), made current once the Load is done.
  void PlanRing(const Life& life, v1::Load* load,
                std::shared_ptr<ArenaBlock>* block);
};

// For its lifetime, the calling thread's releases of worker blocks (the
// last host message over a worker's output going) are gathered, and sent
// as one Release per worker when it ends or Flush is called, instead of
// a datagram each (ProcBatch, whose calls drop many inputs at once). One
// per thread at a time: an inner one gathers nothing of its own.
class GatheredReleases {
 public:
  GatheredReleases();
  ~GatheredReleases();
  GatheredReleases(const GatheredReleases&) = delete;
  GatheredReleases& operator=(const GatheredReleases&) = delete;
  void Flush();
  // Adds the release to the calling thread's gathering; false when it
  // has none (send it now).
  static bool Add(const std::weak_ptr<WorkerProcess>& worker, uint64_t offset);

 private:
  bool active_ = false;
  std::vector<std::pair<std::weak_ptr<WorkerProcess>, v1::HostMessage>>
      by_worker_;
};

// What ProcBatch sent, over every instance of the process: requests, and
// the round trips (waits for replies) they took; their ratio is the mean
// batch. For tests and benchmarks.
struct BatchCounts {
  uint64_t calls = 0;
  uint64_t round_trips = 0;
};
BatchCounts ProcBatchCounts();

// For remote_instance.cc and remote_batch.cc: counts one round trip of
// `calls` requests; the batch size $HFLOW_WORKER_BATCH asks for, else
// `fallback`.
void CountRoundTrip(size_t calls);
size_t MaxBatchFromEnv(size_t fallback);

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_REMOTE_INSTANCE_H_
