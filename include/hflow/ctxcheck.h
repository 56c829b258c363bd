// hflow ctxcheck from a program or test suite (docs/ctxcheck.md): what the
// check found so far in this process, so that a test can assert that its
// code binds its devices. Switch the check on with Options::ctxcheck,
// rt::RuntimeOptions::ctxcheck or $HFLOW_CTXCHECK; findings are also
// written where $HFLOW_CTXCHECK_FILE says (JSON lines), else to stderr.
//
//   hflow::Options o;
//   o.ctxcheck = "report";
//   ... run the graph ...
//   for (const auto& f : hflow::CtxCheckFindings()) ADD_FAILURE() << f.message;
//
// Thread-safety: both functions may be called from any thread.
#ifndef HFLOW_CTXCHECK_H_
#define HFLOW_CTXCHECK_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace hflow {

// One distinct site: a kind of finding, a runtime call and a place in the
// program, with how often it was hit.
struct CtxCheckFinding {
  std::string site;  // 16 hex digits, stable across runs of one binary
  // "unbound": a device call on a thread with no bound context;
  // "cross_device": a call that touched one device's resources under
  //   another device's context;
  // "context_leak": a UDF call that returned with its thread on another
  //   context than it entered with.
  std::string kind;
  std::string op;       // the runtime call ("Malloc"); "" when none is known
  std::string message;  // what happened and how to fix it
  std::string thread;   // the first hit's thread name
  int64_t tid = 0;
  uint64_t count = 0;           // hits so far
  int32_t device = -1;          // the device the call named (a leak: the UDF's)
  int32_t context_device = -1;  // the bound context's device (-1: none)
  std::vector<int32_t> devices;  // the devices touched over all hits
  // The first frame of the program's own code: "function (module)", for a
  // Python program "function (file.py:line)"; "" when the stack holds none.
  std::string location;
  // context_leak only: the UDF's node, function, instance and call.
  std::string node;
  std::string function;
  int32_t instance = -1;
  std::string phase;
};

// The findings of this process so far, in the order of their first hit.
std::vector<CtxCheckFinding> CtxCheckFindings();

// Forgets every finding (a test's fixture, between tests).
void ClearCtxCheckFindings();

// Runs `fn`, a call from one of hflow's threads into user code that is not
// a UDF (GE's RunGraphAsync callback), as hflow runs a UDF's Proc: with
// the check on, a return on another context than the entry's is a
// `context_leak` finding whose node is `what` and whose phase is `phase`.
// Off, a plain call.
void RunCtxCheckedUserCall(const char* what, const char* phase,
                           const std::function<void()>& fn);

// For hosts of a script language (hflow's Python modules register one): a
// device call reached through an interpreter has the interpreter's loop as
// its native stack, the same for every line of the script, so findings
// also record the script's own stack, which the provider reads.
struct CtxCheckScriptFrame {
  std::string function;
  std::string file;
  int line = 0;
  bool user = false;  // the program's own code (not the host's package,
                      // not the language's standard library)
};
struct CtxCheckScriptStack {
  std::string language;  // "python": the JSON key is "<language>_stack"
  std::string thread;    // the thread's name in the script ("" unknown)
  std::vector<CtxCheckScriptFrame> frames;  // innermost first
};
// Fills `out` for the calling thread; false when it runs no script or
// cannot read it now. Called on ctxcheck's slow paths only (a finding, a
// context switch inside a UDF call); must not block or throw.
using CtxCheckScriptStackFn = bool (*)(CtxCheckScriptStack* out);
// Registers the provider (nullptr: none); the last registration wins. The
// function must stay loaded for the rest of the process.
void SetCtxCheckScriptStackProvider(CtxCheckScriptStackFn fn);

}  // namespace hflow

#endif  // HFLOW_CTXCHECK_H_
