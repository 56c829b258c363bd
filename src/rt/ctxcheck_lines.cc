// hflow ctxcheck's output lines (see ctxcheck_lines.h).
// Thread-safety: pure functions.
#include "rt/ctxcheck_lines.h"

#include <cstdio>
#include <nlohmann/json.hpp>

namespace hflow {
namespace rt {
namespace ctxcheck {
namespace lines {
namespace {

std::string Dev(int32_t d) { return "device " + std::to_string(d); }

std::string Ctx(int32_t d) {
  return d < 0 ? std::string("no context") : Dev(d) + "'s context";
}

nlohmann::json OrNull(int32_t v) {
  return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
}

// The first user frame, else the first frame.
const util::Frame* Location(const Site& s) {
  if (const util::Frame* f = FirstUserFrame(s)) return f;
  return s.frames.empty() ? nullptr : &s.frames[0];
}

}  // namespace

std::string Hex(uint64_t v, int width) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%0*llx", width,
           static_cast<unsigned long long>(v));
  return buf;
}

std::string Message(const Note& n, const std::string& thread,
                    const Status& result) {
  std::string op = OpName(n.op);
  if (n.kind == Kind::kCrossDevice) {
    return op + " touched " + Dev(n.touched) + "'s resources while thread '" +
           thread + "' is bound to a context of " + Dev(n.ctx_device) +
           "; bind " + Dev(n.touched) + " first (SetDevice or " +
           "SetCurrentContext), or use memory of the bound device";
  }
  std::string m;
  if (n.on_implicit) {
    m = op + " on " + Dev(n.device) + ": thread '" + thread +
        "' is still on the context the runtime bound implicitly at an "
        "earlier unbound call (" +
        Dev(n.ctx_device) + "'s default context)";
  } else {
    m = op + " on " + Dev(n.device) + ": no context is bound to thread '" +
        thread + "' (Ascend: EE1018 unless it is the default device)";
  }
  if (!result.ok()) {
    m += "; the call failed: " + std::string(StatusCodeName(result.code()));
  } else if (n.continued_on >= 0) {
    m += "; continued on " + Dev(n.continued_on) + "'s default context";
  }
  return m + "; bind a device on this thread first (SetDevice)";
}

std::string LeakMessage(const Leak& k, const std::string& thread) {
  // A callback that is no UDF (RunCtxCheckedUserCall) has no function:
  // `node` says what it is.
  std::string m = k.function.empty()
                      ? k.node + " returned leaving thread '" + thread + "' on "
                      : "node '" + k.node + "' function '" + k.function +
                            "' (instance " + std::to_string(k.instance) +
                            ") on " + Dev(k.device) + " returned from " +
                            k.phase + " leaving thread '" + thread + "' on ";
  if (k.left_device < 0) {
    m += "no context";
  } else if (k.same_device) {
    m += "another context of " + Dev(k.left_device);
  } else {
    m += Ctx(k.left_device);
  }
  m += " (it entered on " + Ctx(k.entered_device) + ")";
  if (k.switch_op != Op::kCount) {
    m += "; the switch: " + std::string(OpName(k.switch_op)) +
         (k.switch_device >= 0 ? " on " + Dev(k.switch_device) : "");
  }
  return m +
         "; restore the caller's context before returning (save "
         "aclrtGetCurrentContext at entry, aclrtSetCurrentContext before "
         "every return)";
}

std::string FindingLine(const Site& s) {
  nlohmann::json frames = nlohmann::json::array();
  for (const util::Frame& f : s.frames) {
    nlohmann::json j = {{"pc", "0x" + Hex(f.pc, 0)},
                        {"module", f.module},
                        {"function", f.function},
                        {"offset", f.offset},
                        {"module_offset", "0x" + Hex(f.pc - f.module_base, 0)},
                        {"user", !util::IsHflowOrSystemModule(f.module)}};
    if (!f.file.empty()) {
      j["file"] = f.file;
      j["line"] = f.line;
    }
    frames.push_back(std::move(j));
  }
  nlohmann::json loc = nullptr;
  if (const ScriptFrame* f = FirstUserScriptFrame(s)) {
    loc = {{"language", s.script.language},
           {"function", f->function},
           {"file", f->file},
           {"line", f->line}};
  } else if (const util::Frame* f = Location(s)) {
    loc = {{"module", f->module}, {"function", f->function}};
  }
  nlohmann::json j = {
      {"type", "finding"},
      {"schema", 1},
      {"site", s.id},
      {"kind", KindName(s.kind)},
      {"op", s.note.op == Op::kCount ? nlohmann::json(nullptr)
                                     : nlohmann::json(OpName(s.note.op))},
      {"mode", s.mode},
      {"device", OrNull(s.note.device)},
      {"touched_device", OrNull(s.note.touched)},
      {"context_device", OrNull(s.note.ctx_device)},
      {"continued_on", OrNull(s.note.continued_on)},
      {"on_implicit_binding", s.note.on_implicit},
      {"result", s.result},
      {"count", s.count},
      {"devices", s.devices},
      {"thread", {{"name", s.thread}, {"tid", s.tid}, {"pid", s.pid}}},
      {"pid", s.pid},
      {"location", loc},
      {"frames", frames},
      {"message", s.message}};
  if (!s.script.frames.empty()) {
    // "python_stack": the script's frames, innermost first.
    nlohmann::json script = nlohmann::json::array();
    for (const ScriptFrame& f : s.script.frames) {
      script.push_back({{"function", f.function},
                        {"file", f.file},
                        {"line", f.line},
                        {"user", f.user}});
    }
    j[s.script.language + "_stack"] = std::move(script);
  }
  if (s.kind == Kind::kContextLeak) {
    const Leak& k = s.leak;
    j["udf"] = {{"node", k.node},
                {"function", k.function},
                {"instance", k.instance},
                {"device", k.device},
                {"phase", k.phase}};
    j["entered_device"] = OrNull(k.entered_device);
    j["left_device"] = OrNull(k.left_device);
    j["same_device"] = k.same_device;
  }
  return j.dump() + "\n";
}

std::string CountLine(const Site& s, bool final_count) {
  nlohmann::json j = {{"type", "count"},      {"site", s.id},
                      {"pid", s.pid},         {"count", s.count},
                      {"devices", s.devices}, {"final", final_count}};
  return j.dump() + "\n";
}

std::string TextLine(const Site& s) {
  std::string line = "hflow ctxcheck: " + std::string(KindName(s.kind)) +
                     " [site " + s.id + ", tid " + std::to_string(s.tid) +
                     "]: " + s.message;
  if (const ScriptFrame* f = FirstUserScriptFrame(s)) {
    line += "\n    at " + f->function + " (" + f->file + ":" +
            std::to_string(f->line) + ", " + s.script.language + ")";
  } else if (const util::Frame* f = Location(s)) {
    line += "\n    at " + util::FormatFrame(*f);
  }
  return line + "\n";
}

}  // namespace lines
}  // namespace ctxcheck
}  // namespace rt
}  // namespace hflow
