// SharedWorker: the host's side of one hflow-worker seat, which the
// instances it serves share (docs/architecture.md, "Worker processes"):
// the isolated instances of one deployment on one device share one
// (Options::udf_isolation), and an instance of a heavy_load node has one
// of its own. A seat holds the worker's current *life* (one process, the
// segment it shares with the host and the host blocks lent into it) and
// starts a new life when the worker died and a member needs it
// (Note [Restarting a worker]). Each member loads its instance into a
// slot of the worker (RemoteInstance), and loads it again into each new
// life.
//
// The outputs members' UDFs set outside Proc come as Emits, which the
// seat's emitter thread delivers through the member (emitter.h).
//
// A death is reported once for the seat: it names the worker, the signal
// or exit code, and each member's call in flight (or "between calls");
// with restarts left it is said on stderr, without it fails the graph
// (RemoteConfig::on_death).
//
// Thread-safety: every method may be called from any thread. Current
// returns a snapshot; a life is replaced only by Revive, one at a time.
#ifndef HFLOW_WORKER_SHARED_WORKER_H_
#define HFLOW_WORKER_SHARED_WORKER_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "rt/device_binding.h"
#include "worker/emitter.h"
#include "worker/proto/worker.pb.h"
#include "worker/remote_config.h"
#include "worker/segment.h"
#include "worker/worker_process.h"

namespace hflow {
namespace worker {

class SeatMember;

class SharedWorker {
 public:
  // One worker process, the segment both map, and the host blocks it may
  // still read (offset -> block, one entry per lending; a block also
  // lives while host messages over it do).
  struct Life {
    uint64_t number = 0;  // 1, 2, ...: which life of the seat
    std::shared_ptr<Segment> segment;
    std::shared_ptr<SegmentArena> arena;  // the host's part
    std::shared_ptr<WorkerProcess> process;
    int counters_id = 0;  // its source in config.counters
    // Decided once, as the death is reported and before it is marked:
    // whether a restart was reserved for it (a planned kill: never).
    std::shared_ptr<std::atomic<bool>> restartable =
        std::make_shared<std::atomic<bool>>(false);
    bool Restartable() const { return restartable->load(); }
    void Lend(uint64_t offset, std::shared_ptr<void> block) const;
    // Whether `offset` is lent; `*block` gets one of its holds then.
    bool Lent(uint64_t offset, std::shared_ptr<const void>* block) const;
    void Released(const v1::ProcDone& done) const;
    void Unlend(uint64_t offset) const;  // one lending of it ends

   private:
    mutable std::mutex lent_mu;
    mutable std::multimap<uint64_t, std::shared_ptr<void>> lent;
  };

  // A seat with no life yet.
  static Status Create(RemoteConfig config, int32_t device,
                       std::shared_ptr<SharedWorker>* out);
  // Starts the first life unless there is one; its first member calls
  // it after joining, so that the worker is named after it.
  Status Start();
  ~SharedWorker();  // stops the worker (its destructors run), reaps it
  SharedWorker(const SharedWorker&) = delete;
  SharedWorker& operator=(const SharedWorker&) = delete;

  std::shared_ptr<const Life> Current() const;  // null before Start
  // A member joins (its slot in every life) and leaves (before it dies).
  uint32_t Join(SeatMember* m);
  void Leave(SeatMember* m);

  // A new life in place of life `dead` when that is still the current one
  // (OK otherwise: another member revived it, or it lives). The restart
  // was counted when the death was reported (Note [Restarting a worker]).
  Status Revive(const rt::ScopedDevice& bound, uint64_t dead);
  // Kills the current life (planned: no report), so that nothing serves
  // from it (a restarted instance whose Init failed).
  void Discard();
  // A stop that timed out ends the calls in the worker: kills the current
  // life, and a life being started (Revive) as soon as it runs. Until
  // GiveBackRestarts (ResetGraph).
  void Cancel();
  bool cancelled() const;
  void NoMoreRestarts() { restarts_left_.store(0); }
  void GiveBackRestarts();
  // Lives started after a death (not counting the first).
  int32_t restarts() const { return restarts_.load(); }

  const RemoteConfig& config() const { return config_; }
  int32_t device() const { return device_; }
  uint64_t host_bytes() const { return host_bytes_; }
  uint64_t ring_bytes() const { return ring_bytes_; }  // 0: no reply ring
  // Each member's request ring's (0: none).
  uint64_t request_ring_bytes() const { return request_ring_bytes_; }

 private:
  SharedWorker(RemoteConfig config, int32_t device);
  Status Launch(uint64_t number);
  void Retire(const Life& life);
  void Relabel();
  void OnDeath(const std::shared_ptr<std::atomic<bool>>& restartable,
               const Status& death);
  // On the supervisor thread: `msg` (an Emit) to the emitter thread.
  void PostEmit(const std::weak_ptr<const Life>& life, v1::WorkerMessage msg);
  int32_t Deliver(const Life& life, const v1::Emit& emit);
  std::string Label(std::string* prefix) const;  // under members_mu_

  const RemoteConfig config_;
  const int32_t device_;
  static uint64_t RingBytes(uint64_t host_bytes, uint64_t fallback);

  const uint64_t host_bytes_;  // [0, host_bytes_) of a segment: inputs
  const uint64_t ring_bytes_;  // the reply ring's (Load.reply_ring_bytes)
  const uint64_t request_ring_bytes_;

  mutable std::mutex life_mu_;
  std::shared_ptr<const Life> life_;  // under life_mu_
  std::mutex revive_mu_;              // one Revive at a time
  std::atomic<int32_t> restarts_left_{0};
  std::atomic<int32_t> restarts_{0};
  bool cancelled_ = false;  // under life_mu_ (Cancel against Launch)

  mutable std::mutex members_mu_;
  std::vector<std::pair<SeatMember*, uint32_t>> members_;  // and slots
  uint32_t next_slot_ = 1;

  // Held while an emit is delivered to a member, so that a member leaving
  // waits for it (the queues are closed by then: it ends soon).
  std::mutex emit_mu_;
  Emitter emitter_;  // last: its thread ends before the rest goes
};

// What a seat needs of the instances it serves: words for its messages,
// and a way in for the outputs their UDFs set outside Proc.
class SeatMember {
 public:
  virtual ~SeatMember() = default;
  virtual std::string Node() const = 0;   // "n"
  virtual std::string Name() const = 0;   // "node 'n' (replica r)"
  virtual std::string Doing() const = 0;  // "in Proc of transaction t"
  virtual bool Busy() const = 0;          // in a call
  // What a death report says of a busy member: "node 'n' (replica r) in
  // Proc of transaction t", naming the instance that was in the call.
  virtual std::string CallReport() const { return Name() + " " + Doing(); }
  // Delivers an output the member's UDF set outside Proc in `life`'s
  // worker (emitter.h), on the seat's emitter thread; the FlowFunc code.
  virtual int32_t Emitted(const SharedWorker::Life& life,
                          const v1::Emit& emit) = 0;
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_SHARED_WORKER_H_
