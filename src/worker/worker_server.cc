// WorkerServer: see worker_server.h.
//
// Thread-safety: see worker_server.h. mu_ guards the work queue,
// released_mu_ the released host blocks (input messages die on any
// thread a UDF keeps them on), lent_mu_ the blocks lent to the host.
#include "worker/worker_server.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "flow_func/flow_func_defines.h"
#include "flow_func/udf_instance.h"
#include "flow_func/udf_library.h"
#include "hflow/cluster.h"
#include "hflow/rt.h"
#include "rt/sim/sim_runtime.h"
#include "util/thread_name.h"
#include "worker/wire.h"

namespace hflow {
namespace worker {

namespace {

using FlowFunc::FLOW_FUNC_FAILED;
using FlowFunc::FLOW_FUNC_SUCCESS;

v1::Done ToDone(const Status& s) {
  v1::Done d;
  d.set_code(static_cast<int32_t>(s.code()));
  d.set_message(s.message());
  return d;
}

// Note [One end per hold]
// Each hold on a block (WorkerBlock, HostHold here; Loan, HostBlock in
// remote_instance.cc) acts in its destructor: it gives the block back or
// tells the other side. So a hold is made in place by make_shared and
// never copied: a temporary moved into make_shared would act once as it
// dies, freeing a block still in use (a later message would overwrite
// it).

// A worker block: back to the worker's part when its last message goes.
struct WorkerBlock {
  WorkerBlock(std::shared_ptr<SegmentArena> a, uint64_t off, uint64_t n)
      : arena(std::move(a)), offset(off), bytes(n) {}
  WorkerBlock(const WorkerBlock&) = delete;
  WorkerBlock& operator=(const WorkerBlock&) = delete;
  std::shared_ptr<SegmentArena> arena;
  uint64_t offset;
  uint64_t bytes;
  ~WorkerBlock() { arena->Give(offset, bytes); }
};

// The worker's hold on a host block: its end is reported to the host.
struct HostHold {
  HostHold(std::mutex* m, std::vector<uint64_t>* r, std::shared_ptr<Segment> s,
           uint64_t off)
      : mu(m), released(r), segment(std::move(s)), offset(off) {}
  HostHold(const HostHold&) = delete;
  HostHold& operator=(const HostHold&) = delete;
  std::mutex* mu;
  std::vector<uint64_t>* released;
  std::shared_ptr<Segment> segment;  // mapped while the message lives
  uint64_t offset;
  ~HostHold() {
    std::lock_guard<std::mutex> l(*mu);
    released->push_back(offset);
  }
};

// Note [Faults in a worker]
// The host's tests fail the k-th call of the host's sim runtime
// (SimRuntime::InjectFault); a worker's runtime is out of their reach, so
// HFLOW_WORKER_FAULT=k, inherited from the host's environment, fails the
// k-th faultable call of every worker's runtime counted from its creation
// (the binding of its device, then what its UDF does) with kInternal. A
// test hook: the fault sweep's isolated mode (tests/worker_fault_test.cc).
void ArmFault(rt::DeviceRuntime* runtime) {
  const char* v = std::getenv("HFLOW_WORKER_FAULT");
  if (v == nullptr || *v == '\0') return;
  char* end = nullptr;
  const unsigned long long k = std::strtoull(v, &end, 10);
  auto* sim = dynamic_cast<rt::SimRuntime*>(runtime);
  if (*end != '\0' || k == 0 || sim == nullptr) {
    std::fprintf(stderr,
                 "hflow-worker: HFLOW_WORKER_FAULT='%s' is not a call number "
                 "(1, 2, ...) for the sim runtime; ignored\n",
                 v);
    return;
  }
  sim->InjectFault(rt::kAnyOp, k,
                   Status::Internal("a fault injected into the worker's "
                                    "runtime (HFLOW_WORKER_FAULT=" +
                                    std::string(v) + ")"));
}

[[noreturn]] void Exit(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

}  // namespace

int WorkerServer::Run() {
  util::SetCurrentThreadName("hflow-worker");
  v1::WorkerMessage hello;
  hello.mutable_hello()->set_protocol_version(kProtocolVersion);
  hello.mutable_hello()->set_pid(getpid());
  if (!channel_.Send(hello).ok()) return 1;
  std::thread exec([this] { ExecLoop(); });
  exec.detach();  // the process ends with _exit, wherever it is
  // Beats come from this thread, which a UDF never holds: a Proc that
  // runs long is still a worker that answers.
  const int beat_ms = heartbeat_ms_ > 0 ? std::max(1, heartbeat_ms_ / 5) : -1;
  auto last_beat = std::chrono::steady_clock::now();
  for (;;) {
    v1::HostMessage m;
    int fd = -1;
    const Status got = channel_.Recv(&m, beat_ms, &fd);
    const auto now = std::chrono::steady_clock::now();
    if (beat_ms > 0 && now - last_beat >= std::chrono::milliseconds(beat_ms)) {
      v1::WorkerMessage beat;
      beat.mutable_beat();
      (void)channel_.TrySend(beat);  // a full socket: the host is reading
      last_beat = now;
    }
    if (got.IsTimeout()) continue;
    if (!got.ok()) {
      // The host is gone (or shut the channel to end this worker): nobody
      // can use what runs here any more.
      Exit(0);
    }
    if (m.has_release()) {
      if (fd >= 0) close(fd);
      OnRelease(m.release());
      continue;
    }
    std::lock_guard<std::mutex> l(mu_);
    work_.emplace_back(std::move(m), fd);
    cv_.notify_one();
  }
}

void WorkerServer::ExecLoop() {
  util::SetCurrentThreadName("wk-exec");
  exec_thread_ = std::this_thread::get_id();
  for (;;) {
    std::pair<v1::HostMessage, int> item;
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait(l, [&] { return !work_.empty(); });
      item = std::move(work_.front());
      work_.pop_front();
    }
    Handle(item.first, item.second);
  }
}

void WorkerServer::Handle(const v1::HostMessage& m, int fd) {
  v1::WorkerMessage reply;
  reply.set_id(m.id());
  if (m.has_load()) {
    *reply.mutable_done() = Load(m.load(), fd);
  } else if (m.has_proc()) {
    *reply.mutable_proc_done() = Proc(m.proc());
  } else if (m.has_reset()) {
    *reply.mutable_done() = Reset();
  } else if (m.has_stop()) {
    instance_.reset();  // user destructors, bound to the device
    AddCounters(&reply);
    (void)channel_.Send(reply);
    Exit(0);
  } else {
    *reply.mutable_done() =
        ToDone(Status::InvalidArgument("worker: an unknown request"));
  }
  if (fd >= 0 && !m.has_load()) close(fd);
  AddCounters(&reply);
  Status sent = channel_.Send(reply);
  if (!sent.ok()) {
    // The host waits for this reply: a death it sees beats a silence.
    std::fprintf(stderr, "hflow-worker: cannot reply (%s); exiting\n",
                 sent.ToString().c_str());
    Exit(3);
  }
}

void WorkerServer::AddCounters(v1::WorkerMessage* reply) {
  if (!runtime_) return;
  for (int32_t d : devices_) {
    rt::DeviceStats st;
    if (!runtime_->GetDeviceStats(d, &st).ok()) continue;
    const std::pair<uint64_t, uint64_t> now{st.contexts_created,
                                            st.implicit_bindings};
    auto it = sent_.find(d);
    if (it != sent_.end() && it->second == now) continue;
    sent_[d] = now;
    v1::DeviceCounters* c = reply->add_counters();
    c->set_device(d);
    c->set_contexts_created(now.first);
    c->set_implicit_bindings(now.second);
  }
}

v1::Done WorkerServer::Load(const v1::Load& load, int fd) {
  if (instance_) {
    if (fd >= 0) close(fd);
    return ToDone(Status::FailedPrecondition("worker: already loaded"));
  }
  Status s = SetUp(load, fd);
  if (s.ok()) s = instance_->Init(*bound_);
  return ToDone(s);
}

Status WorkerServer::SetUp(const v1::Load& load, int fd) {
  if (fd < 0) {
    return Status::InvalidArgument("worker: Load came without its segment");
  }
  if (load.host_bytes() >= load.segment_bytes()) {
    close(fd);
    return Status::InvalidArgument("worker: a segment without a worker part");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || uint64_t(st.st_size) < load.segment_bytes()) {
    close(fd);
    return Status::InvalidArgument(
        "worker: the segment is smaller than Load "
        "says");
  }
  HFLOW_RETURN_IF_ERROR(Segment::Map(fd, load.segment_bytes(), &segment_));
  host_bytes_ = load.host_bytes();
  arena_ = std::make_shared<SegmentArena>(segment_, host_bytes_,
                                          load.segment_bytes());
  // The worker's own runtime, as the host's: the same devices and default
  // device, so binding (and its mistakes) behave as they would there.
  rt::RuntimeOptions ro;
  ro.cluster = MakeLocalCluster(std::vector<int32_t>(
      load.runtime_devices().begin(), load.runtime_devices().end()));
  ro.default_device = load.default_device();
  HFLOW_RETURN_IF_ERROR(
      rt::InitializeRuntime(ro, &runtime_).WithContext("worker: runtime: "));
  ArmFault(runtime_.get());
  devices_.assign(load.runtime_devices().begin(), load.runtime_devices().end());
  device_ = load.device();
  contexts_ = std::make_unique<rt::DeviceContexts>(runtime_);
  bound_ = std::make_unique<rt::ScopedDevice>(contexts_.get(), device_,
                                              rt::ScopedDevice::OnExit::kKeep);
  HFLOW_RETURN_IF_ERROR(bound_->status().WithContext("worker: "));

  std::vector<flow_func::FuncDesc> funcs;
  for (const v1::FuncDesc& w : load.funcs()) {
    flow_func::FuncDesc f;
    f.name = w.name();
    f.inputs_index.assign(w.inputs_index().begin(), w.inputs_index().end());
    f.outputs_index.assign(w.outputs_index().begin(), w.outputs_index().end());
    f.library = w.library();
    if (!f.library.empty()) {
      HFLOW_RETURN_IF_ERROR(flow_func::LoadUdfLibrary(f.library));
    }
    funcs.push_back(std::move(f));
  }
  flow_func::InstanceEnv env;
  env.node = load.node();
  env.work_path = load.work_path();
  env.device = device_;
  env.instance_id = load.instance_id();
  env.instance_num = load.instance_num();
  env.input_num = load.input_num();
  env.output_num = load.output_num();
  env.balance = static_cast<flow_func::BalanceKind>(load.balance());
  HFLOW_RETURN_IF_ERROR(AttrsFromWire(load.attrs(), &env.attrs));
  auto arena = arena_;
  auto segment = segment_;
  const int32_t device = device_;
  env.allocator = std::make_shared<flow_func::MsgAllocator>(
      [arena, segment, device](uint64_t bytes, int32_t wait_ms,
                               services::MbufPtr* out) -> Status {
        uint64_t at = 0;
        HFLOW_RETURN_IF_ERROR(arena->Take(bytes, wait_ms, &at));
        auto block = std::make_shared<WorkerBlock>(arena, at, bytes);
        *out = services::MakeHostMbuf(device, segment->base() + at, bytes,
                                      std::move(block));
        return Status::OK();
      },
      device_,
      flow_func::MsgLimits{load.node(), load.max_message_bytes(),
                           load.alloc_timeout_ms()});
  env.output = [this](uint32_t index,
                      std::shared_ptr<flow_func::MbufFlowMsg> msg) -> int32_t {
    Status s = OutputOf(index, std::move(msg));
    if (s.ok()) return FLOW_FUNC_SUCCESS;
    std::fprintf(stderr, "hflow-worker: %s\n", s.ToString().c_str());
    return FLOW_FUNC_FAILED;
  };
  std::unique_ptr<flow_func::UdfInstance> udf;
  HFLOW_RETURN_IF_ERROR(
      flow_func::UdfInstance::Create(std::move(funcs), std::move(env), &udf));
  instance_ = std::move(udf);
  return Status::OK();
}

Status WorkerServer::OutputOf(uint32_t index,
                              std::shared_ptr<flow_func::MbufFlowMsg> msg) {
  if (!in_proc_ || std::this_thread::get_id() != exec_thread_) {
    return Status::NotSupported(
        "an isolated UDF's output outside Proc (in Init, or from a thread "
        "of its own) is not delivered; emit it from Proc, or run the node "
        "in the host");
  }
  outputs_.emplace_back(index, msg->mbuf());
  return Status::OK();
}

services::MbufPtr WorkerServer::Over(const v1::Msg& w, Status* s) {
  if (w.size() > segment_->bytes() ||
      w.offset() > segment_->bytes() - w.size()) {
    *s = Status::InvalidArgument("worker: an input outside the segment");
    return nullptr;
  }
  std::shared_ptr<const void> keep;
  if (w.offset() >= host_bytes_) {  // one of ours, lent to the host
    std::lock_guard<std::mutex> l(lent_mu_);
    auto it = lent_.find(w.offset());
    if (it == lent_.end()) {
      *s = Status::InvalidArgument("worker: an input in a block not lent");
      return nullptr;
    }
    keep = it->second;
  } else {
    keep = std::make_shared<HostHold>(&released_mu_, &released_, segment_,
                                      w.offset());
  }
  services::MbufPtr m = services::MakeHostMbuf(
      device_, segment_->base() + w.offset(), w.size(), std::move(keep));
  *s = HeadFromWire(w.head(), &m->head());
  return m;
}

Status WorkerServer::Wire(const services::MbufPtr& m, v1::Msg* out) {
  HeadToWire(m->head(), out->mutable_head());
  out->set_size(m->size());
  if (segment_->Contains(m->data(), m->size() == 0 ? 1 : m->size())) {
    out->set_offset(segment_->OffsetOf(m->data()));
    if (out->offset() >= host_bytes_) {
      std::lock_guard<std::mutex> l(lent_mu_);
      lent_.emplace(out->offset(), m);
    }
    return Status::OK();
  }
  // Not in the segment (a message the UDF got some other way): one copy.
  uint64_t at = 0;
  HFLOW_RETURN_IF_ERROR(arena_->Take(m->size(), 0, &at));
  if (m->size() > 0) std::memcpy(segment_->base() + at, m->data(), m->size());
  auto block = std::make_shared<WorkerBlock>(arena_, at, m->size());
  services::MbufPtr copy = services::MakeHostMbuf(
      device_, segment_->base() + at, m->size(), std::move(block));
  copy->head() = m->head();
  out->set_offset(at);
  std::lock_guard<std::mutex> l(lent_mu_);
  lent_.emplace(at, std::move(copy));
  return Status::OK();
}

v1::ProcDone WorkerServer::Proc(const v1::Proc& proc) {
  v1::ProcDone done;
  if (!instance_ || proc.func() >= instance_->funcs().size()) {
    done.set_rc(FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID);
    return done;
  }
  std::vector<std::shared_ptr<FlowFunc::FlowMsg>> msgs;
  for (int i = 0; i < proc.inputs_size(); ++i) {
    Status s;
    services::MbufPtr m = Over(proc.inputs(i), &s);
    if (!s.ok()) {
      std::fprintf(stderr, "hflow-worker: %s\n", s.ToString().c_str());
      done.set_rc(FLOW_FUNC_FAILED);
      msgs.clear();
      // The host lent every input: those not held here go back at once.
      std::lock_guard<std::mutex> l(released_mu_);
      for (int j = i; j < proc.inputs_size(); ++j) {
        if (proc.inputs(j).offset() < host_bytes_) {
          released_.push_back(proc.inputs(j).offset());
        }
      }
      break;
    }
    auto msg = flow_func::MbufFlowMsg::FromMbuf(std::move(m));
    msg->MarkShared();  // host consumers may read the same block
    msgs.push_back(std::move(msg));
  }
  if (done.rc() == 0) {
    if (!bound_->Current()) (void)bound_->Reassert();  // a UDF switched it
    in_proc_ = true;
    done.set_rc(instance_->Proc(*bound_, proc.func(), msgs, proc.trans()));
    in_proc_ = false;
  }
  msgs.clear();  // the inputs' holds end here unless the UDF kept them
  for (auto& [index, m] : outputs_) {
    Status s = Wire(m, done.add_outputs());
    if (!s.ok()) {
      std::fprintf(stderr, "hflow-worker: %s\n", s.ToString().c_str());
      done.mutable_outputs()->RemoveLast();
      done.set_rc(FLOW_FUNC_FAILED);
      continue;
    }
    done.add_output_index(index);
  }
  outputs_.clear();
  std::lock_guard<std::mutex> l(released_mu_);
  for (uint64_t off : released_) done.add_released(off);
  released_.clear();
  return done;
}

v1::Done WorkerServer::Reset() {
  if (!instance_) {
    return ToDone(Status::FailedPrecondition("worker: nothing loaded"));
  }
  if (!bound_->Current()) (void)bound_->Reassert();
  bool recreated = false;
  v1::Done d = ToDone(instance_->ResetState(*bound_, &recreated));
  d.set_recreated(recreated);
  return d;
}

void WorkerServer::OnRelease(const v1::Release& r) {
  std::lock_guard<std::mutex> l(lent_mu_);
  for (uint64_t off : r.offsets()) {
    auto it = lent_.find(off);
    if (it != lent_.end()) lent_.erase(it);
  }
}

}  // namespace worker
}  // namespace hflow
