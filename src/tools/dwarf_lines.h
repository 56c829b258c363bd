// Source file and line of a program counter, read offline from the DWARF
// line tables of the module that held it, with elfutils' libdwfl (Debian's
// libdw): `hflow ctxcheck` turns the frames the checked program recorded
// (module path and module offset) into file:line after it has exited, so
// the program pays nothing for it. Separate debug files are found as gdb
// finds them (build id, .gnu_debuglink, /usr/lib/debug).
//
// Thread-safety: a DwarfLines belongs to one thread.
#ifndef HFLOW_TOOLS_DWARF_LINES_H_
#define HFLOW_TOOLS_DWARF_LINES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace hflow::tools {

struct SourceLine {
  std::string file;  // as the compiler wrote it (absolute when it could)
  int line = 0;      // 0: unknown
  // The innermost function by the debug information (an inlined one
  // included), else the symbol table's; demangled; "" unknown.
  std::string function;
};

class DwarfLines {
 public:
  DwarfLines();
  ~DwarfLines();
  DwarfLines(const DwarfLines&) = delete;
  DwarfLines& operator=(const DwarfLines&) = delete;

  // Looks up the return address at `offset` from `module`'s load base (a
  // finding's module_offset): the call before it, as a debugger shows it.
  // False when the module cannot be read or has no line for it (then
  // `out->function` may still be set from the symbol table).
  bool Lookup(const std::string& module, uint64_t offset, SourceLine* out);

 private:
  struct Module;
  Module* Open(const std::string& path);
  std::map<std::string, std::unique_ptr<Module>> modules_;
};

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_DWARF_LINES_H_
