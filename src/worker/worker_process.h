// WorkerProcess: the host's handle on one hflow-worker process: starts it,
// carries its control calls, forwards its output, and notices its death.
//
// Start spawns the worker (posix_spawn, its own process group) from a
// supervisor thread of its own, `wk-<tag>`, which then stays for the
// worker's life: the parent-death signal the worker asks for
// (PR_SET_PDEATHSIG: SIGKILL) follows the *thread* that spawned it, so
// spawning from a deploy pool thread would kill the worker when that
// thread ends. The supervisor waits (poll, no timeout) on the control
// socket and on the pipe of the worker's stdout and stderr, whose lines it
// writes to hflow's stderr under the worker's prefix, and kills a worker
// that stops answering (no datagram, not even its Beat, for a whole
// heartbeat: SIGSTOP, a deadlock outside the UDF). A worker that dies
// closes its socket, so its death is seen at once, whatever the signal:
// the supervisor reaps it, fails every call in flight with a status naming
// the worker, the signal or exit code and the call, and tells `on_death`.
//
// Thread-safety: Call, Send and Kill may be used from any thread (one call
// per message id; the caller waits on its own slot; a Kill fails the calls
// in flight); Stop and the destructor from one thread, after the calls
// have returned.
#ifndef HFLOW_WORKER_WORKER_PROCESS_H_
#define HFLOW_WORKER_WORKER_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "hflow/status.h"
#include "worker/channel.h"
#include "worker/proto/worker.pb.h"
#include "worker/segment.h"
#include "worker/shm_ring.h"

namespace hflow {
namespace worker {

struct WorkerSpec {
  std::string binary;  // the hflow-worker executable
  // When not empty, the program and arguments started instead of
  // `binary` (hflow-worker's flags follow them).
  std::vector<std::string> launcher;
  std::string what;    // "node 'n' (replica 0) on device 3", for messages
                       // (SetLabel changes it and the prefix)
  std::string tag;     // supervisor thread name suffix (short)
  std::string prefix;  // prefix of the worker's output lines
  int32_t start_timeout_ms = 10000;
  // A worker that says nothing (not even its Beat, every fifth of this)
  // for this long once started is killed as hung; 0: never.
  int32_t heartbeat_ms = 0;
  // Called once, on the supervisor thread, when the worker dies without
  // having been asked to stop; the status names the worker and the cause.
  std::function<void(const Status&)> on_death;
  // Called once, on the supervisor thread, when the worker is gone for
  // whatever reason (planned kills and Stop too), before on_death.
  std::function<void()> on_end;
  // Called on the supervisor thread for each output the worker's UDFs
  // set outside Proc (an Emit; emitter.h): it must only post it, and
  // whoever delivers it answers the worker (EmitDone, with the Emit's
  // id). None: each is refused at once (FLOW_FUNC_FAILED).
  std::function<void(v1::WorkerMessage)> on_emit;
  // The segment whose reply ring (ring_bytes after its call page; 0: none)
  // the worker puts its Proc replies in (Note [Replies in the segment] in
  // worker_server.cc); read by the supervisor, to the last, after a death.
  std::shared_ptr<Segment> segment;
  uint64_t ring_bytes = 0;
};

// A slot's rings, for its Proc calls: the request ring they go through
// when they fit (Note [Requests in the segment] in worker_server.cc), and
// the slot's own reply ring (may be null) the caller reads its replies
// from (Note [A caller reads its own replies] in worker_calls.cc), one
// reader at a time under `reading`.
struct SlotRings {
  ShmRing* requests = nullptr;
  ShmRing* replies = nullptr;
  std::mutex* reading = nullptr;
};

// Replies read from reply rings (Note [Replies in the segment] in
// worker_server.cc) over every worker of the process: for tests and
// benchmarks.
uint64_t RingRepliesRead();
// Requests sent on the socket because their ring had no room for them.
uint64_t RingOverflows();
// Of RingRepliesRead, those read by their callers from their slots' own
// reply rings (Note [A caller reads its own replies] in worker_calls.cc).
uint64_t CallerRepliesRead();
// Waits on a slot's reply ring that ended by their guard's time running
// out (a second: none should).
uint64_t RingGuardExpiries();
// Times a caller slept on its slot's reply ring.
uint64_t CallerRingWaits();

class WorkerProcess {
 public:
  // Spawns the worker and waits for its Hello (protocol version checked).
  static Status Start(WorkerSpec spec, std::shared_ptr<WorkerProcess>* out);
  ~WorkerProcess();  // kills a worker still running and reaps it
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `req` (its id is assigned here) with `pass_fd` attached, and
  // waits up to `timeout_ms` (-1: forever) for the reply. A worker that
  // dies first fails the call with its death; a timeout kills the worker
  // (a hung worker is never left running) and returns kTimeout naming
  // `doing`.
  // `*delivered` (may be null): whether the request reached the socket; a
  // worker already gone never saw it.
  // `rings` (may be null): the request's slot's (SlotRings); the request
  // goes through its request ring when it fits (and has no descriptor),
  // and one the worker never took from it before dying counts as not
  // delivered.
  Status Call(v1::HostMessage* req, v1::WorkerMessage* reply, int timeout_ms,
              const std::string& doing, int pass_fd = -1,
              bool* delivered = nullptr, const SlotRings* rings = nullptr);
  // For CallEach: request i's outcome, on the calling thread: its reply
  // (non-null, status OK), or why it has none; `delivered` as Call's.
  using EachReply =
      std::function<void(size_t i, const Status& status, bool delivered,
                         v1::WorkerMessage* reply)>;
  // Call for each of `reqs` (no timeout, no descriptor), all sent before
  // any reply is awaited, so that the worker works through them back to
  // back; `each` is called for every request, in order, on the calling
  // thread, once every reply is in (one wake-up a batch) or the worker is
  // gone. A request too large for the socket
  // fails alone; any other failed send fails the rest unsent (the worker
  // is gone). The replies a dying worker sent are handed out before its
  // death is reported (Note [Replies before the death]).
  // `answered` (may be null) is told i as reply i arrives, on the thread
  // that reads it (the caller, or the supervisor; under a lock: it must
  // be quick).
  // `rings`: as Call's, for the requests that fit, the rest on the socket.
  void CallEach(std::vector<v1::HostMessage>* reqs, const std::string& doing,
                const EachReply& each,
                const std::function<void(size_t)>* answered = nullptr,
                const SlotRings* rings = nullptr);
  // One message with no reply (Release); a dead worker ignores it.
  void Send(const v1::HostMessage& msg);
  // Asks the worker to finish (its destructors run) and waits up to
  // `timeout_ms` for it to exit; then kills it. OK when it exited 0.
  Status Stop(int timeout_ms);
  // SIGKILL now (planned: no on_death); returns when it is reaped.
  void Kill();

  // Names the worker anew in messages and its output lines (a shared
  // worker's nodes change as instances join and leave).
  void SetLabel(std::string what, std::string prefix);

  // The worker runtime's counters as its last reply reported them.
  std::map<int32_t, v1::DeviceCounters> counters() const;

  pid_t pid() const { return pid_.load(std::memory_order_acquire); }
  bool alive() const { return !dead_.load(std::memory_order_acquire); }
  // How the worker died (OK while it lives).
  Status death() const;
  // Waits up to `timeout_ms` for the worker's death to be marked (its
  // socket closed: the mark follows the owner's on_death); whether it is.
  bool WaitDead(int timeout_ms) const;

 private:
  explicit WorkerProcess(WorkerSpec spec);
  std::string What() const;
  std::string Prefix() const;
  // The supervisor thread: spawn, then serve until the worker is gone.
  void Supervise(int child_fd, int out_fd, int out_child_fd);
  // poll's timeout for the next wait: until the heartbeat runs out (-1:
  // none); kills the worker when it has.
  int UntilSilence(bool beating, std::chrono::steady_clock::time_point heard);
  Status Spawn(int child_fd, int out_child_fd);
  void OnMessage(v1::WorkerMessage msg);
  // Hands out every reply in the reply ring (none: nothing to do).
  void DrainRing(std::chrono::steady_clock::time_point* heard);
  // Hands out the replies in `ring`; how many. A record that is none
  // ends the reading and the worker (killed).
  size_t DrainReplies(ShmRing* ring);
  // With mu_ held by `*l`: reads `rings`' reply ring, waiting on it, until
  // `done()` (under mu_), the socket's end (after one last reading) or
  // `deadline` (Note [A caller reads its own replies]).
  void AwaitOnRing(const SlotRings& rings, std::unique_lock<std::mutex>* l,
                   const std::function<bool()>& done,
                   std::chrono::steady_clock::time_point deadline,
                   int max_wait_ms = 1000);
  // Rings a caller waiting on a slot's reply ring (under mu_).
  static void WakeReader(ShmRing* ring);
  void OnEmit(v1::WorkerMessage msg);
  bool SendAsOne(std::vector<v1::HostMessage>* reqs, size_t from, Status* gone);
  // Pushes `reqs[0..n)` from the first into `via` while they fit (none
  // without a ring), ringing its reader; how many, each one's end in
  // `*ends`. `quiet`: each but the last is marked Proc.quiet.
  static size_t PushAll(v1::HostMessage* reqs, size_t n, ShmRing* via,
                        bool quiet, std::vector<uint64_t>* ends);
  void Forward(int out_fd, bool to_end);
  void Reap(bool planned);
  Status Describe(int wait_status) const;
  void Signal(int sig);

  const WorkerSpec spec_;
  mutable std::mutex label_mu_;
  std::string what_;    // under label_mu_
  std::string prefix_;  // under label_mu_
  Channel channel_;
  std::unique_ptr<ShmRing> ring_;  // the supervisor's, over spec_.segment
  std::thread supervisor_;
  std::atomic<pid_t> pid_{-1};  // set by the supervisor once spawned
  std::atomic<bool> dead_{false};
  std::atomic<bool> planned_{false};  // Stop/Kill asked: not a failure
  std::atomic<bool> silent_{false};   // killed for missing its heartbeat
  std::atomic<uint64_t> next_id_{1};

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool started_ = false;  // Hello arrived (or the start failed)
  bool reaped_ = false;   // waitpid returned it: never signal the pid again
  bool closed_ = false;   // its socket ended: no reply comes any more
  int draining_ = 0;      // CallEach callers still handing out replies
  std::mutex join_mu_;    // one joiner of the supervisor
  Status start_status_;
  Status death_;
  // Calls in flight: id -> reply slot.
  struct Slot {
    bool done = false;
    v1::WorkerMessage reply;
    // CallEach's: the replies its batch still waits for, and its caller's
    // own wake-up, rung by the last of them (Note [Replies before the
    // death]).
    size_t* left = nullptr;
    std::condition_variable* wake = nullptr;
    // CallEach's `answered`, told this slot's index as its reply comes.
    const std::function<void(size_t)>* answered = nullptr;
    size_t index = 0;
    // The reply ring its caller waits on (null: it waits on a condition
    // variable).
    ShmRing* ring = nullptr;
  };
  std::map<uint64_t, Slot*> calls_;
  std::map<int32_t, v1::DeviceCounters> counters_;
  std::string partial_;  // an output line without its newline yet
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_WORKER_PROCESS_H_
