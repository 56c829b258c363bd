// Merging, symbolizing and writing `hflow ctxcheck`'s findings (see
// ctxcheck_report.h).
// Thread-safety: none needed.
#include "tools/ctxcheck_report.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "tools/dwarf_lines.h"

namespace hflow::tools {
namespace {

using Json = nlohmann::json;

// A site's hits per process: the highest count its lines showed (finding
// lines count 1, count lines are running totals of their process).
struct SiteHits {
  size_t index = 0;  // into report->findings
  std::map<int64_t, uint64_t> per_pid;
};

uint64_t ParseHex(const std::string& s) {
  return std::strtoull(s.c_str(), nullptr, 16);
}

void AddDevices(const Json& j, std::set<int32_t>* out) {
  if (!j.is_array()) return;
  for (const Json& d : j) {
    if (d.is_number_integer()) out->insert(d.get<int32_t>());
  }
}

std::string Where(const Json& loc) {
  if (!loc.is_object()) return "";
  std::string fn = loc.value("function", "");
  std::string file = loc.value("file", "");
  std::string module = loc.value("module", "");
  // A script's location names its language: "work (/app/job.py:12,
  // python)".
  const std::string language = loc.value("language", "");
  std::string out = fn.empty() ? "?" : fn;
  if (!file.empty()) {
    out += " (" + file + ":" + std::to_string(loc.value("line", 0)) +
           (language.empty() ? "" : ", " + language) + ")";
  }
  if (!module.empty()) out += " in " + module;
  return out;
}

}  // namespace

Status ReadFindings(const std::string& path, CtxCheckReport* report) {
  std::ifstream in(path);
  if (!in) return Status::OK();  // no process wrote anything
  std::map<std::string, SiteHits> sites;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("type")) {
      report->warnings.push_back("line " + std::to_string(n) +
                                 " of the findings is not a JSON object "
                                 "(a process killed while writing it?)");
      continue;
    }
    const std::string type = j.value("type", "");
    if (type == "process") {
      report->processes.push_back(std::move(j));
      continue;
    }
    const std::string site = j.value("site", "");
    const int64_t pid = j.value("pid", int64_t{0});
    if (site.empty() || (type != "finding" && type != "count")) continue;
    auto it = sites.find(site);
    if (it == sites.end()) {
      if (type != "finding") continue;  // its finding line was lost
      SiteHits h;
      h.index = report->findings.size();
      it = sites.emplace(site, h).first;
      MergedFinding f;
      f.first = j;
      report->findings.push_back(std::move(f));
    }
    MergedFinding& f = report->findings[it->second.index];
    uint64_t& hits = it->second.per_pid[pid];
    hits = std::max<uint64_t>(hits, j.value("count", uint64_t{1}));
    f.pids.insert(pid);
    AddDevices(j.value("devices", Json::array()), &f.devices);
  }
  for (auto& [site, h] : sites) {
    uint64_t total = 0;
    for (const auto& [pid, c] : h.per_pid) total += c;
    report->findings[h.index].count = total;
  }
  return Status::OK();
}

void SymbolizeFindings(CtxCheckReport* report) {
  DwarfLines lines;
  for (MergedFinding& f : report->findings) {
    Json* frames = &f.first["frames"];
    if (!frames->is_array()) continue;
    Json location = nullptr;
    for (Json& fr : *frames) {
      if (!fr.value("user", false)) continue;
      SourceLine src;
      const std::string module = fr.value("module", "");
      const uint64_t offset = ParseHex(fr.value("module_offset", "0"));
      if (lines.Lookup(module, offset, &src)) {
        fr["file"] = src.file;
        fr["line"] = src.line;
      }
      // The debug information names what dladdr could not (no -rdynamic)
      // and what was inlined into the function dladdr saw.
      if (!src.function.empty()) fr["function"] = src.function;
      if (location.is_null()) {
        location = {{"module", module}, {"function", fr.value("function", "")}};
        if (fr.contains("file")) {
          location["file"] = fr["file"];
          location["line"] = fr["line"];
        }
      }
    }
    // A script's location (its own stack's user frame) stays: the native
    // frames of an interpreter are not where the program made the call.
    const Json& had = f.first["location"];
    const bool script = had.is_object() && had.contains("language");
    if (!location.is_null() && !script) f.first["location"] = location;
  }
}

int ExitCodeOf(const CtxCheckReport& r) {
  if (!r.child.started) {
    return r.child.spawn_errno == ENOENT ? kCtxNotFound : kCtxCannotExecute;
  }
  if (r.child.timed_out) return kCtxTimeout;
  if (!r.findings.empty()) return kCtxFindings;
  const bool failed = !r.child.exited || r.child.exit_code != 0;
  if (r.processes.empty()) return failed ? kCtxProgramFailed : kCtxNoHflow;
  return failed ? kCtxProgramFailed : kCtxClean;
}

std::string ReportText(const CtxCheckReport& r) {
  std::ostringstream out;
  std::map<std::string, int> by_kind;
  for (const MergedFinding& f : r.findings) {
    const Json& j = f.first;
    const std::string kind = j.value("kind", "");
    ++by_kind[kind];
    out << "hflow ctxcheck: " << kind;
    if (j.contains("op") && j["op"].is_string()) {
      out << " " << j["op"].get<std::string>();
    }
    out << " [site " << j.value("site", "") << ", " << f.count
        << (f.count == 1 ? " hit" : " hits");
    if (f.pids.size() > 1) out << " in " << f.pids.size() << " processes";
    out << "]\n    " << j.value("message", "") << "\n";
    std::string where = Where(j.value("location", Json()));
    if (!where.empty()) out << "    at " << where << "\n";
  }
  for (const std::string& w : r.warnings) {
    out << "hflow ctxcheck: warning: " << w << "\n";
  }
  out << "hflow ctxcheck: ";
  if (r.findings.empty()) {
    out << "no findings";
  } else {
    out << r.findings.size() << (r.findings.size() == 1 ? " site" : " sites")
        << " (";
    bool first = true;
    for (const auto& [kind, n] : by_kind) {
      out << (first ? "" : ", ") << n << " " << kind;
      first = false;
    }
    out << ")";
  }
  out << " in " << r.processes.size()
      << (r.processes.size() == 1 ? " process" : " processes")
      << "; the program: " << DescribeChild(r.child, r.timeout_s) << "; exit "
      << ExitCodeOf(r) << "\n";
  if (r.child.started && r.processes.empty() && r.findings.empty()) {
    out << "hflow ctxcheck: the program never started hflow's runtime with "
           "the check on: is it linked against hflow's SDK (libhflow, "
           "libascendcl, the dataflow package) and does it use the device "
           "runtime?\n";
  }
  return out.str();
}

Json ReportJson(const CtxCheckReport& r) {
  Json findings = Json::array();
  std::map<std::string, uint64_t> kinds;
  uint64_t hits = 0;
  for (const MergedFinding& f : r.findings) {
    Json j = f.first;
    j.erase("type");
    j["count"] = f.count;
    j["pids"] = f.pids;
    j["devices"] = f.devices;
    kinds[j.value("kind", "")] += 1;
    hits += f.count;
    findings.push_back(std::move(j));
  }
  Json program = {
      {"started", r.child.started},
      {"exit_code", r.child.exited ? Json(r.child.exit_code) : Json(nullptr)},
      {"signal", r.child.signal != 0 ? Json(r.child.signal) : Json(nullptr)},
      {"timed_out", r.child.timed_out},
      {"interrupted", r.child.interrupted},
      {"seconds", r.child.seconds},
      {"status", DescribeChild(r.child, r.timeout_s)}};
  return {{"schema", 1},
          {"tool", "hflow ctxcheck"},
          {"command", r.command},
          {"mode", r.mode},
          {"devices", r.devices},
          {"cluster", r.cluster_source},
          {"program", program},
          {"processes", r.processes},
          {"summary",
           {{"sites", r.findings.size()}, {"hits", hits}, {"by_kind", kinds}}},
          {"findings", findings},
          {"warnings", r.warnings},
          {"exit_code", ExitCodeOf(r)}};
}

Status WriteJsonFile(const std::string& path, const Json& j) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << "\n";
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::InvalidArgument("cannot write '" + path +
                                     "'; check the folder exists and is "
                                     "writable");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::InvalidArgument("cannot write '" + path + "'");
  }
  return Status::OK();
}

}  // namespace hflow::tools
