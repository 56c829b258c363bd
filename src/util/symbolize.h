// Stack capture and symbolization for diagnostics (hflow ctxcheck's
// findings): glibc backtrace() for the program counters, dladdr for the
// module and the nearest exported symbol, abi::__cxa_demangle for C++ names.
// Only symbols in a module's dynamic symbol table are found this way: an
// executable's own functions need -rdynamic. File and line need debug info,
// which a later step reads with elfutils' libdw (docs/ctxcheck.md); Frame
// already has their fields so callers need not change then.
//
// Thread-safety: every function may be called from any thread. They
// allocate and take the dynamic loader's lock: call them from slow paths
// only, never from a signal handler.
#ifndef HFLOW_UTIL_SYMBOLIZE_H_
#define HFLOW_UTIL_SYMBOLIZE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace hflow {
namespace util {

struct Frame {
  uintptr_t pc = 0;    // return address (the innermost: the call site)
  std::string module;  // path of the object file holding pc; "" unknown
  uintptr_t module_base = 0;
  std::string function;  // demangled; "" when no symbol covers pc
  uintptr_t offset = 0;  // pc - the symbol's address
  std::string file;      // source file; "" until libdw (a later step)
  int line = 0;          // 0: unknown
};

// The return addresses of this thread's stack, innermost first, leaving out
// the `skip` innermost frames (0: start with CaptureStack's caller) and
// keeping at most `max`.
std::vector<uintptr_t> CaptureStack(int skip, int max);

// Module, symbol and offset of `pc`, a return address: the lookup uses
// pc - 1, so a call that ends its function still names that function.
Frame Symbolize(uintptr_t pc);

// The module of `pc` (dladdr only, no demangling): a Frame with pc, module
// and module_base set.
Frame ModuleOf(uintptr_t pc);

// A demangled name; `mangled` itself when it is no C++ name.
std::string Demangle(const char* mangled);

// The file name of a module path ("/a/b/libx.so" -> "libx.so").
std::string ModuleBaseName(const std::string& module);

// Whether `module` is one of hflow's own libraries or executables, or a
// system library (/lib, /usr/lib): frames there are not the user's code.
bool IsHflowOrSystemModule(const std::string& module);

// "Function+0x1c (/path/module)"; without a symbol "module+0x3a1a18
// (/path/module)" (the module offset); the pc in hex when nothing is known.
std::string FormatFrame(const Frame& f);

}  // namespace util
}  // namespace hflow

#endif  // HFLOW_UTIL_SYMBOLIZE_H_
