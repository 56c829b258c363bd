// Stack capture and dladdr-based symbolization (see symbolize.h).
//
// Thread-safety: stateless; backtrace, dladdr and __cxa_demangle are
// thread-safe.
#include "util/symbolize.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hflow {
namespace util {

namespace {
// dladdr names the main program as it was started (argv[0], maybe a
// relative path); name it by its absolute path, as other modules are.
std::string ModulePath(const char* fname) {
  static const std::string* exe = [] {
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return new std::string(n > 0 ? std::string(buf, n) : "");
  }();
  if (fname[0] != '/' && !exe->empty() &&
      std::strcmp(fname, program_invocation_name) == 0) {
    return *exe;
  }
  return fname;
}
}  // namespace

std::vector<uintptr_t> CaptureStack(int skip, int max) {
  constexpr int kMaxDepth = 128;
  void* pcs[kMaxDepth];
  // More than asked: this function's own frame, and any an interceptor adds.
  int want = skip + max + 8;
  if (want > kMaxDepth) want = kMaxDepth;
  int n = backtrace(pcs, want);
  // The caller's frame is the one returning to it; found by address, since
  // a sanitizer's interceptor of backtrace() adds frames of its own above
  // this one (ASan did: a fixed "skip this frame" named CaptureStack).
  void* caller = __builtin_return_address(0);
  int first = 1;
  for (int i = 0; i < n; ++i) {
    if (pcs[i] == caller) {
      first = i;
      break;
    }
  }
  std::vector<uintptr_t> out;
  for (int i = first + skip; i < n && static_cast<int>(out.size()) < max; ++i) {
    out.push_back(reinterpret_cast<uintptr_t>(pcs[i]));
  }
  return out;
}

std::string Demangle(const char* mangled) {
  if (mangled == nullptr) return "";
  int status = 0;
  char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return mangled;
  std::string out(d);
  std::free(d);
  return out;
}

namespace {
// dladdr on `pc` (a return address may lie just past its function's last
// byte, so the byte before it is looked up); the frame's module and base.
bool Locate(uintptr_t pc, Frame* f, Dl_info* info) {
  f->pc = pc;
  const void* lookup = reinterpret_cast<const void*>(pc > 0 ? pc - 1 : pc);
  if (dladdr(lookup, info) == 0) return false;
  if (info->dli_fname != nullptr) f->module = ModulePath(info->dli_fname);
  f->module_base = reinterpret_cast<uintptr_t>(info->dli_fbase);
  return true;
}
}  // namespace

Frame Symbolize(uintptr_t pc) {
  Frame f;
  Dl_info info{};
  if (!Locate(pc, &f, &info)) return f;
  if (info.dli_sname != nullptr && info.dli_saddr != nullptr) {
    f.function = Demangle(info.dli_sname);
    f.offset = pc - reinterpret_cast<uintptr_t>(info.dli_saddr);
  }
  return f;
}

Frame ModuleOf(uintptr_t pc) {
  Frame f;
  Dl_info info{};
  if (!Locate(pc, &f, &info) || info.dli_fname == nullptr) {
    Frame none;
    none.pc = pc;
    return none;
  }
  return f;
}

std::string ModuleBaseName(const std::string& module) {
  size_t slash = module.rfind('/');
  return slash == std::string::npos ? module : module.substr(slash + 1);
}

bool IsHflowOrSystemModule(const std::string& module) {
  if (module.empty()) return false;
  for (const char* dir : {"/lib/", "/usr/lib/", "/lib64/", "/usr/lib64/"}) {
    if (module.rfind(dir, 0) == 0) return true;
  }
  std::string base = ModuleBaseName(module);
  // hflow's libraries (docs/ctxcheck.md lists them) and its executables.
  for (const char* prefix :
       {"libhflow", "libascendcl", "libflow_func", "libge_runner",
        "libdflow_runner", "libgraph", "libflow_graph", "libfmk",
        "libhflow_model", "_core", "acl.cpython", "hflow-worker"}) {
    if (base.rfind(prefix, 0) == 0) return true;
  }
  // A Python interpreter's loop is never the program's code: a script's
  // place comes from its own stack (rt/ctxcheck.h, Note [Script stacks]).
  for (const char* prefix : {"libpython3", "python3"}) {
    if (base.rfind(prefix, 0) == 0) return true;
  }
  return base.rfind("ld-linux", 0) == 0 || base.rfind("linux-vdso", 0) == 0;
}

std::string FormatFrame(const Frame& f) {
  char pc[32];
  snprintf(pc, sizeof(pc), "0x%zx", static_cast<size_t>(f.pc));
  std::string out;
  if (f.function.empty() && !f.module.empty()) {
    // No symbol: the module offset is what addr2line -e MODULE needs.
    snprintf(pc, sizeof(pc), "+0x%zx",
             static_cast<size_t>(f.pc - f.module_base));
    out = ModuleBaseName(f.module) + pc;
  } else if (f.function.empty()) {
    out = pc;
  } else {
    char off[32];
    snprintf(off, sizeof(off), "+0x%zx", static_cast<size_t>(f.offset));
    out = f.function + off;
  }
  if (!f.file.empty()) {
    out += " at " + f.file + ":" + std::to_string(f.line);
  }
  if (!f.module.empty()) out += " (" + f.module + ")";
  return out;
}

}  // namespace util
}  // namespace hflow
