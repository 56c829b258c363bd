// SimRuntime: construction, device lookup, instrumentation (faults, call
// log, latency), device loss and counters. Context operations live in
// sim_context.cc, memory operations in sim_memory.cc.
//
// Thread-safety: see sim_runtime.h.
#include "rt/sim/sim_runtime.h"

#include <algorithm>
#include <string>
#include <thread>

#include "rt/ctxcheck_user_call.h"
#include "rt/sim/sim_instrumented.h"
#include "rt/sim/sim_internal.h"
#include "util/thread_name.h"

namespace hflow {
namespace rt {
namespace {

uint64_t NextRuntimeUid() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

}  // namespace
SimRuntime::SimRuntime(SimOptions options)
    : DeviceRuntime(/*slot_backed=*/true),
      options_(std::move(options)),
      uid_(NextRuntimeUid()) {
  if (options_.default_device.has_value()) {
    if (*options_.default_device != kNoDefaultDevice) {
      default_device_ = options_.default_device;
    }
  } else {
    default_device_ = options_.cluster.ResolvedDefaultDevice();
  }
  std::vector<DeviceDesc> descs;
  for (const ClusterNode& node : options_.cluster.nodes) {
    if (node.is_local || options_.cluster.nodes.size() == 1) {
      descs = node.devices;
      break;
    }
  }
  std::sort(descs.begin(), descs.end(),
            [](const DeviceDesc& a, const DeviceDesc& b) {
              return a.device_id < b.device_id;
            });
  for (const DeviceDesc& d : descs) {
    auto dev = std::make_unique<SimDevice>();
    dev->id = d.device_id;
    dev->capacity = d.memory_bytes;
    devices_.push_back(std::move(dev));
    device_ids_.push_back(d.device_id);
  }
  if (options_.record_calls) SetRecordCalls(true);
  ctxcheck::Mode check = options_.ctxcheck.value_or(ctxcheck::EnvMode());
  if (check != ctxcheck::Mode::kOff) SetCtxCheck(check);
}

SimRuntime::~SimRuntime() {
  if (ctxcheck_.load() != ctxcheck::Mode::kOff) {
    ctxcheck::internal::SetRuntimeOn(this, false);
  }
  // Device memory the program leaked is still host memory: give it back.
  // Registered host memory is the caller's, never the sim's to free.
  for (auto& [addr, a] : allocs_) {
    if (a.device == kRegisteredHost) continue;
    sim::HostFree(reinterpret_cast<void*>(addr), a.bytes);
  }
}

Status SimRuntime::Create(SimOptions options,
                          std::shared_ptr<SimRuntime>* out) {
  auto rt = std::make_shared<SimRuntime>(std::move(options));
  HFLOW_RETURN_IF_ERROR(rt->ValidateOptions());
  *out = std::move(rt);
  return Status::OK();
}

Status SimRuntime::ValidateOptions() const {
  if (devices_.empty()) {
    return Status::InvalidArgument(
        "sim runtime: the cluster config has no local devices; list at least "
        "one device (e.g. --devices 0,1)");
  }
  for (size_t i = 1; i < devices_.size(); ++i) {
    if (devices_[i]->id == devices_[i - 1]->id) {
      return Status::InvalidArgument("sim runtime: device " +
                                     std::to_string(devices_[i]->id) +
                                     " appears twice in the cluster config");
    }
  }
  if (default_device_ && FindDevice(*default_device_) == nullptr) {
    return Status::InvalidArgument(
        "sim runtime: default device " + std::to_string(*default_device_) +
        " is not a device of the cluster; pick one of the cluster's devices "
        "or none");
  }
  return Status::OK();
}

std::vector<int32_t> SimRuntime::DeviceIds() const {
  std::vector<int32_t> ids;
  for (const auto& d : devices_) ids.push_back(d->id);
  return ids;
}

std::optional<int32_t> SimRuntime::DefaultDevice() const {
  return default_device_;
}

Status SimRuntime::LookupDevice(Op op, int32_t device, SimDevice** out) const {
  *out = FindDevice(device);
  if (*out != nullptr) return Status::OK();
  std::string ids;
  for (const auto& d : devices_) {
    ids += (ids.empty() ? "" : ",") + std::to_string(d->id);
  }
  return Status::InvalidArgument(
      std::string(OpName(op)) + ": device " + std::to_string(device) +
      " is not in the cluster (devices: " + ids + ")");
}

// ---------------------------------------------------------------------------
// Instrumentation

// Note [ctxcheck costs nothing when off]
// Every sim op already pays one relaxed load of instrumented_ (and the
// DriverCall and SetCurrentContext fast paths test it too). ctxcheck turns
// that flag on rather than adding a load of its own, so off, the hot paths
// are what they were. Its detection points sit in branches that are cold
// whatever the mode (an unbound thread, a mismatch, a foreign pointer), and
// read ctxcheck_ only there. On, the slow path must not take instr_mu_ per
// call (MaybeFault's lock, shared by every thread): `faulting_` says
// whether MaybeFault has anything to do, and ctxcheck alone gives it none.
// The context-leak check lives outside the sim, around each call into a
// UDF (ctxcheck::UserCall): off, it is one load and two branches per call,
// 45 instructions per message of the four-stage chain (12,813 -> 12,858,
// 0.35%, callgrind; stop 51).
void SimRuntime::UpdateInstrumented() {
  bool faulting = count_calls_ || !faults_.empty() || any_latency_ ||
                  record_calls_.load(std::memory_order_relaxed);
  faulting_.store(faulting, std::memory_order_relaxed);
  bool on = faulting ||
            ctxcheck_.load(std::memory_order_relaxed) != ctxcheck::Mode::kOff;
  instrumented_.store(on, std::memory_order_release);
}

void SimRuntime::SetCtxCheck(ctxcheck::Mode mode) {
  util::MutexLock lock(instr_mu_);
  const bool was_on = ctxcheck_.exchange(mode, std::memory_order_relaxed) !=
                      ctxcheck::Mode::kOff;
  const bool on = mode != ctxcheck::Mode::kOff;
  if (was_on != on) ctxcheck::internal::SetRuntimeOn(this, on);
  UpdateInstrumented();
}

void SimRuntime::NoteCrossDevice(Op op, int32_t device, int32_t touched) {
  if (ctxcheck_.load(std::memory_order_relaxed) == ctxcheck::Mode::kOff ||
      touched == kRegisteredHost) {
    return;
  }
  SimContext* cur = BoundContext();
  if (cur == nullptr || cur->device == touched) return;
  ctxcheck::Note n;
  n.kind = ctxcheck::Kind::kCrossDevice;
  n.op = op;
  n.device = device;
  n.touched = touched;
  n.ctx_device = cur->device;
  ctxcheck::SetNote(n);
}

void SimRuntime::CtxCheckEpilogue(Op op, int32_t device, SimContext* entry,
                                  const Status& s) {
  ctxcheck::Note& note = ctxcheck::PendingNote();
  sim::ThreadCache& c = sim::MyThreadCache();
  const bool binds = op == Op::kSetDevice || op == Op::kCreateContext ||
                     op == Op::kSetCurrentContext;
  const bool on_mark =
      entry != nullptr && c.implicit_runtime == uid_ && c.implicit_ctx == entry;
  if (SimContext* now = BoundContext(); now != entry) {
    // For a context-leak finding: where user code switched the thread.
    ctxcheck::NoteSwitch(op, device, reinterpret_cast<Context*>(now));
  }
  if (binds) {
    // An explicit binding ends the implicit one, unless it rebinds the
    // implicit context itself (a ContextGuard restoring what it found).
    if (s.ok() &&
        (op != Op::kSetCurrentContext || BoundContext() != c.implicit_ctx)) {
      c.implicit_ctx = nullptr;
      c.implicit_runtime = 0;
    }
  } else if (on_mark && note.kind == ctxcheck::Kind::kNone &&
             op != Op::kResetDevice && op != Op::kDestroyContext &&
             op != Op::kHostRegister && op != Op::kHostUnregister) {
    note.kind = ctxcheck::Kind::kUnbound;
    note.op = op;
    note.device = device;
    note.touched = device;
    note.ctx_device = entry->device;
    note.on_implicit = true;
  }
  if (note.kind == ctxcheck::Kind::kNone) return;
  ctxcheck::Note n = note;
  note = ctxcheck::Note{};
  if (n.kind == ctxcheck::Kind::kUnbound && n.continued_on >= 0 && s.ok()) {
    // Later calls on this thread run on the implicit binding: found too.
    c.implicit_runtime = uid_;
    c.implicit_ctx = BoundContext();
  }
  ctxcheck::Report(n, ctxcheck_.load(std::memory_order_relaxed), s);
}

void SimRuntime::InjectFault(Op op, uint64_t nth, Status error) {
  util::MutexLock lock(instr_mu_);
  if (nth == 0) nth = 1;
  faults_.push_back(Fault{op, nth, std::move(error)});
  UpdateInstrumented();
}

void SimRuntime::ClearFaults() {
  util::MutexLock lock(instr_mu_);
  faults_.clear();
  UpdateInstrumented();
}

void SimRuntime::SetCountCalls(bool on) {
  util::MutexLock lock(instr_mu_);
  count_calls_ = on;
  UpdateInstrumented();
}

uint64_t SimRuntime::CallCount(Op op) const {
  util::MutexLock lock(instr_mu_);
  return call_counts_[static_cast<size_t>(op)];
}

void SimRuntime::ResetCallCounts() {
  util::MutexLock lock(instr_mu_);
  call_counts_.fill(0);
}

void SimRuntime::SetOpLatency(Op op, std::chrono::microseconds latency) {
  util::MutexLock lock(instr_mu_);
  latency_[static_cast<size_t>(op)] = latency;
  any_latency_ = std::any_of(latency_.begin(), latency_.end(),
                             [](auto l) { return l.count() > 0; });
  UpdateInstrumented();
}

void SimRuntime::SetRecordCalls(bool on) {
  util::MutexLock lock(instr_mu_);
  record_calls_.store(on, std::memory_order_relaxed);
  UpdateInstrumented();
}

std::vector<CallRecord> SimRuntime::CallLog() const {
  util::MutexLock lock(instr_mu_);
  return log_;
}

void SimRuntime::ClearCallLog() {
  util::MutexLock lock(instr_mu_);
  log_.clear();
}

// Counts the call and fires the first armed fault whose count runs out.
// Note [Faultable ops]: SetCurrentContext is counted per op but excluded from
// kAnyOp sweeps: guards restore the caller's context with it, and a real
// runtime fails it only for invalid handles, which tests cover directly.
Status SimRuntime::MaybeFault(Op op) {
  std::chrono::microseconds latency{0};
  Status fired;
  {
    util::MutexLock lock(instr_mu_);
    bool faultable = op != Op::kSetCurrentContext;
    ++call_counts_[static_cast<size_t>(op)];
    if (faultable) ++call_counts_[static_cast<size_t>(kAnyOp)];
    for (auto it = faults_.begin(); it != faults_.end(); ++it) {
      if (it->op != op && !(it->op == kAnyOp && faultable)) continue;
      if (--it->remaining == 0) {
        fired = it->error.ok() ? Status::Internal("injected fault") : it->error;
        fired =
            fired.WithContext(std::string(OpName(op)) + " (injected fault): ");
        faults_.erase(it);
        UpdateInstrumented();
        break;
      }
    }
    latency = latency_[static_cast<size_t>(op)];
  }
  if (fired.ok() && latency.count() > 0) std::this_thread::sleep_for(latency);
  return fired;
}

void SimRuntime::Record(Op op, int32_t device, SimContext* entry, bool implicit,
                        const Status& s) {
  CallRecord r;
  r.thread = util::CurrentThreadName();
  r.op = op;
  r.device = device;
  r.bound_context = entry ? entry->id : 0;
  r.bound_device = entry ? entry->device : -1;
  r.implicit_binding = implicit;
  r.result = s.code();
  util::MutexLock lock(instr_mu_);
  if (!record_calls_.load(std::memory_order_relaxed)) return;
  r.seq = next_seq_++;
  log_.push_back(std::move(r));
}

// ---------------------------------------------------------------------------
// Device loss and counters

void SimRuntime::MarkDeviceLost(int32_t device) {
  SimDevice* dev = FindDevice(device);
  if (dev == nullptr || dev->lost.exchange(true)) return;
  std::vector<LostListener> listeners;
  {
    util::MutexLock lock(listeners_mu_);
    for (auto& [id, fn] : lost_listeners_) listeners.push_back(fn);
  }
  for (auto& fn : listeners) fn(device);
}

int SimRuntime::AddDeviceLostListener(LostListener fn) {
  util::MutexLock lock(listeners_mu_);
  int id = next_listener_id_++;
  lost_listeners_[id] = std::move(fn);
  return id;
}

void SimRuntime::RemoveDeviceLostListener(int id) {
  util::MutexLock lock(listeners_mu_);
  lost_listeners_.erase(id);
}

Status SimRuntime::GetDeviceStats(int32_t device, DeviceStats* out) const {
  SimDevice* dev = nullptr;
  HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kGetMemInfo, device, &dev));
  out->device_id = dev->id;
  out->contexts_created = dev->contexts_created.load();
  out->contexts_alive = dev->contexts_alive.load();
  out->implicit_bindings = dev->implicit_bindings.load();
  out->mem_capacity_bytes = dev->capacity;
  out->mem_used_bytes = dev->mem_used.load();
  out->mem_peak_bytes = dev->mem_peak.load();
  out->live_allocations = dev->live_allocations.load();
  out->default_context_refs = dev->refs.load();
  out->lost = dev->lost.load();
  return Status::OK();
}

std::vector<DeviceStats> SimRuntime::AllDeviceStats() const {
  std::vector<DeviceStats> all;
  for (const auto& d : devices_) {
    DeviceStats s;
    (void)GetDeviceStats(d->id, &s);
    all.push_back(s);
  }
  return all;
}

}  // namespace rt
}  // namespace hflow
