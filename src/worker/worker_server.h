// WorkerServer: the hflow-worker side of the control protocol. It reads
// the host's messages on its main thread (`hflow-worker`) and runs the
// instance on one executor thread (`wk-exec`), bound to the instance's
// device in the worker's own runtime for as long as the process lives:
// Load creates the runtime, maps the segment, loads the UDF libraries,
// creates the instance and runs Init; Proc wraps the inputs over the
// segment and runs Proc; Reset and Stop as their names say. Release is
// handled at once on the main thread, so a Proc waiting for segment memory
// sees the host give it back.
//
// Thread-safety: Run owns the process; the executor thread is the only one
// that touches the instance.
#ifndef HFLOW_WORKER_WORKER_SERVER_H_
#define HFLOW_WORKER_WORKER_SERVER_H_

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "flow_func/instance.h"
#include "flow_func/mbuf_msg.h"
#include "rt/device_binding.h"
#include "worker/channel.h"
#include "worker/proto/worker.pb.h"
#include "worker/segment.h"

namespace hflow {
namespace worker {

class WorkerServer {
 public:
  // `heartbeat_ms` > 0: the main thread sends a Beat every fifth of it.
  WorkerServer(int control_fd, int heartbeat_ms)
      : channel_(control_fd), heartbeat_ms_(heartbeat_ms) {}
  // Serves until Stop or the host's end; returns the exit code.
  int Run();

 private:
  void ExecLoop();
  void Handle(const v1::HostMessage& m, int fd);
  v1::Done Load(const v1::Load& load, int fd);
  v1::ProcDone Proc(const v1::Proc& proc);
  v1::Done Reset();
  Status SetUp(const v1::Load& load, int fd);
  Status OutputOf(uint32_t index, std::shared_ptr<flow_func::MbufFlowMsg> msg);
  Status Wire(const services::MbufPtr& m, v1::Msg* out);
  services::MbufPtr Over(const v1::Msg& w, Status* s);
  void OnRelease(const v1::Release& r);
  // Adds the runtime's counters that changed since the last reply.
  void AddCounters(v1::WorkerMessage* reply);

  Channel channel_;
  const int heartbeat_ms_;
  // Work for the executor thread: a message and its passed descriptor.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<v1::HostMessage, int>> work_;
  bool host_gone_ = false;

  // Touched by the executor thread only, except lent_ (OnRelease).
  std::shared_ptr<rt::DeviceRuntime> runtime_;
  std::unique_ptr<rt::DeviceContexts> contexts_;
  std::unique_ptr<rt::ScopedDevice> bound_;
  int32_t device_ = -1;
  std::vector<int32_t> devices_;  // the runtime's (Load)
  std::map<int32_t, std::pair<uint64_t, uint64_t>> sent_;  // AddCounters
  std::shared_ptr<Segment> segment_;
  std::shared_ptr<SegmentArena> arena_;  // the worker's part
  uint64_t host_bytes_ = 0;
  std::unique_ptr<flow_func::Instance> instance_;
  bool in_proc_ = false;         // executor thread only
  std::thread::id exec_thread_;  // set before any request runs
  std::vector<std::pair<uint32_t, services::MbufPtr>> outputs_;
  // Host blocks of inputs whose last worker reference went.
  std::mutex released_mu_;
  std::vector<uint64_t> released_;
  // Worker blocks the host reads: offset -> one message per lending.
  std::mutex lent_mu_;
  std::multimap<uint64_t, services::MbufPtr> lent_;
};

}  // namespace worker
}  // namespace hflow

#endif  // HFLOW_WORKER_WORKER_SERVER_H_
