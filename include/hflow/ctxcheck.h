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
  // The first frame of the program's own code: "function (module)", or
  // "" when the stack holds none.
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

}  // namespace hflow

#endif  // HFLOW_CTXCHECK_H_
