// hflow ctxcheck's recorder: the mode, the per-thread note, the site table
// and the JSONL / text writers (see ctxcheck.h).
//
// Thread-safety: the recorder is one leaked object (the atexit handler may
// run after static destructors); its table and output are guarded by mu.
// Each JSON line is one write(2) on an O_APPEND descriptor, so lines of
// several processes (hflow-worker children) never interleave.
#include "rt/ctxcheck.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "util/mutex.h"
#include "util/thread_name.h"

namespace hflow {
namespace rt {
namespace ctxcheck {
namespace {

// Frames captured per finding, and how many of the user's key a site.
constexpr int kMaxFrames = 48;
constexpr size_t kSiteFrames = 8;

struct SiteState {
  Site site;
  uint64_t written_count = 1;  // the count the output last showed
};

struct Recorder {
  util::Mutex mu;
  std::unordered_map<uint64_t, size_t> index GUARDED_BY(mu);
  std::vector<SiteState> sites GUARDED_BY(mu);
  std::string file GUARDED_BY(mu);
  int fd GUARDED_BY(mu) = -1;
  bool open_failed GUARDED_BY(mu) = false;
  bool atexit_registered GUARDED_BY(mu) = false;
};

Recorder& R() {
  static Recorder* r = [] {
    auto* rec = new Recorder;
    const char* f = std::getenv("HFLOW_CTXCHECK_FILE");
    util::MutexLock lock(rec->mu);
    if (f != nullptr) rec->file = f;
    return rec;
  }();
  return *r;
}

uint64_t Fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex(uint64_t v, int width) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%0*llx", width,
           static_cast<unsigned long long>(v));
  return buf;
}

std::string Dev(int32_t d) { return "device " + std::to_string(d); }

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

nlohmann::json OrNull(int32_t v) {
  return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v);
}

// The first user frame, else the first frame.
const util::Frame* Location(const Site& s) {
  for (const util::Frame& f : s.frames) {
    if (!util::IsHflowOrSystemModule(f.module)) return &f;
  }
  return s.frames.empty() ? nullptr : &s.frames[0];
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
  if (const util::Frame* f = Location(s)) {
    loc = {{"module", f->module}, {"function", f->function}};
  }
  nlohmann::json j = {
      {"type", "finding"},
      {"schema", 1},
      {"site", s.id},
      {"kind", KindName(s.kind)},
      {"op", OpName(s.note.op)},
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
  if (const util::Frame* f = Location(s)) {
    line += "\n    at " + util::FormatFrame(*f);
  }
  return line + "\n";
}

void WriteAll(int fd, const std::string& text) {
  // One write(2) per line: with O_APPEND, lines of several processes never
  // interleave. A short write (disk full) loses the rest of the line.
  ssize_t n;
  do {
    n = ::write(fd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
}

// Writes a JSON line to the output file, or `text` (if any) to stderr when
// there is no file or it cannot be opened.
void Emit(Recorder& r, const std::string& json, const std::string& text)
    REQUIRES(r.mu) {
  if (!r.file.empty() && r.fd < 0 && !r.open_failed) {
    r.fd =
        ::open(r.file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (r.fd < 0) {
      r.open_failed = true;
      WriteAll(2, "hflow ctxcheck: cannot open HFLOW_CTXCHECK_FILE '" + r.file +
                      "': " + std::strerror(errno) +
                      "; findings go to stderr\n");
    }
  }
  if (r.fd >= 0) {
    WriteAll(r.fd, json);
  } else if (!text.empty()) {
    WriteAll(2, text);
  }
}

void WriteFinalCountsLocked(Recorder& r) REQUIRES(r.mu) {
  for (SiteState& st : r.sites) {
    if (st.site.count == st.written_count) continue;
    st.written_count = st.site.count;
    std::string text;
    if (r.fd < 0 && (r.file.empty() || r.open_failed)) {
      text = "hflow ctxcheck: site " + st.site.id + " (" +
             KindName(st.site.kind) + " " + OpName(st.site.note.op) +
             ") was hit " + std::to_string(st.site.count) + " times\n";
    }
    Emit(r, CountLine(st.site, /*final_count=*/true), text);
  }
}

void AtExit() {
  Recorder& r = R();
  util::MutexLock lock(r.mu);
  WriteFinalCountsLocked(r);
}

void AddDevice(std::vector<int32_t>* devices, int32_t d) {
  if (d < 0) return;
  auto it = std::lower_bound(devices->begin(), devices->end(), d);
  if (it == devices->end() || *it != d) devices->insert(it, d);
}

// "ok", "no_context", "context_mismatch": the status code as an identifier.
std::string ResultName(const Status& s) {
  if (s.ok()) return "ok";
  std::string name = StatusCodeName(s.code());
  std::replace(name.begin(), name.end(), ' ', '_');
  return name;
}

bool PowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

const char* ModeName(Mode mode) {
  switch (mode) {
    case Mode::kOff:
      return "off";
    case Mode::kReport:
      return "report";
    case Mode::kStrict:
      return "strict";
  }
  return "off";
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kNone:
      return "";
    case Kind::kUnbound:
      return "unbound";
    case Kind::kCrossDevice:
      return "cross_device";
  }
  return "";
}

bool ParseModeName(const std::string& name, Mode* mode) {
  for (Mode m : {Mode::kOff, Mode::kReport, Mode::kStrict}) {
    if (name == ModeName(m)) {
      *mode = m;
      return true;
    }
  }
  return false;
}

Mode internal::ParseEnvValue(const char* value, bool* known) {
  *known = true;
  if (value == nullptr) return Mode::kOff;
  std::string v = value;
  if (v.empty() || v == "off" || v == "0") return Mode::kOff;
  if (v == "report" || v == "1" || v == "on") return Mode::kReport;
  if (v == "strict") return Mode::kStrict;
  *known = false;
  return Mode::kOff;
}

Mode EnvMode() {
  static const Mode mode = [] {
    const char* v = std::getenv("HFLOW_CTXCHECK");
    bool known = true;
    Mode m = internal::ParseEnvValue(v, &known);
    if (!known) {
      WriteAll(2, std::string("hflow: HFLOW_CTXCHECK='") + v +
                      "' is not a ctxcheck mode (report, strict or off); "
                      "the check stays off\n");
    }
    return m;
  }();
  return mode;
}

Note& PendingNote() {
  // Plain thread_local: only slow paths touch it (Note [TLS model]).
  thread_local Note note;
  return note;
}

void Report(const Note& note, Mode mode, const Status& result) {
  // Skip Report itself; the rest is the sim's epilogue, hflow's entry point
  // and the user's code.
  std::vector<uintptr_t> pcs = util::CaptureStack(/*skip=*/1, kMaxFrames);
  // A site is keyed by module name and offset, not address, so that the
  // processes of one run (hflow-worker children, other address layouts)
  // give one site the same id and the command can merge them.
  std::vector<util::Frame> modules;
  modules.reserve(pcs.size());
  for (uintptr_t pc : pcs) modules.push_back(util::ModuleOf(pc));
  std::vector<const util::Frame*> key;
  for (const util::Frame& m : modules) {
    if (util::IsHflowOrSystemModule(m.module)) continue;
    key.push_back(&m);
    if (key.size() == kSiteFrames) break;
  }
  // hflow's own threads have no user frame: their whole stack keys the site.
  for (size_t i = 0; key.empty() && i < modules.size() && i < kSiteFrames;
       ++i) {
    key.push_back(&modules[i]);
  }
  uint64_t h = 14695981039346656037ull;
  uint8_t kind = static_cast<uint8_t>(note.kind);
  int op = static_cast<int>(note.op);
  h = Fnv1a(h, &kind, sizeof(kind));
  h = Fnv1a(h, &op, sizeof(op));
  for (const util::Frame* m : key) {
    std::string base = util::ModuleBaseName(m->module);
    uintptr_t offset = m->pc - m->module_base;
    h = Fnv1a(h, base.data(), base.size());
    h = Fnv1a(h, &offset, sizeof(offset));
  }

  Recorder& r = R();
  util::MutexLock lock(r.mu);
  auto it = r.index.find(h);
  if (it != r.index.end()) {
    SiteState& st = r.sites[it->second];
    ++st.site.count;
    AddDevice(&st.site.devices, note.touched);
    if (PowerOfTwo(st.site.count)) {
      st.written_count = st.site.count;
      Emit(r, CountLine(st.site, /*final_count=*/false), "");
    }
    return;
  }
  SiteState st;
  Site& s = st.site;
  s.id = Hex(h, 16);
  s.kind = note.kind;
  s.note = note;
  s.mode = ModeName(mode);
  s.result = ResultName(result);
  s.thread = util::CurrentThreadName();
  s.tid = static_cast<int64_t>(::syscall(SYS_gettid));
  s.pid = static_cast<int64_t>(::getpid());
  s.count = 1;
  AddDevice(&s.devices, note.touched);
  for (uintptr_t pc : pcs) s.frames.push_back(util::Symbolize(pc));
  s.message = Message(note, s.thread, result);
  r.index.emplace(h, r.sites.size());
  Emit(r, FindingLine(s), TextLine(s));
  r.sites.push_back(std::move(st));
  if (!r.atexit_registered) {
    r.atexit_registered = true;
    std::atexit(AtExit);
  }
}

std::vector<Site> Sites() {
  Recorder& r = R();
  util::MutexLock lock(r.mu);
  std::vector<Site> out;
  for (const SiteState& st : r.sites) out.push_back(st.site);
  return out;
}

void internal::SetOutputFile(const std::string& path) {
  Recorder& r = R();
  util::MutexLock lock(r.mu);
  if (r.fd >= 0) ::close(r.fd);
  r.fd = -1;
  r.open_failed = false;
  r.file = path;
}

void internal::WriteFinalCounts() {
  Recorder& r = R();
  util::MutexLock lock(r.mu);
  WriteFinalCountsLocked(r);
}

void internal::ResetSites() {
  Recorder& r = R();
  util::MutexLock lock(r.mu);
  r.index.clear();
  r.sites.clear();
}

}  // namespace ctxcheck
}  // namespace rt
}  // namespace hflow
