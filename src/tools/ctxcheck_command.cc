// `hflow ctxcheck` (see ctxcheck_command.h): the options, the run's
// environment (mode, findings file, cluster), and the report.
//
// Thread-safety: main thread only.
#include "tools/ctxcheck_command.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tools/ctxcheck_child.h"
#include "tools/ctxcheck_report.h"

namespace hflow::tools {
namespace {

namespace fs = std::filesystem;

// A folder of the run's own (findings, cluster file), removed at the end.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr && *base ? base : "/tmp") +
                       "/hflow-ctxcheck-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A report file's folder must exist before the program runs for minutes.
bool CheckOutputPath(const std::string& flag, const std::string& path,
                     std::ostream& err) {
  if (path.empty()) return true;
  fs::path parent = fs::absolute(path).parent_path();
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    err << "hflow ctxcheck: " << flag << " '" << path << "': the folder '"
        << parent.string() << "' does not exist; create it first\n";
    return false;
  }
  return true;
}

// The cluster the program sees: --cluster's file itself, or a compact file
// of --devices (or of the default set) in `dir`; nothing when the caller's
// $RESOURCE_CONFIG_PATH already names one. Sets report->devices.
bool ClusterFile(const CtxCheckArgs& a, const std::string& dir,
                 std::map<std::string, std::string>* env,
                 CtxCheckReport* report, std::ostream& err) {
  ClusterArgs c = a.cluster;
  const char* from_env = std::getenv("RESOURCE_CONFIG_PATH");
  const bool env_file = from_env != nullptr && *from_env != '\0';
  if (c.cluster_file.empty() && c.devices.empty() && !env_file) {
    c.devices = kCtxCheckDefaultDevices;
  }
  ClusterConfig cfg;
  Status s = ResolveCluster(c, &cfg);
  if (!s.ok()) {
    err << "hflow ctxcheck: " << s.message() << "\n";
    return false;
  }
  report->devices = cfg.LocalDeviceIds();
  if (!c.cluster_file.empty()) {
    (*env)["RESOURCE_CONFIG_PATH"] = fs::absolute(c.cluster_file).string();
    report->cluster_source = c.cluster_file;
  } else if (!c.devices.empty()) {
    const std::string path = dir + "/cluster.json";
    // A --devices list gives every device the same memory.
    const std::vector<DeviceDesc>& devices = cfg.LocalNode().devices;
    const uint64_t memory = devices.empty() ? 0 : devices[0].memory_bytes;
    std::ofstream out(path);
    out << nlohmann::json{{"devices", report->devices},
                          {"memory_bytes", memory}}
               .dump()
        << "\n";
    if (!out) {
      err << "hflow ctxcheck: cannot write '" << path << "'\n";
      return false;
    }
    (*env)["RESOURCE_CONFIG_PATH"] = path;
    report->cluster_source = "--devices " + c.devices;
  } else {
    report->cluster_source = std::string("$RESOURCE_CONFIG_PATH ") + from_env;
  }
  return true;
}

}  // namespace

int RunCtxCheck(const CtxCheckArgs& a, std::ostream& err) {
  if (a.program.empty()) {
    err << "hflow ctxcheck: no program to check; give it after '--' "
           "(hflow ctxcheck -- ./my_program ARGS)\n";
    return kCtxUsage;
  }
  if (a.timeout_s < 0) {
    err << "hflow ctxcheck: --timeout must be 0 (none) or more seconds\n";
    return kCtxUsage;
  }
  if (!CheckOutputPath("--json", a.json_file, err) ||
      !CheckOutputPath("--sarif", a.sarif_file, err)) {
    return kCtxUsage;
  }
  TempDir dir;
  if (dir.path().empty()) {
    err << "hflow ctxcheck: cannot make a temporary folder (TMPDIR)\n";
    return kCtxOwnFailure;
  }
  CtxCheckReport report;
  report.command = a.program;
  report.mode = a.strict ? "strict" : "report";
  report.timeout_s = a.timeout_s;
  const std::string findings = dir.path() + "/findings.jsonl";
  std::map<std::string, std::string> env = {{"HFLOW_CTXCHECK", report.mode},
                                            {"HFLOW_CTXCHECK_FILE", findings}};
  if (!ClusterFile(a, dir.path(), &env, &report, err)) return kCtxUsage;

  report.child = RunChild(a.program, env, a.timeout_s);
  if (!report.child.started) {
    err << "hflow ctxcheck: cannot run '" << a.program[0]
        << "': " << DescribeChild(report.child, a.timeout_s)
        << (report.child.spawn_errno == ENOENT
                ? " (not found; give a path or a program on PATH)"
                : " (is it an executable file?)")
        << "\n";
  }
  Status s = ReadFindings(findings, &report);
  if (!s.ok()) {
    err << "hflow ctxcheck: " << s.message() << "\n";
    return kCtxOwnFailure;
  }
  SymbolizeFindings(&report);
  report.exit_code = ExitCodeOf(report);
  std::string text = ReportText(report);
  if (a.quiet)
    text = text.substr(text.rfind("hflow ctxcheck: ", text.size() - 2));
  err << text;
  for (const auto& [flag, path, json] :
       {std::tuple<const char*, std::string, nlohmann::json>{
            "--json", a.json_file,
            a.json_file.empty() ? nullptr : ReportJson(report)},
        {"--sarif", a.sarif_file,
         a.sarif_file.empty() ? nullptr : SarifJson(report)}}) {
    if (path.empty()) continue;
    Status w = WriteJsonFile(path, json);
    if (!w.ok()) {
      err << "hflow ctxcheck: " << flag << ": " << w.message() << "\n";
      return kCtxOwnFailure;
    }
  }
  return report.exit_code;
}

void AddCtxCheckCommand(CLI::App* app) {
  auto args = std::make_shared<CtxCheckArgs>();
  CLI::App* cmd = app->add_subcommand(
      "ctxcheck",
      "Run a program on the simulated runtime and report every device call "
      "made without a bound context, every use of one device's resources "
      "under another's context, and every UDF call that leaves its thread "
      "on another context (docs/ctxcheck.md)");
  AddClusterOptions(cmd, &args->cluster);
  cmd->add_flag("--strict", args->strict,
                "Fail each unbound call with EE1018 (device 0 included) "
                "instead of letting it go on implicitly bound");
  cmd->add_option("--json", args->json_file, "Write the report as JSON here");
  cmd->add_option("--sarif", args->sarif_file,
                  "Write the findings as SARIF 2.1.0 here (code scanning)");
  cmd->add_option("--timeout", args->timeout_s,
                  "Stop the program after this many seconds (0: never); the "
                  "report so far is still written")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--quiet", args->quiet, "Print the summary line only");
  cmd->add_option("program", args->program,
                  "The program and its arguments, after '--'")
      ->required();
  cmd->positionals_at_end();
  cmd->callback([args]() {
    int code = RunCtxCheck(*args, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace hflow::tools
