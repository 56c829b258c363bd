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
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "rt/ctxcheck_lines.h"
#include "util/mutex.h"
#include "util/thread_name.h"

namespace hflow {
namespace rt {
namespace ctxcheck {
namespace {

using lines::CountLine;
using lines::FindingLine;
using lines::Hex;
using lines::LeakMessage;
using lines::Message;
using lines::TextLine;

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
             KindName(st.site.kind) +
             (st.site.note.op == Op::kCount
                  ? std::string()
                  : " " + std::string(OpName(st.site.note.op))) +
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
    case Kind::kContextLeak:
      return "context_leak";
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

namespace {
// The runtimes with ctxcheck on: a few slots, lock-free to read (UserCall
// asks per UDF call). More at once than there are slots (no program has
// them) makes IsOn answer yes for every runtime.
constexpr int kRuntimeSlots = 16;
std::atomic<const DeviceRuntime*> g_on[kRuntimeSlots] = {};
std::atomic<int> g_overflow{0};
}  // namespace

std::atomic<int> internal::g_active_runtimes{0};

bool IsOn(const DeviceRuntime* runtime) {
  if (g_overflow.load(std::memory_order_relaxed) > 0) return true;
  for (const auto& slot : g_on) {
    if (slot.load(std::memory_order_relaxed) == runtime) return true;
  }
  return false;
}

namespace {
// Note [The process line]
// The first runtime of a process that turns the check on writes one
// `process` line: `hflow ctxcheck` tells a clean run (process lines, no
// findings) from a program that never ran hflow's runtime with the check
// (no line at all), and names every process of the run.
void WriteProcessLine() {
  static std::atomic<bool> written{false};
  if (written.exchange(true)) return;
  char exe[4096];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  nlohmann::json j = {{"type", "process"},
                      {"schema", 1},
                      {"pid", static_cast<int64_t>(::getpid())},
                      {"exe", n > 0 ? std::string(exe, size_t(n)) : ""}};
  Recorder& r = R();
  util::MutexLock lock(r.mu);
  // No text form: on stderr the line would only be noise.
  Emit(r, j.dump() + "\n", "");
}
}  // namespace

void internal::SetRuntimeOn(const DeviceRuntime* runtime, bool on) {
  if (on) {
    WriteProcessLine();
    internal::g_active_runtimes.fetch_add(1, std::memory_order_relaxed);
    for (auto& slot : g_on) {
      const DeviceRuntime* empty = nullptr;
      if (slot.compare_exchange_strong(empty, runtime)) return;
    }
    g_overflow.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  internal::g_active_runtimes.fetch_sub(1, std::memory_order_relaxed);
  for (auto& slot : g_on) {
    const DeviceRuntime* mine = runtime;
    if (slot.compare_exchange_strong(mine, nullptr)) return;
  }
  g_overflow.fetch_sub(1, std::memory_order_relaxed);
}

Note& PendingNote() {
  // Plain thread_local: only slow paths touch it (Note [TLS model]).
  thread_local Note note;
  return note;
}

namespace {

// A site's key: its kind and call, the first kSiteFrames frames of the
// user's code by module and offset, not address (so that the processes of
// one run, hflow-worker children with other address layouts, give a site
// the same id and the command can merge them), and `extra` (a leak's UDF).
uint64_t SiteKey(Kind kind, Op op, const std::vector<uintptr_t>& pcs,
                 const ScriptStack& script, const std::string& extra) {
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
  uint8_t k = static_cast<uint8_t>(kind);
  int o = static_cast<int>(op);
  h = Fnv1a(h, &k, sizeof(k));
  h = Fnv1a(h, &o, sizeof(o));
  h = Fnv1a(h, extra.data(), extra.size());
  for (const util::Frame* m : key) {
    std::string base = util::ModuleBaseName(m->module);
    uintptr_t offset = m->pc - m->module_base;
    h = Fnv1a(h, base.data(), base.size());
    h = Fnv1a(h, &offset, sizeof(offset));
  }
  // A script's place is on its own stack (Note [Script stacks]).
  size_t n = 0;
  for (const ScriptFrame& f : script.frames) {
    if (!f.user) continue;
    h = Fnv1a(h, f.file.data(), f.file.size());
    h = Fnv1a(h, &f.line, sizeof(f.line));
    if (++n == kSiteFrames) break;
  }
  return h;
}

// Counts a hit of the site `h`; at its first, `fill` completes the site
// (note, mode, result, message) and the finding is written.
template <typename Fill>
void Record(uint64_t h, Kind kind, int32_t touched,
            const std::vector<uintptr_t>& pcs, const ScriptStack& script,
            Fill&& fill) {
  Recorder& r = R();
  util::MutexLock lock(r.mu);
  auto it = r.index.find(h);
  if (it != r.index.end()) {
    SiteState& st = r.sites[it->second];
    ++st.site.count;
    AddDevice(&st.site.devices, touched);
    if (PowerOfTwo(st.site.count)) {
      st.written_count = st.site.count;
      Emit(r, CountLine(st.site, /*final_count=*/false), "");
    }
    return;
  }
  SiteState st;
  Site& s = st.site;
  s.id = Hex(h, 16);
  s.kind = kind;
  // A script's threads are known by their names there (Python 3.11 does not
  // give them to the OS).
  s.thread = script.thread.empty() ? util::CurrentThreadName() : script.thread;
  s.script = script;
  s.tid = static_cast<int64_t>(::syscall(SYS_gettid));
  s.pid = static_cast<int64_t>(::getpid());
  s.count = 1;
  AddDevice(&s.devices, touched);
  for (uintptr_t pc : pcs) s.frames.push_back(util::Symbolize(pc));
  fill(s);
  r.index.emplace(h, r.sites.size());
  Emit(r, FindingLine(s), TextLine(s));
  r.sites.push_back(std::move(st));
  if (!r.atexit_registered) {
    r.atexit_registered = true;
    std::atexit(AtExit);
  }
}

}  // namespace

void Report(const Note& note, Mode mode, const Status& result) {
  // Skip Report itself; the rest is the sim's epilogue, hflow's entry point
  // and the user's code.
  std::vector<uintptr_t> pcs = util::CaptureStack(/*skip=*/1, kMaxFrames);
  ScriptStack script = CaptureScriptStack();
  uint64_t h = SiteKey(note.kind, note.op, pcs, script, "");
  Record(h, note.kind, note.touched, pcs, script, [&](Site& s) {
    s.note = note;
    s.mode = ModeName(mode);
    s.result = ResultName(result);
    s.message = Message(note, s.thread, result);
  });
}

void ReportLeak(const Leak& leak, const std::vector<uintptr_t>& pcs,
                const ScriptStack& script) {
  // One site per UDF function and phase (and switching call): a leak's
  // stack is the switch's, which the same code reaches from every instance.
  std::string extra = leak.node + '\0' + leak.function + '\0' + leak.phase;
  uint64_t h = SiteKey(Kind::kContextLeak, leak.switch_op, pcs, script, extra);
  Record(h, Kind::kContextLeak, leak.left_device, pcs, script, [&](Site& s) {
    s.leak = leak;
    s.note.kind = Kind::kContextLeak;
    s.note.op = leak.switch_op;
    s.note.device = leak.device;
    s.note.ctx_device = leak.left_device;
    s.note.touched = leak.left_device;
    s.mode = "report";  // a leak is corrected, never failed
    s.result = "ok";
    s.message = LeakMessage(leak, s.thread);
  });
}

const util::Frame* FirstUserFrame(const Site& s) {
  for (const util::Frame& f : s.frames) {
    if (!util::IsHflowOrSystemModule(f.module)) return &f;
  }
  return nullptr;
}

const ScriptFrame* FirstUserScriptFrame(const Site& s) {
  for (const ScriptFrame& f : s.script.frames) {
    if (f.user) return &f;
  }
  return nullptr;
}

namespace {
std::atomic<ScriptStackFn> g_script_stack{nullptr};
}  // namespace

void SetScriptStackProvider(ScriptStackFn fn) {
  g_script_stack.store(fn, std::memory_order_release);
}

ScriptStack CaptureScriptStack() {
  ScriptStack out;
  ScriptStackFn fn = g_script_stack.load(std::memory_order_acquire);
  if (fn == nullptr || !fn(&out)) return ScriptStack();
  return out;
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
