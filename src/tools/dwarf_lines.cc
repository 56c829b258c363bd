// DwarfLines (see dwarf_lines.h): one offline Dwfl session per module,
// opened at its first lookup and kept for the rest.
// Thread-safety: as the class.
#include "tools/dwarf_lines.h"

#include <cxxabi.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include <cstdlib>

namespace hflow::tools {
namespace {

const Dwfl_Callbacks kOffline = {
    dwfl_build_id_find_elf,
    dwfl_standard_find_debuginfo,
    dwfl_offline_section_address,
    nullptr,
};

std::string Demangled(const char* name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return name;
  std::string out = d;
  std::free(d);
  return out;
}

// Note [Units without aranges]
// libdwfl finds an address's compilation unit through .debug_aranges,
// which GCC writes and clang does not (elfutils 0.188, Debian 12's, does
// not fall back to the units' own ranges). Without it, every unit is
// asked whether it covers the address.
bool FindUnit(Dwfl_Module* mod, Dwarf_Addr addr, Dwarf_Die* cu,
              Dwarf_Addr* bias) {
  if (Dwarf_Die* die = dwfl_module_addrdie(mod, addr, bias)) {
    *cu = *die;
    return true;
  }
  Dwarf* dw = dwfl_module_getdwarf(mod, bias);
  if (dw == nullptr) return false;
  Dwarf_Off off = 0, next = 0;
  size_t header = 0;
  while (dwarf_nextcu(dw, off, &next, &header, nullptr, nullptr, nullptr) ==
         0) {
    if (dwarf_offdie(dw, off + header, cu) != nullptr &&
        dwarf_haspc(cu, addr - *bias) == 1) {
      return true;
    }
    off = next;
  }
  return false;
}

// The innermost function at `addr` of `cu` by the debug information: an
// inlined function's own name where the symbol table has only its caller's.
std::string ScopeFunction(Dwarf_Die* cu, Dwarf_Addr pc) {
  Dwarf_Die* scopes = nullptr;
  const int n = dwarf_getscopes(cu, pc, &scopes);
  std::string name;
  for (int i = 0; i < n && name.empty(); ++i) {
    const int tag = dwarf_tag(&scopes[i]);
    if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine) continue;
    Dwarf_Attribute attr;
    for (int at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name}) {
      if (dwarf_attr_integrate(&scopes[i], at, &attr) == nullptr) continue;
      if (const char* s = dwarf_formstring(&attr)) {
        name = at == DW_AT_name ? std::string(s) : Demangled(s);
        break;
      }
    }
  }
  std::free(scopes);
  return name;
}

}  // namespace

struct DwarfLines::Module {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;
  Dwarf_Addr start = 0;  // where the session placed the module
  ~Module() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
};

DwarfLines::DwarfLines() = default;
DwarfLines::~DwarfLines() = default;

DwarfLines::Module* DwarfLines::Open(const std::string& path) {
  auto it = modules_.find(path);
  if (it != modules_.end()) return it->second.get();
  auto m = std::make_unique<Module>();
  m->dwfl = dwfl_begin(&kOffline);
  if (m->dwfl != nullptr) {
    m->mod = dwfl_report_offline(m->dwfl, path.c_str(), path.c_str(), -1);
    dwfl_report_end(m->dwfl, nullptr, nullptr);
    if (m->mod != nullptr) {
      dwfl_module_info(m->mod, nullptr, &m->start, nullptr, nullptr, nullptr,
                       nullptr, nullptr);
    }
  }
  Module* raw = m.get();
  modules_.emplace(path, std::move(m));
  return raw;
}

bool DwarfLines::Lookup(const std::string& module, uint64_t offset,
                        SourceLine* out) {
  *out = SourceLine{};
  if (module.empty() || offset == 0) return false;
  Module* m = Open(module);
  if (m == nullptr || m->mod == nullptr) return false;
  // The module offset counts from the lowest loaded address, which the
  // offline session placed at `start`; one byte back is the call itself.
  const Dwarf_Addr addr = m->start + offset - 1;
  Dwarf_Die cu;
  Dwarf_Addr bias = 0;
  const char* file = nullptr;
  int lineno = 0;
  if (FindUnit(m->mod, addr, &cu, &bias)) {
    out->function = ScopeFunction(&cu, addr - bias);
    if (Dwarf_Line* line = dwarf_getsrc_die(&cu, addr - bias)) {
      if (dwarf_lineno(line, &lineno) == 0) {
        file = dwarf_linesrc(line, nullptr, nullptr);
      }
    }
  }
  if (out->function.empty()) {
    if (const char* name = dwfl_module_addrname(m->mod, addr)) {
      out->function = Demangled(name);
    }
  }
  if (file == nullptr || lineno <= 0) return false;
  out->file = file;
  out->line = lineno;
  return true;
}

}  // namespace hflow::tools
