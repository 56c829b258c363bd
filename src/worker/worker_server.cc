// WorkerServer's control half (worker_server.h): the main thread's reading
// and dispatch, the slots' executor threads, Load, Reset, Unload, Stop and
// the counters every reply carries. The data half (Proc, the blocks) is in
// worker_data.cc.
//
// Thread-safety: see worker_server.h.
#include "worker/worker_server.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

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

}  // namespace

void WorkerServer::Exit(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  _exit(code);
}

int WorkerServer::Run() {
  util::SetCurrentThreadName("hflow-worker");
  v1::WorkerMessage hello;
  hello.mutable_hello()->set_protocol_version(kProtocolVersion);
  hello.mutable_hello()->set_pid(getpid());
  if (!channel_.Send(hello).ok()) return 1;
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
    Dispatch(std::move(m), fd);
  }
}

void WorkerServer::Dispatch(v1::HostMessage m, int fd) {
  if (m.has_batch()) {  // Procs and Releases only: never a descriptor
    if (fd >= 0) close(fd);
    for (v1::HostMessage& one : *m.mutable_batch()->mutable_msgs()) {
      if (one.has_proc() || one.has_release()) Dispatch(std::move(one), -1);
    }
    return;
  }
  if (m.has_release()) {
    if (fd >= 0) close(fd);
    OnRelease(m.release());
    return;
  }
  if (m.has_emit_done()) {
    if (fd >= 0) close(fd);
    OnEmitDone(m.id(), m.emit_done().rc());
    return;
  }
  if (m.has_stop()) {
    if (fd >= 0) close(fd);
    // On a thread of its own: this one goes on beating (and taking
    // Releases) while the destructors run, so a slow one is not taken for
    // a hung worker.
    std::vector<Slot*> slots;
    for (auto& [id, slot] : slots_) slots.push_back(slot.get());
    std::thread([this, m, slots] {
      util::SetCurrentThreadName("wk-stop");
      StopAll(m, slots);  // does not return
    }).detach();
    return;
  }
  if (m.has_load()) {
    Status s = Open(m.load(), fd);
    if (!s.ok()) {
      v1::WorkerMessage reply;
      reply.set_id(m.id());
      *reply.mutable_done() = ToDone(s);
      Reply(&reply);
      return;
    }
  } else if (fd >= 0) {
    close(fd);
  }
  auto it = slots_.find(m.slot());
  if (it == slots_.end()) {
    if (!m.has_load()) {
      v1::WorkerMessage reply;
      reply.set_id(m.id());
      *reply.mutable_done() = ToDone(Status::FailedPrecondition(
          "worker: nothing loaded in slot " + std::to_string(m.slot())));
      Reply(&reply);
      return;
    }
    auto slot = std::make_unique<Slot>();
    slot->id = m.slot();
    Slot* raw = slot.get();
    std::thread([this, raw] { ExecLoop(raw); }).detach();  // ends with _exit
    std::lock_guard<std::mutex> l(slots_mu_);
    it = slots_.emplace(m.slot(), std::move(slot)).first;
  }
  Post(it->second.get(), std::move(m));
}

// Every instance still loaded is destroyed on its own thread (bound, as
// its Init was), then the reply goes and the process ends. A slot stuck
// in a Proc never finishes: the host's Stop times out and kills.
void WorkerServer::StopAll(const v1::HostMessage& m,
                           const std::vector<Slot*>& slots) {
  for (Slot* slot : slots) {
    v1::HostMessage unload;  // id 0: no reply
    unload.mutable_unload();
    Post(slot, std::move(unload));
    std::unique_lock<std::mutex> l(slot->mu);
    slot->cv.wait(l, [&] { return slot->unloaded; });
  }
  v1::WorkerMessage reply;
  reply.set_id(m.id());
  reply.mutable_done();
  Reply(&reply);
  Exit(0);
}

void WorkerServer::Handle(Slot* slot, const v1::HostMessage& m, int fd) {
  if (fd >= 0) close(fd);
  v1::WorkerMessage reply;
  reply.set_id(m.id());
  if (m.has_load()) {
    *reply.mutable_done() = Load(slot, m.load());
  } else if (m.has_proc()) {
    *reply.mutable_proc_done() = Proc(slot, m.proc());
  } else if (m.has_reset()) {
    *reply.mutable_done() = Reset(slot);
  } else if (m.has_unload()) {
    *reply.mutable_done() = Unload(slot);
    if (m.id() == 0) return;  // StopAll's
  } else if (m.has_links()) {
    *reply.mutable_done() = SetLinks(slot, m.links().links());
  } else {
    *reply.mutable_done() =
        ToDone(Status::InvalidArgument("worker: an unknown request"));
  }
  Reply(&reply, slot, m.has_proc() && m.proc().quiet());
}

void WorkerServer::AddCounters(v1::WorkerMessage* reply) {
  if (!runtime_) return;
  std::lock_guard<std::mutex> l(counters_mu_);
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

// The first Load's segment and runtime serve every later Load, which must
// describe the same (a worker serves one device's instances); its passed
// descriptor is closed either way.
Status WorkerServer::Open(const v1::Load& load, int fd) {
  if (open_tried_) {
    if (fd >= 0) close(fd);
    HFLOW_RETURN_IF_ERROR(opened_);
    if (load.segment_bytes() != segment_bytes_ ||
        load.host_bytes() != host_bytes_) {
      return Status::InvalidArgument(
          "worker: a Load for another segment than the first Load's");
    }
    return Status::OK();
  }
  open_tried_ = true;
  opened_ = [&]() -> Status {
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
          "worker: the segment is smaller than Load says");
    }
    HFLOW_RETURN_IF_ERROR(Segment::Map(fd, load.segment_bytes(), &segment_));
    host_bytes_ = load.host_bytes();
    segment_bytes_ = load.segment_bytes();
    const uint64_t ring = load.reply_ring_bytes();
    if (ring != 0) {
      if (ring < 64 || (ring & (ring - 1)) != 0 ||
          ControlBytes(ring) > host_bytes_) {
        return Status::InvalidArgument(
            "worker: a reply ring of " + std::to_string(ring) +
            " bytes (a power of two from 64, within the host's part)");
      }
      ring_ =
          std::make_unique<ShmRing>(segment_->base() + kCallPageBytes, ring);
    }
    arena_ = std::make_shared<SegmentArena>(segment_, host_bytes_,
                                            load.segment_bytes());
    // The worker's own runtime, as the host's: the same devices and
    // default device, so binding (and its mistakes) behave as there.
    rt::RuntimeOptions ro;
    ro.cluster = MakeLocalCluster(std::vector<int32_t>(
        load.runtime_devices().begin(), load.runtime_devices().end()));
    ro.default_device = load.default_device();
    ro.ctxcheck = load.ctxcheck();
    std::shared_ptr<rt::DeviceRuntime> runtime;
    HFLOW_RETURN_IF_ERROR(
        rt::InitializeRuntime(ro, &runtime).WithContext("worker: runtime: "));
    ArmFault(runtime.get());
    devices_.assign(load.runtime_devices().begin(),
                    load.runtime_devices().end());
    contexts_ = std::make_unique<rt::DeviceContexts>(runtime);
    runtime_ = std::move(runtime);
    return Status::OK();
  }();
  return opened_;
}

v1::Done WorkerServer::Load(Slot* slot, const v1::Load& load) {
  if (slot->instance) {
    return ToDone(Status::FailedPrecondition(
        "worker: slot " + std::to_string(slot->id) + " is already loaded"));
  }
  std::lock_guard<std::mutex> call(slot->call_mu);
  slot->error_tag = load.error_tag();
  slot->output_num = load.output_num();
  slot->links.assign(load.links().begin(), load.links().end());
  Status s = SetUp(slot, load);
  if (s.ok()) s = slot->instance->Init(*slot->bound);
  if (s.ok()) s = OpenRequests(slot, load);
  // An instance whose Init failed is not kept (its destructors run now,
  // bound), so the slot can be loaded again.
  if (!s.ok()) slot->instance.reset();
  return ToDone(s);
}

Status WorkerServer::SetUp(Slot* slot, const v1::Load& load) {
  if (!slot->bound || slot->device != load.device()) {
    slot->device = load.device();
    slot->bound = std::make_unique<rt::ScopedDevice>(
        contexts_.get(), slot->device, rt::ScopedDevice::OnExit::kKeep);
  }
  HFLOW_RETURN_IF_ERROR(slot->bound->status().WithContext("worker: "));
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
    if (!w.python().empty()) HFLOW_RETURN_IF_ERROR(LoadPayload(w));
    funcs.push_back(std::move(f));
  }
  flow_func::InstanceEnv env;
  env.node = load.node();
  env.work_path = load.work_path();
  env.device = slot->device;
  env.instance_id = load.instance_id();
  env.instance_num = load.instance_num();
  env.input_num = load.input_num();
  env.output_num = load.output_num();
  env.balance = static_cast<flow_func::BalanceKind>(load.balance());
  HFLOW_RETURN_IF_ERROR(AttrsFromWire(load.attrs(), &env.attrs));
  auto arena = arena_;
  const int32_t device = slot->device;
  env.allocator = std::make_shared<flow_func::MsgAllocator>(
      [this, arena, device](uint64_t bytes, int32_t wait_ms,
                            services::MbufPtr* out) -> Status {
        uint64_t at = 0;
        HFLOW_RETURN_IF_ERROR(arena->Take(bytes, wait_ms, &at));
        *out = BlockAt(device, at, bytes);
        return Status::OK();
      },
      device,
      flow_func::MsgLimits{load.node(), load.max_message_bytes(),
                           load.alloc_timeout_ms()});
  // Exception catch across the two processes: raises travel back with the
  // Proc's reply; GetException answers what the host saw at its start.
  env.raise = [slot](int32_t code, uint64_t user_context_id) {
    if (!slot->in_proc || std::this_thread::get_id() != slot->caller.load()) {
      std::fprintf(stderr,
                   "hflow-worker: an isolated UDF's RaiseException outside "
                   "Proc is not delivered; raise it from Proc\n");
      return;
    }
    v1::Raised r;
    r.set_code(code);
    r.set_user_context_id(user_context_id);
    slot->raised.push_back(std::move(r));
  };
  env.get_exception = [slot](int32_t* code, uint64_t* user_context_id) {
    if (!slot->has_pending) return false;
    *code = slot->pending.code();
    *user_context_id = slot->pending.user_context_id();
    return true;
  };
  env.output = [this, slot](
                   uint32_t index,
                   std::shared_ptr<flow_func::MbufFlowMsg> msg) -> int32_t {
    if (!slot->in_proc || std::this_thread::get_id() != slot->caller.load()) {
      return EmitOutside(slot, index, std::move(msg));
    }
    slot->outputs.emplace_back(index, msg->mbuf());
    return FLOW_FUNC_SUCCESS;
  };
  std::unique_ptr<flow_func::UdfInstance> udf;
  HFLOW_RETURN_IF_ERROR(
      flow_func::UdfInstance::Create(std::move(funcs), std::move(env), &udf));
  slot->instance = std::move(udf);
  return Status::OK();
}

Status WorkerServer::LoadPayload(const v1::FuncDesc& f) {
  std::lock_guard<std::mutex> l(payload_mu_);
  if (payloads_.count(f.python())) return Status::OK();
  if (!loader_) {
    return Status::FailedPrecondition(
        "worker: function '" + f.name() +
        "' was registered by the host program (a Python UDF), and this "
        "worker has no loader for it");
  }
  HFLOW_RETURN_IF_ERROR(
      loader_(f.python())
          .WithContext("worker: registering function '" + f.name() + "': "));
  payloads_.insert(f.python());
  return Status::OK();
}

int ServeWorker(int control_fd, long parent_pid, int heartbeat_ms,
                PayloadLoader loader) {
  // Die with the host, even when it is killed with SIGKILL; a host that
  // died before this line is seen as a new parent.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != static_cast<pid_t>(parent_pid)) return 1;
  // Programs a UDF starts must not hold the control socket open: the host
  // sees this worker's death as the socket closing.
  fcntl(control_fd, F_SETFD, FD_CLOEXEC);
  WorkerServer server(control_fd, heartbeat_ms, std::move(loader));
  return server.Run();
}

// The user's destructors run bound, on the thread that ran the instance.
v1::Done WorkerServer::Unload(Slot* slot) {
  if (slot->bound && !slot->bound->Current()) (void)slot->bound->Reassert();
  {
    std::lock_guard<std::mutex> call(slot->call_mu);
    slot->instance.reset();
  }
  {
    // The ring's block goes back to the host after this reply.
    std::lock_guard<std::mutex> l(slot->mu);
    slot->requests.reset();
    slot->replies.reset();
  }
  std::lock_guard<std::mutex> l(slot->mu);
  slot->unloaded = true;
  slot->cv.notify_all();
  return ToDone(Status::OK());
}

v1::Done WorkerServer::Reset(Slot* slot) {
  if (!slot->instance) {
    return ToDone(Status::FailedPrecondition("worker: nothing loaded"));
  }
  if (!slot->bound->Current()) (void)slot->bound->Reassert();
  std::lock_guard<std::mutex> call(slot->call_mu);
  bool recreated = false;
  v1::Done d = ToDone(slot->instance->ResetState(*slot->bound, &recreated));
  d.set_recreated(recreated);
  return d;
}

}  // namespace worker
}  // namespace hflow
