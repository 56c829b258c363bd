// UDF workspace builds (see udf_builder.h).
// Thread-safety: g_build_mu serialises builds; RunCommand uses fork/exec
// with everything the child needs prepared before the fork.
#include "flow_func/udf_builder.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "util/mutex.h"
#include "util/thread_annotations.h"

namespace hflow {
namespace flow_func {
namespace {

namespace fs = std::filesystem;
// Serializes builds in this process (the lock file, other processes); it
// guards the workspace on disk, no variable, so nothing is GUARDED_BY it.
util::Mutex g_build_mu;
constexpr const char* kReleaseDir = "release";

std::string Tail(const std::string& s, size_t n = 6000) {
  return s.size() <= n ? s : "...\n" + s.substr(s.size() - n);
}

std::string DefaultBuildRoot() {
  if (const char* d = std::getenv("HFLOW_UDF_BUILD_DIR")) return d;
  return (fs::temp_directory_path() / ("hflow-udf-" + std::to_string(getuid())))
      .string();
}

std::string FindLibrary(const std::string& release, const std::string& build,
                        const CompileConfig& cfg) {
  for (const fs::path& p :
       {fs::path(release) / ("lib" + cfg.TargetLibName() + ".so"),
        fs::path(release) / fs::path(cfg.target_bin).filename()}) {
    if (fs::exists(p)) return p.string();
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(build, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename() == fs::path(cfg.target_bin).filename()) {
      return it->path().string();
    }
  }
  return "";
}

}  // namespace

std::string SdkDir() {
  if (const char* d = std::getenv("HFLOW_SDK_DIR")) return d;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&SdkDir), &info) == 0 ||
      info.dli_fname == nullptr) {
    return "";
  }
  fs::path lib_dir = fs::absolute(info.dli_fname).parent_path();
  // Build tree: <build>/src/libhflow.so with <build>/sdk; install tree:
  // <prefix>/lib/libhflow.so with <prefix>/include/flow_func.
  fs::path build_sdk = lib_dir.parent_path() / "sdk";
  if (fs::exists(build_sdk / "include" / "flow_func")) {
    return build_sdk.lexically_normal().string();
  }
  return lib_dir.parent_path().lexically_normal().string();
}

Status RunCommand(const std::vector<std::string>& argv,
                  const std::map<std::string, std::string>& env,
                  std::string* output, int* exit_code) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string kv(*e);
    if (env.count(kv.substr(0, kv.find('='))) == 0) env_strings.push_back(kv);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::Internal("pipe failed");
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Status::Internal("fork failed");
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(fds[1]);
  output->clear();
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof(buf))) > 0) output->append(buf, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  if (*exit_code == 127 && output->empty()) {
    return Status::NotFound("cannot run '" + argv[0] + "'; is it installed?");
  }
  return Status::OK();
}

namespace {

// Builds the project of the CMakeLists.txt at `cmakelist`.
Status BuildFrom(const CompileConfig& cfg, const std::string& cmakelist,
                 const UdfBuildOptions& opts, std::string* so_path) {
  std::string src = fs::path(cmakelist).parent_path().string();
  std::string key = cfg.TargetLibName() + "-" +
                    std::to_string(std::hash<std::string>()(cmakelist));
  fs::path root = opts.build_root.empty() ? fs::path(DefaultBuildRoot())
                                          : fs::path(opts.build_root);
  std::string build = (root / key / "build").string();
  // GE's CMakeLists put the library in ${PROJECT_BINARY_DIR}/${RELEASE_DIR}:
  // RELEASE_DIR is relative to the build folder.
  std::string release = (fs::path(build) / kReleaseDir).string();
  std::error_code ec;
  fs::create_directories(release, ec);

  const char* env_cxx = std::getenv("CXX");
  std::string cxx = !opts.cxx.empty() ? opts.cxx : env_cxx ? env_cxx : "c++";
  std::map<std::string, std::string> env = {
      {"ASCEND_HOME_PATH", opts.sdk_dir.empty() ? SdkDir() : opts.sdk_dir}};
  util::MutexLock lock(g_build_mu);
  // Other processes (parallel tests, several hflow runs) may build the same
  // workspace into the same folder: serialise on a lock file too.
  int lock_fd = open((root / (key + ".lock")).c_str(),
                     O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (lock_fd >= 0) flock(lock_fd, LOCK_EX);
  struct FdCloser {
    int fd;
    ~FdCloser() {
      if (fd >= 0) close(fd);  // also releases the flock
    }
  } closer{lock_fd};
  std::string out;
  int code = 0;
  std::vector<std::vector<std::string>> steps = {
      {"cmake", "-S", src, "-B", build, "-DTOOLCHAIN=" + cxx,
       std::string("-DRELEASE_DIR=") + kReleaseDir, "-DRESOURCE_TYPE=X86",
       "-DUDF_TARGET_LIB=" + cfg.TargetLibName()},
      {"cmake", "--build", build, "-j", std::to_string(opts.jobs)}};
  for (const auto& step : steps) {
    HFLOW_RETURN_IF_ERROR(RunCommand(step, env, &out, &code));
    if (code != 0) {
      return Status::Internal(cfg.source + ": building UDF '" + cfg.target_bin +
                              "' from " + cmakelist + " failed (" + step[0] +
                              " " + step[1] + " exited with " +
                              std::to_string(code) + "):\n" + Tail(out));
    }
  }
  *so_path = FindLibrary(release, build, cfg);
  if (so_path->empty()) {
    return Status::NotFound(cfg.source + ": the UDF build succeeded but " +
                            cfg.target_bin + " is neither in " + release +
                            " nor in " + build +
                            "; check UDF_TARGET_LIB/RELEASE_DIR in the "
                            "CMakeLists");
  }
  return Status::OK();
}

// Whether `l` can be used: it exists and, for a GE-rule CMakeLists.txt,
// names UDF_TARGET_LIB (Note [Compile config paths] in compile_config.cc);
// a CMakeLists.txt that exists but does not goes into *skipped.
bool Usable(const UdfLocation& l, std::vector<std::string>* skipped) {
  if (!fs::exists(l.path)) return false;
  if (l.prebuilt || !l.ge_rule) return true;
  std::ifstream in(l.path);
  std::stringstream text;
  text << in.rdbuf();
  if (text.str().find("UDF_TARGET_LIB") != std::string::npos) return true;
  skipped->push_back(l.path);
  return false;
}

}  // namespace

Status BuildUdf(const CompileConfig& cfg, const UdfBuildOptions& opts,
                std::string* so_path) {
  std::vector<std::string> skipped;
  for (const UdfLocation& l : cfg.Locations()) {
    if (!l.prebuilt && Usable(l, &skipped)) {
      return BuildFrom(cfg, l.path, opts, so_path);
    }
  }
  return cfg.NothingFound(/*cmakelists_only=*/true, skipped);
}

// The first usable location wins: GE's library or sources before the
// fallback's.
Status ResolveUdfBinary(const CompileConfig& cfg, const UdfBuildOptions& opts,
                        std::string* so_path) {
  std::vector<std::string> skipped;
  for (const UdfLocation& l : cfg.Locations()) {
    if (!Usable(l, &skipped)) continue;
    if (l.prebuilt) {
      *so_path = l.path;
      return Status::OK();
    }
    return BuildFrom(cfg, l.path, opts, so_path);
  }
  return cfg.NothingFound(/*cmakelists_only=*/false, skipped);
}

}  // namespace flow_func
}  // namespace hflow
