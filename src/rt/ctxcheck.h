// hflow ctxcheck, library mode (docs/ctxcheck.md): finds device calls made
// on a thread with no bound context, calls that touch one device's
// resources under another device's context, and calls into user code (a
// UDF's Init or Proc) that return with the thread on another context than
// they entered with. The simulated runtime detects the first two
// (sim_context.cc, sim_memory.cc), UserCall (ctxcheck_user_call.h) the
// third; each is reported here, where findings are deduplicated by site and
// written as JSON lines to $HFLOW_CTXCHECK_FILE, or as text to stderr.
//
// The mode comes from SimOptions::ctxcheck (RuntimeOptions::ctxcheck) or,
// when that is unset, from $HFLOW_CTXCHECK, read once per process:
//   report (1, on): find, and let an unbound call go on implicitly bound to
//                   the targeted device's default context;
//   strict:         find, and fail every unbound call with EE1018, device 0
//                   included, as Ascend's runtime does off the default device;
//   off (0, unset): nothing; the sim costs what it did before.
//
// Thread-safety: every function may be called from any thread. The pending
// note is thread-local; the site table is guarded by a mutex. Reporting is a
// slow path (a stack capture, and symbolization at a site's first hit).
#ifndef HFLOW_RT_CTXCHECK_H_
#define HFLOW_RT_CTXCHECK_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "hflow/ctxcheck.h"
#include "hflow/device_runtime.h"
#include "hflow/status.h"
#include "util/symbolize.h"

namespace hflow {
namespace rt {
namespace ctxcheck {

enum class Mode : uint8_t { kOff, kReport, kStrict };
enum class Kind : uint8_t { kNone, kUnbound, kCrossDevice, kContextLeak };

const char* ModeName(Mode mode);  // "off", "report", "strict"
// "", "unbound", "cross_device", "context_leak"
const char* KindName(Kind kind);

namespace internal {
// How many runtimes have ctxcheck on (SetRuntimeOn keeps it).
extern std::atomic<int> g_active_runtimes;
}  // namespace internal

// Whether any runtime of the process has ctxcheck on (one relaxed load,
// inline: UserCall asks it around every UDF call, off included).
inline bool Active() {
  return internal::g_active_runtimes.load(std::memory_order_relaxed) > 0;
}
// Whether `runtime` has ctxcheck on (a few relaxed loads; for UserCall,
// after Active()).
bool IsOn(const DeviceRuntime* runtime);

// A mode's name as RuntimeOptions::ctxcheck spells it ("off", "report",
// "strict"); false for anything else.
bool ParseModeName(const std::string& name, Mode* mode);

// The mode $HFLOW_CTXCHECK asks for, read at the first call. An unknown
// value warns once on stderr and means off.
Mode EnvMode();

// What a detection point saw, filled in by the sim during one call and
// reported by the call's epilogue (SimRuntime::Instrumented).
struct Note {
  Kind kind = Kind::kNone;
  Op op = Op::kCount;
  int32_t device = -1;        // the device the call named
  int32_t touched = -1;       // the device whose resources it touched
  int32_t ctx_device = -1;    // the bound context's device (-1: none)
  int32_t continued_on = -1;  // report mode: the device implicitly bound
  bool on_implicit = false;   // the thread was still on an implicit binding
};

// A context leak (Kind::kContextLeak): what UserCall saw.
struct Leak {
  std::string node;  // the UDF's node, function and instance
  std::string function;
  int32_t instance = 0;
  int32_t device = -1;          // the instance's device
  std::string phase;            // "Init", "Proc", "stream Proc", ...
  int32_t entered_device = -1;  // the context's device at entry (-1: none)
  int32_t left_device = -1;     // ... and at return (-1: none)
  bool same_device = false;     // another context of the entry's device
  Op switch_op = Op::kCount;    // the call that bound the left context
  int32_t switch_device = -1;   // (kCount: not seen; made elsewhere)
};

// This thread's note for the call in progress. Detection points set it only
// if it is empty (the first finding of a call wins).
Note& PendingNote();
inline void SetNote(const Note& n) {
  Note& p = PendingNote();
  if (p.kind == Kind::kNone) p = n;
}

// Note [Script stacks]
// A device call from a Python program reaches the runtime through the
// interpreter: its native stack is the interpreter's loop and an extension
// module, the same for every line of the script. The program's place is on
// the script's own stack, which only the interpreter can read (under its
// lock, on the calling thread). An extension module (dataflow._core, acl)
// registers a provider when it loads (SetCtxCheckScriptStackProvider); Report
// and NoteSwitch ask it, on their slow paths only, and the script's user frames
// join the site's key, its location and its output ("python_stack"). A thread
// the interpreter does not know (an hflow pool thread, a C++ program) has no
// script stack.

// A script's frames and the provider that reads them (hflow/ctxcheck.h).
using ScriptFrame = CtxCheckScriptFrame;
using ScriptStack = CtxCheckScriptStack;
using ScriptStackFn = CtxCheckScriptStackFn;

// Registers the provider (nullptr: none). The last registration wins; each
// is a function of a module that is never unloaded.
void SetScriptStackProvider(ScriptStackFn fn);

// The calling thread's script stack from the provider; empty without one.
ScriptStack CaptureScriptStack();

// Records a finding of `mode` whose call returned `result`: captures the
// stack, deduplicates the site and writes a `finding` line at its first hit,
// `count` lines when its count reaches a power of two, and the final counts
// at exit.
void Report(const Note& note, Mode mode, const Status& result);

// Records a context leak; `pcs` and `script` are the stacks of the call
// that bound the context left behind (empty when no call inside the user's
// code did).
void ReportLeak(const Leak& leak, const std::vector<uintptr_t>& pcs,
                const ScriptStack& script);

// One deduplicated site, as recorded so far.
struct Site {
  std::string id;  // 16 hex digits: FNV-1a of kind, op, user frames
  Kind kind = Kind::kNone;
  Note note;  // of the first hit
  std::string mode;
  std::string result;  // the first hit's: "ok", "no_context", ...
  std::string message;
  std::string thread;  // the first hit's thread name
  int64_t tid = 0;
  int64_t pid = 0;
  uint64_t count = 0;
  std::vector<int32_t> devices;  // touched devices over all hits, ascending
  std::vector<util::Frame> frames;
  ScriptStack script;  // the first hit's, where a script made the call
  Leak leak;           // kContextLeak only
};

// The sites recorded so far, in order of first hit.
std::vector<Site> Sites();

// The first frame of the user's code in `s` (not hflow's, not a system
// library's); null when the stack has none.
const util::Frame* FirstUserFrame(const Site& s);
// The first frame of the user's script in `s`; null when there is none.
const ScriptFrame* FirstUserScriptFrame(const Site& s);

namespace internal {
// $HFLOW_CTXCHECK's value parsed; *known false (and kOff) for an unknown one.
Mode ParseEnvValue(const char* value, bool* known);
// Where findings go from now on: a JSONL path, or "" for text on stderr.
// The default is $HFLOW_CTXCHECK_FILE.
void SetOutputFile(const std::string& path);
// Writes the final `count` lines (what the atexit handler does) now.
void WriteFinalCounts();
// Forgets every site.
void ResetSites();
// Registers `runtime` as checking (on) or not (SimRuntime::SetCtxCheck and
// its destructor), which Active() and IsOn() read.
void SetRuntimeOn(const DeviceRuntime* runtime, bool on);
}  // namespace internal

}  // namespace ctxcheck
}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_CTXCHECK_H_
