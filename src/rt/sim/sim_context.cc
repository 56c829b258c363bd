// SimRuntime context operations and the binding rule every device-dependent
// operation applies (docs/architecture.md, "The device runtime").
//
// Thread-safety: the binding is thread-local; device default contexts are
// created/destroyed under SimDevice::mu; the context registry under
// contexts_mu_.
#include <string>

#include "rt/sim/sim_instrumented.h"
#include "rt/sim/sim_internal.h"
#include "util/fast_tls.h"
#include "util/thread_name.h"

namespace hflow {
namespace rt {
using internal::t_slot;

namespace {
Context* Handle(sim::SimContext* c) { return reinterpret_cast<Context*>(c); }

std::string Dev(int32_t d) { return "device " + std::to_string(d); }
}  // namespace

void SimRuntime::Bind(SimContext* ctx) noexcept {
  t_slot.owner = runtime_id();
  t_slot.ctx = Handle(ctx);
}

Context* SimRuntime::GetCurrentContext() noexcept {
  return Handle(BoundContext());
}

// Note [Context handle cache]
// Every binding a pool thread makes validates the handle against the
// registry, and a global lock there is shared by all threads binding. A
// context record is never freed while its runtime lives (dead ones stay for
// this very check), so a handle this thread has validated once stays
// valid: a small per-thread cache, keyed by the runtime's uid, answers
// repeats without the lock. Liveness is checked by the callers, not here.
sim::ThreadCache& sim::MyThreadCache() {
  thread_local std::unique_ptr<ThreadCache> cache HFLOW_FAST_TLS;
  if (!cache) cache = std::make_unique<ThreadCache>();
  return *cache;
}

sim::SimContext* SimRuntime::FindContext(const Context* handle) const {
  sim::ThreadCache& c = sim::MyThreadCache();
  for (const auto& e : c.contexts) {
    if (e.handle == handle && e.runtime == uid_) {
      return reinterpret_cast<SimContext*>(const_cast<Context*>(handle));
    }
  }
  {
    util::MutexLock lock(contexts_mu_);
    if (context_set_.count(handle) == 0) return nullptr;
  }
  constexpr int kSeen = sizeof(c.contexts) / sizeof(c.contexts[0]);
  c.contexts[c.next_context] = {uid_, handle};
  c.next_context = (c.next_context + 1) % kSeen;
  return reinterpret_cast<SimContext*>(const_cast<Context*>(handle));
}

sim::SimContext* SimRuntime::NewContext(SimDevice* dev, bool is_default) {
  auto ctx = std::make_unique<SimContext>();
  ctx->id = next_context_id_.fetch_add(1);
  ctx->device = dev->id;
  ctx->is_default = is_default;
  SimContext* raw = ctx.get();
  {
    util::MutexLock lock(contexts_mu_);
    context_set_.insert(raw);
    contexts_.push_back(std::move(ctx));
  }
  dev->contexts_created.fetch_add(1);
  dev->contexts_alive.fetch_add(1);
  return raw;
}

void SimRuntime::KillContext(SimContext* ctx) {
  if (!ctx->alive.exchange(false)) return;
  FindDevice(ctx->device)->contexts_alive.fetch_sub(1);
  // The destroying thread must not keep a dead binding.
  if (BoundContext() == ctx) Bind(nullptr);
}

int64_t SimRuntime::ContextId(const Context* handle) const {
  SimContext* c = handle ? FindContext(handle) : nullptr;
  return c ? c->id : 0;
}

// Requires dev->mu.
sim::SimContext* SimRuntime::EnsureDefaultContext(SimDevice* dev) {
  SimContext* ctx = dev->default_ctx.load();
  if (ctx == nullptr) {
    ctx = NewContext(dev, /*is_default=*/true);
    dev->default_ctx.store(ctx);
  }
  return ctx;
}

Status SimRuntime::CheckBinding(Op op, SimDevice* dev, bool* implicit) {
  SimContext* cur = BoundContext();
  if (cur != nullptr) {
    if (!cur->alive.load(std::memory_order_relaxed)) {
      return Status::NoContext(
          std::string(OpName(op)) + " on " + Dev(dev->id) +
          ": the context bound to thread '" + util::CurrentThreadName() +
          "' (context " + std::to_string(cur->id) + " of " + Dev(cur->device) +
          ") was destroyed; bind a live context first");
    }
    if (cur->device == dev->id) return Status::OK();
    NoteCrossDevice(op, dev->id, dev->id);
    return Status::ContextMismatch(
        std::string(OpName(op)) + " on " + Dev(dev->id) + ": thread '" +
        util::CurrentThreadName() + "' is bound to a context of " +
        Dev(cur->device) + ", not " + Dev(dev->id) + "; bind " + Dev(dev->id) +
        " first (SetDevice or SetCurrentContext)");
  }
  // Unbound: cold in every mode, so ctxcheck's mode is read only here.
  ctxcheck::Mode check = ctxcheck_.load(std::memory_order_relaxed);
  if (check != ctxcheck::Mode::kOff) {
    return CheckedUnbound(op, dev, implicit, check);
  }
  if (default_device_ && *default_device_ == dev->id) {
    // The quirk of real runtimes: an unbound thread silently gets the
    // default device's default context. Counted so tests can forbid it.
    BindImplicitly(dev);
    *implicit = true;
    return Status::OK();
  }
  return Status::NoContext(
      std::string(OpName(op)) + " on " + Dev(dev->id) +
      ": no valid context is bound to the current thread '" +
      util::CurrentThreadName() + "' (EE1018); bind " + Dev(dev->id) +
      " first (SetDevice or SetCurrentContext)");
}

sim::SimContext* SimRuntime::BindImplicitly(SimDevice* dev) {
  SimContext* ctx;
  {
    util::MutexLock lock(dev->mu);
    ctx = EnsureDefaultContext(dev);
    dev->implicitly_retained = true;
  }
  dev->implicit_bindings.fetch_add(1);
  Bind(ctx);
  return ctx;
}

// Note [ctxcheck's unbound calls]
// Report mode lets every unbound call go on as the default device's would,
// bound implicitly to the targeted device's default context (and counted),
// so one run finds every site rather than stopping at the first; the
// thread stays marked as implicitly bound, and its later calls are found
// too, until it binds explicitly (CtxCheckEpilogue). Strict mode turns the
// quirk off everywhere, device 0 included: the call fails as Ascend's
// runtime fails it off the default device, so the program's error path
// can be tested.
Status SimRuntime::CheckedUnbound(Op op, SimDevice* dev, bool* implicit,
                                  ctxcheck::Mode mode) {
  ctxcheck::Note n;
  n.kind = ctxcheck::Kind::kUnbound;
  n.op = op;
  n.device = dev->id;
  n.touched = dev->id;
  if (mode == ctxcheck::Mode::kReport) {
    BindImplicitly(dev);
    *implicit = true;
    n.continued_on = dev->id;
    ctxcheck::SetNote(n);
    return Status::OK();
  }
  ctxcheck::SetNote(n);
  return Status::NoContext(
      std::string(OpName(op)) + " on " + Dev(dev->id) +
      ": no valid context is bound to the current thread '" +
      util::CurrentThreadName() + "' (EE1018); bind " + Dev(dev->id) +
      " first (SetDevice or SetCurrentContext) [hflow ctxcheck strict]");
}

Status SimRuntime::EnterDeviceOp(Op op, int32_t device, SimDevice** dev,
                                 bool* implicit) {
  HFLOW_RETURN_IF_ERROR(LookupDevice(op, device, dev));
  if ((*dev)->lost.load(std::memory_order_relaxed)) {
    return Status::DeviceLost(std::string(OpName(op)) + " on " + Dev(device) +
                              ": the device is lost");
  }
  return CheckBinding(op, *dev, implicit);
}

Status SimRuntime::SetDevice(int32_t device) {
  return Instrumented(Op::kSetDevice, device, [&](bool*) -> Status {
    SimDevice* dev = nullptr;
    HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kSetDevice, device, &dev));
    if (dev->lost.load(std::memory_order_relaxed)) {
      return Status::DeviceLost("SetDevice on " + Dev(device) +
                                ": the device is lost");
    }
    // Fast path: already bound to this device's live default context and
    // holding a reference, so the count cannot reach zero underneath us.
    SimContext* cur = BoundContext();
    if (cur != nullptr &&
        cur == dev->default_ctx.load(std::memory_order_acquire)) {
      int64_t refs = dev->refs.load(std::memory_order_relaxed);
      while (refs > 0) {
        if (dev->refs.compare_exchange_weak(refs, refs + 1)) {
          return Status::OK();
        }
      }
    }
    SimContext* ctx;
    {
      util::MutexLock lock(dev->mu);
      ctx = EnsureDefaultContext(dev);
      dev->refs.fetch_add(1);
    }
    Bind(ctx);
    return Status::OK();
  });
}

Status SimRuntime::ResetDevice(int32_t device) {
  return Instrumented(Op::kResetDevice, device, [&](bool*) -> Status {
    SimDevice* dev = nullptr;
    HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kResetDevice, device, &dev));
    util::MutexLock lock(dev->mu);
    if (dev->refs.load() <= 0) {
      return Status::FailedPrecondition(
          "ResetDevice on " + Dev(device) +
          ": no SetDevice reference is held; call SetDevice and ResetDevice "
          "in pairs");
    }
    if (dev->refs.fetch_sub(1) == 1 && !dev->implicitly_retained) {
      SimContext* ctx = dev->default_ctx.exchange(nullptr);
      if (ctx != nullptr) KillContext(ctx);
    }
    return Status::OK();
  });
}

Status SimRuntime::GetDevice(int32_t* device) {
  if (device == nullptr) return Status::InvalidArgument("GetDevice: null out");
  SimContext* cur = BoundContext();
  if (cur == nullptr) {
    return Status::NoContext(
        "GetDevice: no context is bound to the current thread '" +
        util::CurrentThreadName() + "'");
  }
  *device = cur->device;
  return Status::OK();
}

Status SimRuntime::CreateContext(int32_t device, Context** out) {
  return Instrumented(Op::kCreateContext, device, [&](bool*) -> Status {
    if (out == nullptr) {
      return Status::InvalidArgument("CreateContext: null out parameter");
    }
    SimDevice* dev = nullptr;
    HFLOW_RETURN_IF_ERROR(LookupDevice(Op::kCreateContext, device, &dev));
    if (dev->lost.load()) {
      return Status::DeviceLost("CreateContext on " + Dev(device) +
                                ": the device is lost");
    }
    SimContext* ctx = NewContext(dev, /*is_default=*/false);
    Bind(ctx);
    *out = Handle(ctx);
    return Status::OK();
  });
}

Status SimRuntime::DestroyContext(Context* handle) {
  SimContext* ctx = handle ? FindContext(handle) : nullptr;
  int32_t device = ctx ? ctx->device : -1;
  return Instrumented(Op::kDestroyContext, device, [&](bool*) -> Status {
    if (ctx == nullptr || !ctx->alive.load()) {
      return Status::InvalidArgument(
          "DestroyContext: unknown or already destroyed context handle");
    }
    if (ctx->is_default) {
      return Status::InvalidArgument(
          "DestroyContext: context " + std::to_string(ctx->id) +
          " is the default context of " + Dev(ctx->device) +
          "; release it with ResetDevice");
    }
    KillContext(ctx);
    return Status::OK();
  });
}

Status SimRuntime::SetCurrentContext(Context* handle) {
  if (handle == nullptr) {
    return Instrumented(Op::kSetCurrentContext, -1, [&](bool*) {
      Bind(nullptr);
      return Status::OK();
    });
  }
  // Fast path: rebinding what is bound (the check needs no registry lookup:
  // the bound pointer came from this runtime).
  SimContext* cur = BoundContext();
  if (reinterpret_cast<Context*>(cur) == handle &&
      !instrumented_.load(std::memory_order_relaxed) && cur->alive.load()) {
    return Status::OK();
  }
  SimContext* ctx = FindContext(handle);
  int32_t device = ctx ? ctx->device : -1;
  return Instrumented(Op::kSetCurrentContext, device, [&](bool*) -> Status {
    if (ctx == nullptr || !ctx->alive.load()) {
      return Status::InvalidArgument(
          "SetCurrentContext: unknown or destroyed context handle; pass a "
          "context from CreateContext/GetCurrentContext that is still alive");
    }
    Bind(ctx);
    return Status::OK();
  });
}

Status SimRuntime::GetContextDevice(const Context* handle, int32_t* device) {
  SimContext* ctx = handle ? FindContext(handle) : nullptr;
  if (ctx == nullptr || device == nullptr) {
    return Status::InvalidArgument("GetContextDevice: unknown context handle");
  }
  *device = ctx->device;
  return Status::OK();
}

}  // namespace rt
}  // namespace hflow
