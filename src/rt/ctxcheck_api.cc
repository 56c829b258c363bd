// The public view of hflow ctxcheck's findings (hflow/ctxcheck.h) over the
// recorder's sites (rt/ctxcheck.h).
// Thread-safety: as the recorder (its table is locked).
#include "hflow/ctxcheck.h"
#include "rt/ctxcheck.h"
#include "rt/ctxcheck_user_call.h"

namespace hflow {

std::vector<CtxCheckFinding> CtxCheckFindings() {
  std::vector<CtxCheckFinding> out;
  for (const rt::ctxcheck::Site& s : rt::ctxcheck::Sites()) {
    CtxCheckFinding f;
    f.site = s.id;
    f.kind = rt::ctxcheck::KindName(s.kind);
    if (s.note.op != rt::Op::kCount) f.op = rt::OpName(s.note.op);
    f.message = s.message;
    f.thread = s.thread;
    f.tid = s.tid;
    f.count = s.count;
    f.device = s.note.device;
    f.context_device = s.note.ctx_device;
    f.devices = s.devices;
    if (const rt::ctxcheck::ScriptFrame* sf =
            rt::ctxcheck::FirstUserScriptFrame(s)) {
      f.location =
          sf->function + " (" + sf->file + ":" + std::to_string(sf->line) + ")";
    } else if (const util::Frame* fr = rt::ctxcheck::FirstUserFrame(s)) {
      f.location = util::FormatFrame(*fr);
    }
    if (s.kind == rt::ctxcheck::Kind::kContextLeak) {
      f.node = s.leak.node;
      f.function = s.leak.function;
      f.instance = s.leak.instance;
      f.phase = s.leak.phase;
    }
    out.push_back(std::move(f));
  }
  return out;
}

void ClearCtxCheckFindings() { rt::ctxcheck::internal::ResetSites(); }

void RunCtxCheckedUserCall(const char* what, const char* phase,
                           const std::function<void()>& fn) {
  util::UdfSite site;  // UserCall reads it only with the check on
  site.node = what;
  rt::ctxcheck::UserCall call(nullptr, &site, phase);
  fn();
}

void SetCtxCheckScriptStackProvider(CtxCheckScriptStackFn fn) {
  rt::ctxcheck::SetScriptStackProvider(fn);
}

}  // namespace hflow
