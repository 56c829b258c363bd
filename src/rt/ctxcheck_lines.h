// hflow ctxcheck's output lines: the messages of each kind of finding, and
// a site as a JSON `finding` or `count` line or as text (rt/ctxcheck.h,
// docs/ctxcheck.md has the fields).
//
// Thread-safety: pure functions.
#ifndef HFLOW_RT_CTXCHECK_LINES_H_
#define HFLOW_RT_CTXCHECK_LINES_H_

#include <cstdint>
#include <string>

#include "rt/ctxcheck.h"

namespace hflow {
namespace rt {
namespace ctxcheck {
namespace lines {

// `v` in lower-case hex, zero-padded to `width` digits.
std::string Hex(uint64_t v, int width);
// What an unbound or cross-device call did, on `thread`, and how to fix it.
std::string Message(const Note& n, const std::string& thread,
                    const Status& result);
// What a context leak left behind, and how to fix it.
std::string LeakMessage(const Leak& k, const std::string& thread);
// A site's `finding` JSON line (with its newline).
std::string FindingLine(const Site& s);
// A site's `count` JSON line; `final_count` at exit.
std::string CountLine(const Site& s, bool final_count);
// A site's finding as text, for stderr.
std::string TextLine(const Site& s);

}  // namespace lines
}  // namespace ctxcheck
}  // namespace rt
}  // namespace hflow

#endif  // HFLOW_RT_CTXCHECK_LINES_H_
