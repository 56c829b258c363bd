// `hflow ctxcheck`'s SARIF 2.1.0 log (OASIS Static Analysis Results
// Interchange Format), what CI code-scanning views read: one rule per kind
// of finding, one result per site with its first user frame as the
// location (file:line when the debug info had it, else the module), the
// whole stack, and the site id as a partial fingerprint so that a view
// tracks a finding across runs. Arrays of one element are spelled
// Json::array({...}): a braced list of one json is a copy under clang and
// an array under GCC.
// Thread-safety: none needed.
#include <map>

#include "tools/ctxcheck_report.h"

namespace hflow::tools {
namespace {

using Json = nlohmann::json;

struct Rule {
  const char* kind;
  const char* id;
  const char* name;
  const char* level;
  const char* short_text;
  const char* full_text;
};

const Rule kRules[] = {
    {"unbound", "HFLOW-CTX001", "UnboundDeviceCall", "error",
     "Device call on a thread with no bound context",
     "A runtime call was made on a thread that bound no device context. "
     "Ascend's runtime binds the default device's context implicitly, so "
     "the call works on device 0 and fails with EE1018 on every other "
     "device. Bind the device on the thread first (aclrtSetDevice or "
     "aclrtSetCurrentContext)."},
    {"cross_device", "HFLOW-CTX002", "CrossDeviceAccess", "error",
     "Device resources used under another device's context",
     "A call touched one device's memory or objects while the thread was "
     "bound to a context of another device. Bind the device the resources "
     "belong to first, or use resources of the bound device."},
    {"context_leak", "HFLOW-CTX003", "ContextLeak", "warning",
     "A UDF returned on another context than it was called on",
     "A call into user code (a UDF's Init, Proc, creator or destructor) "
     "returned with its thread bound to another context than it entered "
     "with, so the code that runs next on the thread runs on the wrong "
     "device. Save the caller's context at entry (aclrtGetCurrentContext) "
     "and restore it before every return (aclrtSetCurrentContext)."},
};

// An absolute path as a file URI (percent-encoding what a URI may not hold
// in a path); a relative one stays relative (to the run's folder).
std::string FileUri(const std::string& path) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out = path.empty() || path[0] != '/' ? "" : "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) ||
        std::string("/-._~").find(char(c)) != std::string::npos) {
      out += char(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// A frame's location: its source line where known, else its module.
Json Location(const Json& frame) {
  Json phys;
  const std::string file = frame.value("file", "");
  if (!file.empty()) {
    phys["artifactLocation"] = {{"uri", FileUri(file)}};
    phys["region"] = {{"startLine", frame.value("line", 1)}};
  } else {
    phys["artifactLocation"] = {{"uri", FileUri(frame.value("module", ""))}};
  }
  Json loc = {{"physicalLocation", phys}};
  const std::string fn = frame.value("function", "");
  if (!fn.empty()) {
    loc["logicalLocations"] =
        Json::array({Json{{"fullyQualifiedName", fn}, {"kind", "function"}}});
  }
  return loc;
}

Json Result(const MergedFinding& f, const std::map<std::string, int>& index) {
  const Json& j = f.first;
  const std::string kind = j.value("kind", "");
  auto it = index.find(kind);
  const int rule = it == index.end() ? 0 : it->second;
  Json result = {
      {"ruleId", kRules[rule].id},
      {"ruleIndex", rule},
      {"level", kRules[rule].level},
      {"message", {{"text", j.value("message", "")}}},
      {"partialFingerprints", {{"hflowCtxcheckSite/v1", j.value("site", "")}}}};
  Json frames = Json::array();
  const Json* first_user = nullptr;
  if (j.contains("frames") && j["frames"].is_array()) {
    for (const Json& fr : j["frames"]) {
      if (first_user == nullptr && fr.value("user", false)) first_user = &fr;
      frames.push_back({{"location", Location(fr)}});
    }
  }
  // A Python program's place is on its own stack (the native one is the
  // interpreter's): its first user frame is the location, and the stack
  // comes first.
  Json script = Json::array();
  const Json* first_script = nullptr;
  if (j.contains("python_stack") && j["python_stack"].is_array()) {
    for (const Json& fr : j["python_stack"]) {
      if (first_script == nullptr && fr.value("user", false)) {
        first_script = &fr;
      }
      script.push_back({{"location", Location(fr)}});
    }
  }
  if (first_script != nullptr) {
    result["locations"] = Json::array({Location(*first_script)});
  } else if (first_user != nullptr) {
    result["locations"] = Json::array({Location(*first_user)});
  } else if (!frames.empty()) {
    result["locations"] = Json::array({frames[0]["location"]});
  }
  Json stacks = Json::array();
  if (!script.empty()) {
    stacks.push_back(
        Json{{"message", {{"text", "the Python stack"}}}, {"frames", script}});
  }
  if (!frames.empty()) {
    stacks.push_back(
        Json{{"message", {{"text", "the call's stack"}}}, {"frames", frames}});
  }
  if (!stacks.empty()) result["stacks"] = stacks;
  Json props = {{"count", f.count}, {"pids", f.pids}, {"devices", f.devices}};
  if (j.contains("thread")) props["thread"] = j["thread"];
  if (j.contains("udf")) props["udf"] = j["udf"];
  result["properties"] = props;
  return result;
}

}  // namespace

Json SarifJson(const CtxCheckReport& r) {
  Json rules = Json::array();
  std::map<std::string, int> index;
  for (int i = 0; i < int(sizeof(kRules) / sizeof(kRules[0])); ++i) {
    const Rule& rule = kRules[i];
    index[rule.kind] = i;
    rules.push_back({{"id", rule.id},
                     {"name", rule.name},
                     {"shortDescription", {{"text", rule.short_text}}},
                     {"fullDescription", {{"text", rule.full_text}}},
                     {"help", {{"text", rule.full_text}}},
                     {"defaultConfiguration", {{"level", rule.level}}}});
  }
  Json results = Json::array();
  for (const MergedFinding& f : r.findings) results.push_back(Result(f, index));
  std::string command_line;
  for (const std::string& a : r.command) {
    command_line += (command_line.empty() ? "" : " ") + a;
  }
  Json invocation = {
      {"executionSuccessful", r.child.started && !r.child.timed_out},
      {"commandLine", command_line}};
  if (r.child.exited) invocation["exitCode"] = r.child.exit_code;
  if (r.child.signal != 0) invocation["exitSignalNumber"] = r.child.signal;
  Json driver = {{"name", "hflow ctxcheck"},
                 {"semanticVersion", "0.1.0"},
                 {"rules", rules}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", Json::array({Json{{"tool", {{"driver", driver}}},
                                     {"invocations", Json::array({invocation})},
                                     {"results", results}}})}};
}

}  // namespace hflow::tools
