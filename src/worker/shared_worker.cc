// SharedWorker: see shared_worker.h.
//
// Thread-safety: see shared_worker.h. life_mu_ guards the current life,
// members_mu_ the members (emit_mu_, taken before it, is held over an
// emit's delivery); OnDeath runs on the dead worker's supervisor
// thread and holds members_mu_ while it asks the members what they were
// doing, so a member that leaves (its destructor) waits for it.
#include "worker/shared_worker.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "flow_func/flow_func_defines.h"

namespace hflow {
namespace worker {

void SharedWorker::Life::Lend(uint64_t offset,
                              std::shared_ptr<void> block) const {
  std::lock_guard<std::mutex> l(lent_mu);
  lent.emplace(offset, std::move(block));
}

bool SharedWorker::Life::Lent(uint64_t offset,
                              std::shared_ptr<const void>* block) const {
  std::lock_guard<std::mutex> l(lent_mu);
  auto it = lent.find(offset);
  if (it == lent.end()) return false;
  *block = it->second;  // may hold a message with a null pointer: no test
  return true;
}

// The lendings are the life's, not a member's: a block passed from one
// member to the next is lent by each (Note [Releases per slot] in
// worker_data.cc).
void SharedWorker::Life::Released(const v1::ProcDone& done) const {
  for (uint64_t off : done.released()) Unlend(off);
}

void SharedWorker::Life::Unlend(uint64_t offset) const {
  std::lock_guard<std::mutex> l(lent_mu);
  auto it = lent.find(offset);
  if (it != lent.end()) lent.erase(it);
}

// The reply ring (Note [Replies in the segment] in worker_server.cc), when
// the host's part of the segment has room to spare for it (a sixteenth at
// most) and $HFLOW_WORKER_RING is not 0. $HFLOW_WORKER_RING_BYTES (a power
// of two from 64 to 1 MiB), a test hook, sizes it and every request ring
// (small rings send what they cannot take on the socket).
uint64_t SharedWorker::RingBytes(uint64_t host_bytes, uint64_t fallback) {
  const char* env = std::getenv("HFLOW_WORKER_RING");
  if (env != nullptr && std::string(env) == "0") return 0;
  if (ControlBytes(kReplyRingBytes) * 16 > host_bytes) return 0;
  const char* size = std::getenv("HFLOW_WORKER_RING_BYTES");
  const uint64_t v = size == nullptr ? 0 : std::strtoull(size, nullptr, 10);
  return v >= 64 && v <= (1u << 20) && (v & (v - 1)) == 0 ? v : fallback;
}

SharedWorker::SharedWorker(RemoteConfig config, int32_t device)
    : config_(std::move(config)),
      device_(device),
      host_bytes_(config_.segment_bytes / 2),
      ring_bytes_(RingBytes(config_.segment_bytes / 2, kReplyRingBytes)),
      request_ring_bytes_(
          RingBytes(config_.segment_bytes / 2, kRequestRingBytes)),
      emitter_("dev" + std::to_string(device), config_.contexts, device) {
  restarts_left_.store(std::max(0, config_.max_restarts));
}

Status SharedWorker::Create(RemoteConfig config, int32_t device,
                            std::shared_ptr<SharedWorker>* out) {
  out->reset(new SharedWorker(std::move(config), device));
  return Status::OK();
}

Status SharedWorker::Start() {
  std::lock_guard<std::mutex> l(revive_mu_);
  if (Current()) return Status::OK();
  return Launch(1);
}

// Half the stop timeout for the worker's own Stop (the destructors of
// instances not unloaded yet), so that killing it still fits in the
// undeploy's wait.
SharedWorker::~SharedWorker() {
  std::shared_ptr<const Life> p = Current();
  if (!p || !p->process) return;
  const int32_t t = config_.stop_timeout_ms;
  (void)p->process->Stop(t < 0 ? -1 : t / 2);
  Retire(*p);  // after Stop: its reply reports the destructors' work
}

std::shared_ptr<const SharedWorker::Life> SharedWorker::Current() const {
  std::lock_guard<std::mutex> l(life_mu_);
  return life_;
}

Status SharedWorker::Launch(uint64_t number) {
  auto p = std::make_shared<Life>();
  p->number = number;
  std::string prefix;
  std::string what;
  std::string tag = "dev" + std::to_string(device_);
  {
    std::lock_guard<std::mutex> l(members_mu_);
    what = Label(&prefix);
    if (members_.size() == 1) tag = members_[0].first->Node().substr(0, 12);
  }
  if (host_bytes_ < 2 * ControlBytes(ring_bytes_)) {
    return Status::InvalidArgument(
        what + ": a worker's segment of " +
        std::to_string(config_.segment_bytes) +
        " bytes leaves no room for its inputs; raise Options::mbuf_pool_bytes");
  }
  // The name labels the mapping in /proc/<pid>/maps.
  HFLOW_RETURN_IF_ERROR(
      Segment::Create("hflow-device" + std::to_string(device_),
                      config_.segment_bytes, &p->segment));
  if (config_.contexts) {
    rt::DeviceRuntime* rt = config_.contexts->runtime();
    HFLOW_RETURN_IF_ERROR(
        rt->HostRegister(p->segment->base(), p->segment->bytes())
            .WithContext(what + ": registering its worker's segment: "));
    p->segment->SetOnUnmap(
        [contexts = config_.contexts, base = p->segment->base()] {
          (void)contexts->runtime()->HostUnregister(base);
        });
  }
  p->arena = std::make_shared<SegmentArena>(
      p->segment, ControlBytes(ring_bytes_), host_bytes_);
  WorkerSpec spec;
  spec.binary = config_.binary;
  spec.launcher = config_.launcher;
  spec.what = what;
  spec.prefix = prefix;
  spec.tag = tag;
  spec.heartbeat_ms = config_.heartbeat_ms;
  spec.segment = p->segment;
  spec.ring_bytes = ring_bytes_;
  spec.on_death = [this, r = p->restartable](const Status& death) {
    OnDeath(r, death);
  };
  // Planned kills too (a timeout, a stop, Discard): nothing will give host
  // blocks back any more, so no Proc waits for them.
  spec.on_end = [arena = p->arena] { arena->Cancel(); };
  spec.on_emit = [this, life = std::weak_ptr<const Life>(p)](
                     v1::WorkerMessage m) { PostEmit(life, std::move(m)); };
  HFLOW_RETURN_IF_ERROR(WorkerProcess::Start(std::move(spec), &p->process));
  if (config_.counters) {
    p->counters_id =
        config_.counters->Add([w = std::weak_ptr<WorkerProcess>(p->process)] {
          rt::ForeignCounters::PerDevice out;
          if (auto worker = w.lock()) {
            for (const auto& [d, c] : worker->counters()) {
              out[d] = {c.contexts_created(), c.implicit_bindings()};
            }
          }
          return out;
        });
  }
  bool cancelled = false;
  {
    std::lock_guard<std::mutex> l(life_mu_);
    cancelled = cancelled_;
    if (cancelled) p->process->Kill();  // Cancel came while it started
    life_ = std::move(p);
  }
  Relabel();  // members that joined while it started
  if (cancelled) {
    return Status::Cancelled("the worker of " + what +
                             " was started during a stop that ended it");
  }
  return Status::OK();
}

void SharedWorker::Retire(const Life& life) {
  if (config_.counters && life.counters_id != 0) {
    config_.counters->Retire(life.counters_id);
  }
}

uint32_t SharedWorker::Join(SeatMember* m) {
  uint32_t slot = 0;
  {
    std::lock_guard<std::mutex> l(members_mu_);
    slot = next_slot_++;
    members_.emplace_back(m, slot);
  }
  Relabel();
  return slot;
}

void SharedWorker::Leave(SeatMember* m) {
  {
    std::lock_guard<std::mutex> l(members_mu_);
    members_.erase(std::remove_if(members_.begin(), members_.end(),
                                  [m](const auto& e) { return e.first == m; }),
                   members_.end());
  }
  // An emit being delivered to it ends first; none reaches it after.
  { std::lock_guard<std::mutex> e(emit_mu_); }
  Relabel();
}

// An Emit that goes undelivered leaves its worker block to the worker
// (a delivered one is the message's, released with it).
void SharedWorker::PostEmit(const std::weak_ptr<const Life>& life,
                            v1::WorkerMessage msg) {
  auto m = std::make_shared<v1::WorkerMessage>(std::move(msg));
  emitter_.Post([this, life, m](bool cancelled) {
    std::shared_ptr<const Life> p = life.lock();
    if (!p) return;  // its worker is gone, and the waiting UDF with it
    const v1::Emit& e = m->emit();
    int32_t rc = FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;
    if (!cancelled) rc = Deliver(*p, e);
    if (cancelled && e.msg().offset() >= host_bytes_) {
      v1::HostMessage back;
      back.mutable_release()->add_offsets(e.msg().offset());
      p->process->Send(back);
    }
    v1::HostMessage done;
    done.set_id(m->id());
    done.mutable_emit_done()->set_rc(rc);
    p->process->Send(done);
  });
}

int32_t SharedWorker::Deliver(const Life& life, const v1::Emit& emit) {
  std::lock_guard<std::mutex> e(emit_mu_);
  SeatMember* member = nullptr;
  {
    std::lock_guard<std::mutex> l(members_mu_);
    for (const auto& [m, slot] : members_) {
      if (slot == emit.slot()) member = m;
    }
  }
  if (member != nullptr) return member->Emitted(life, emit);
  // Its instance left (unloaded): nothing takes the output.
  if (emit.msg().offset() >= host_bytes_) {
    v1::HostMessage back;
    back.mutable_release()->add_offsets(emit.msg().offset());
    life.process->Send(back);
  }
  return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;
}

void SharedWorker::Relabel() {
  std::string prefix;
  std::string what;
  {
    std::lock_guard<std::mutex> l(members_mu_);
    what = Label(&prefix);
  }
  if (auto p = Current()) p->process->SetLabel(std::move(what), prefix);
}

// One member: named as an instance of its own ("node 'n' (replica 0) on
// device 3", "[worker n@device3] "), as a heavy_load worker always is;
// several: their nodes, the first three in the prefix.
std::string SharedWorker::Label(std::string* prefix) const {
  const std::string dev = "device " + std::to_string(device_);
  if (members_.empty()) {
    *prefix = "[worker@device" + std::to_string(device_) + "] ";
    return dev;
  }
  if (members_.size() == 1) {
    *prefix = "[worker " + members_[0].first->Node() + "@device" +
              std::to_string(device_) + "] ";
    return members_[0].first->Name() + " on " + dev;
  }
  // Sorted: the members join in whatever order the deploy threads run.
  std::vector<std::pair<std::string, std::string>> sorted;  // name, node
  for (const auto& [m, slot] : members_) {
    std::string name = m->Name();  // "node 'n' (replica r)": one "nodes"
    if (name.rfind("node ", 0) == 0) name.erase(0, 5);
    sorted.emplace_back(std::move(name), m->Node());
  }
  std::sort(sorted.begin(), sorted.end());
  std::string names;
  std::string short_names;
  std::set<std::string> seen;
  for (const auto& [name, node] : sorted) {
    names += (names.empty() ? "nodes " : ", ") + name;
    if (seen.insert(node).second && seen.size() <= 3) {
      short_names += (short_names.empty() ? "" : ",") + node;
    }
  }
  if (seen.size() > 3) short_names += ",+" + std::to_string(seen.size() - 3);
  *prefix =
      "[worker " + short_names + "@device" + std::to_string(device_) + "] ";
  return names + " on " + dev;
}

Status SharedWorker::Revive(const rt::ScopedDevice& bound, uint64_t dead) {
  HFLOW_RETURN_IF_ERROR(bound.Require(device_));
  std::lock_guard<std::mutex> l(revive_mu_);
  std::shared_ptr<const Life> now = Current();
  if (!now) return Launch(1);
  if (now->number != dead || now->process->alive()) return Status::OK();
  Retire(*now);
  return Launch(now->number + 1);
}

bool SharedWorker::cancelled() const {
  std::lock_guard<std::mutex> l(life_mu_);
  return cancelled_;
}

void SharedWorker::Discard() {
  if (auto p = Current()) p->process->Kill();
}

void SharedWorker::Cancel() {
  std::shared_ptr<const Life> p;
  {
    std::lock_guard<std::mutex> l(life_mu_);
    cancelled_ = true;  // a Launch installing after this kills its own
    p = life_;
  }
  if (p) {
    p->arena->Cancel();  // a Proc waiting for segment memory
    p->process->Kill();
  }
}

// "after N restart(s)" counts from here on.
void SharedWorker::GiveBackRestarts() {
  {
    std::lock_guard<std::mutex> l(life_mu_);
    cancelled_ = false;
  }
  restarts_left_.store(std::max(0, config_.max_restarts));
  restarts_.store(0);
}

// The restart is reserved here, once per death, before the death is
// marked: every member that then finds the life dead reads the same
// answer (Life::Restartable), whoever revives it.
void SharedWorker::OnDeath(
    const std::shared_ptr<std::atomic<bool>>& restartable,
    const Status& death) {
  std::string msg = death.message();
  {
    std::lock_guard<std::mutex> l(members_mu_);
    if (members_.size() <= 1) {
      msg += members_.empty() ? " between calls"
                              : " " + members_[0].first->Doing();
    } else {
      std::string busy;
      for (const auto& [m, slot] : members_) {
        if (!m->Busy()) continue;
        busy += (busy.empty() ? "" : "; ") + m->CallReport();
      }
      msg += busy.empty() ? " between calls" : ": " + busy;
    }
  }
  int32_t left = restarts_left_.load();
  while (left > 0 && !restarts_left_.compare_exchange_weak(left, left - 1)) {
  }
  if (left > 0) {
    restarts_.fetch_add(1);
    restartable->store(true);
    const std::string line =
        "hflow: " + msg + "; it is started again at its next call (" +
        std::to_string(left - 1) +
        " restart(s) left after it, Options::max_worker_restarts)\n";
    (void)!write(STDERR_FILENO, line.data(), line.size());
    return;
  }
  const int32_t used = restarts_.load();
  if (!config_.on_death) return;
  config_.on_death(
      used == 0 ? Status(death.code(), msg)
                : Status(death.code(), msg + " (after " + std::to_string(used) +
                                           " restart(s): "
                                           "Options::max_worker_restarts)"));
}

}  // namespace worker
}  // namespace hflow
