// UserCall's slow paths (see ctxcheck_user_call.h): entry, the switches
// seen inside, and the comparison at exit.
//
// Thread-safety: all state is the calling thread's.
#include "rt/ctxcheck_user_call.h"

#include <vector>

#include "hflow/rt.h"
#include "util/symbolize.h"

namespace hflow {
namespace rt {
namespace ctxcheck {
namespace {

// The first call inside a scope that bound a given context.
struct Switch {
  Context* ctx = nullptr;
  Op op = Op::kCount;
  int32_t device = -1;
  std::vector<uintptr_t> pcs;
  ScriptStack script;
};

// The innermost UserCall of this thread, and the switches its scopes saw
// (each scope's from its first_switch_ on). Plain thread_locals: only the
// ctxcheck slow paths touch them.
thread_local UserCall* t_innermost = nullptr;
thread_local std::vector<Switch> t_switches;

// Switches remembered per scope: a UDF switching back and forth in a loop
// needs only the first binding of each context.
constexpr size_t kMaxSwitches = 16;
constexpr int kMaxFrames = 48;

int32_t DeviceOf(DeviceRuntime* runtime, const Context* ctx) {
  int32_t device = -1;
  if (ctx == nullptr || !runtime->GetContextDevice(ctx, &device).ok()) {
    return -1;
  }
  return device;
}

}  // namespace

void UserCall::Begin(DeviceRuntime* runtime, const util::UdfSite* site,
                     const char* phase) {
  if (runtime == nullptr) runtime = CurrentRuntime();
  if (runtime == nullptr || !IsOn(runtime)) return;
  runtime_ = runtime;
  entered_ = runtime->GetCurrentContext();
  site_ = site;
  phase_ = phase;
  outer_ = t_innermost;
  first_switch_ = t_switches.size();
  t_innermost = this;
}

void UserCall::End() {
  t_innermost = outer_;
  Context* left = runtime_->GetCurrentContext();
  if (left != entered_) {
    Leak k;
    if (site_ != nullptr) {
      k.node = site_->node;
      k.function = site_->function;
      k.instance = site_->replica;
      k.device = site_->device;
    }
    k.phase = phase_;
    k.entered_device = DeviceOf(runtime_, entered_);
    k.left_device = DeviceOf(runtime_, left);
    k.same_device = left != nullptr && k.left_device == k.entered_device;
    static const std::vector<uintptr_t> kNone;
    static const ScriptStack kNoScript;
    const std::vector<uintptr_t>* pcs = &kNone;
    const ScriptStack* script = &kNoScript;
    for (size_t i = first_switch_; i < t_switches.size(); ++i) {
      if (t_switches[i].ctx != left) continue;
      k.switch_op = t_switches[i].op;
      k.switch_device = t_switches[i].device;
      pcs = &t_switches[i].pcs;
      script = &t_switches[i].script;
      break;
    }
    ReportLeak(k, *pcs, *script);
  }
  // The outer scope compares against its own entry; the switches seen here
  // are this scope's.
  t_switches.resize(first_switch_);
}

void NoteSwitch(Op op, int32_t device, Context* bound) {
  UserCall* call = t_innermost;
  if (call == nullptr ||
      t_switches.size() - call->first_switch_ >= kMaxSwitches) {
    return;
  }
  for (size_t i = call->first_switch_; i < t_switches.size(); ++i) {
    if (t_switches[i].ctx == bound) return;  // its first binding shows
  }
  Switch s;
  s.ctx = bound;
  s.op = op;
  s.device = device;
  // Skip NoteSwitch and the runtime's epilogue; the rest reaches the user.
  s.pcs = util::CaptureStack(/*skip=*/1, kMaxFrames);
  s.script = CaptureScriptStack();
  t_switches.push_back(std::move(s));
}

}  // namespace ctxcheck
}  // namespace rt
}  // namespace hflow
