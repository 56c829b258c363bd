// Builders for multi-host tests: an hflowd process on a loopback address
// (127.0.0.2, 127.0.0.3, ...: all of 127/8 is this host's), a token file,
// TLS files made by openssl at test time, and a cluster config naming the
// daemons. Every daemon a test starts is killed and reaped by its
// destructor, so a failing test leaves no process behind.
//
// Thread-safety: one test thread.
#ifndef HFLOW_TESTS_HOSTS_TEST_UTIL_H_
#define HFLOW_TESTS_HOSTS_TEST_UTIL_H_

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifndef HFLOW_HFLOWD_PATH
#error "HFLOW_HFLOWD_PATH must name the built hflowd"
#endif

extern char** environ;

namespace hflow::testing {

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh folder under the test's temporary directory, removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "hflow_hosts_XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    if (!path_.empty()) (void)std::system(("rm -rf '" + path_ + "'").c_str());
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text,
                    mode_t mode = 0600) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }

 private:
  std::string path_;
};

// A token file of mode 600 in `dir`.
inline std::string MakeTokenFile(
    const TempDir& dir, const std::string& name = "token",
    const std::string& token = "hflow-test-token-0123456789abcdef") {
  return dir.Write(name, token + "\n");
}

// Makes a CA and, signed by it, a certificate and key per name, with the
// loopback addresses as subject alternative names: <dir>/<prefix>ca.pem,
// <dir>/<prefix><name>.pem, <dir>/<prefix><name>.key. False when openssl
// fails.
inline bool MakeTlsFiles(const TempDir& dir, const std::string& prefix,
                         const std::vector<std::string>& names) {
  const std::string d = dir.path() + "/" + prefix;
  const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 ";
  std::string cmd = "set -e; cd '" + dir.path() + "'; " + "openssl req -x509 " +
                    ec + "-nodes -keyout '" + d + "ca.key' -out '" + d +
                    "ca.pem' -days 2 -subj /CN=hflow-test-ca 2>/dev/null; " +
                    "printf 'subjectAltName=IP:127.0.0.1,IP:127.0.0.2,"
                    "IP:127.0.0.3,IP:127.0.0.4,DNS:localhost\\n' > '" +
                    d + "san.ext'; ";
  for (const std::string& n : names) {
    const std::string b = d + n;
    cmd += "openssl req " + ec + "-nodes -keyout '" + b + ".key' -out '" + b +
           ".csr' -subj /CN=" + n + " 2>/dev/null; " +
           "openssl x509 -req -in '" + b + ".csr' -CA '" + d + "ca.pem' " +
           "-CAkey '" + d + "ca.key' -CAcreateserial -out '" + b +
           ".pem' -days 2 -extfile '" + d + "san.ext' 2>/dev/null; " +
           "chmod 600 '" + b + ".key'; ";
  }
  return std::system(cmd.c_str()) == 0;
}

// Starts `args` (argv[0] a path) with stderr to `log` and stdout to
// /dev/null; its pid, or -1.
// fork + exec rather than posix_spawn: the child asks for SIGKILL when
// the test process dies (PR_SET_PDEATHSIG), so a test that crashes or is
// killed by its sanitizer leaves no child behind. Only async-signal-safe
// calls between fork and exec.
inline pid_t SpawnChild(const std::vector<std::string>& args,
                        const std::string& log) {
  std::vector<char*> argv;
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;  // the test, or -1
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the test died already
  const int out = ::open("/dev/null", O_WRONLY);
  const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0 || err < 0) ::_exit(127);
  ::dup2(out, 1);
  ::dup2(err, 2);
  ::execve(argv[0], argv.data(), environ);
  ::_exit(127);
}

// One hflowd process. Start returns false (and says why through gtest)
// when it does not come up within 20 s.
class Daemon {
 public:
  Daemon() = default;
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  ~Daemon() { Kill(SIGKILL); }

  // `args` are hflowd's, --ready-file added here.
  bool Start(const TempDir& dir, const std::string& name,
             std::vector<std::string> args) {
    ready_ = dir.path() + "/" + name + ".ready";
    log_ = dir.path() + "/" + name + ".log";
    args.insert(args.begin(), HFLOW_HFLOWD_PATH);
    args.push_back("--ready-file");
    args.push_back(ready_);
    pid_ = Spawn(args, log_);
    if (pid_ <= 0) return false;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      const std::string a = ReadText(ready_);
      if (!a.empty() && a.back() == '\n') {
        address_ = a.substr(0, a.size() - 1);
        return true;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_status_ = status;
        pid_ = -1;
        ADD_FAILURE() << name << " exited at start: " << ReadText(log_);
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ADD_FAILURE() << name << " did not start in 20 s: " << ReadText(log_);
    return false;
  }

  // Runs hflowd to its end with `args` (a start that must fail); returns
  // its exit code, the log in *log.
  static int RunToEnd(const TempDir& dir, std::vector<std::string> args,
                      std::string* log) {
    const std::string path = dir.path() + "/run_to_end.log";
    args.insert(args.begin(), HFLOW_HFLOWD_PATH);
    pid_t pid = Spawn(args, path);
    int status = 0;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (::waitpid(pid, &status, WNOHANG) != pid) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        *log = ReadText(path) + " [killed after 30 s]";
        return -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    *log = ReadText(path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  void Signal(int sig) const {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  // Sends `sig` and reaps the process (SIGCONT first, so a stopped one
  // can take it); returns the raw wait status.
  int Kill(int sig) {
    if (pid_ <= 0) return exit_status_;
    ::kill(pid_, sig);
    ::kill(pid_, SIGCONT);
    ::waitpid(pid_, &exit_status_, 0);
    pid_ = -1;
    return exit_status_;
  }

  const std::string& address() const { return address_; }
  std::string host() const { return address_.substr(0, address_.rfind(':')); }
  int port() const {
    return std::stoi(address_.substr(address_.rfind(':') + 1));
  }
  pid_t pid() const { return pid_; }
  std::string log() const { return ReadText(log_); }

 private:
  static pid_t Spawn(const std::vector<std::string>& args,
                     const std::string& log) {
    return SpawnChild(args, log);
  }

  pid_t pid_ = -1;
  int exit_status_ = 0;
  std::string address_, ready_, log_;
};

// A GE numa_config with this host as node 0 (devices `local`) and one node
// per daemon (node ids 1, 2, ..., devices as listed), and the credentials
// JSON given (e.g. {"token_file": "/path"}).
inline std::string MultiHostConfig(
    const std::vector<int32_t>& local,
    const std::vector<std::pair<const Daemon*, std::vector<int32_t>>>& hosts,
    const std::string& credentials_json) {
  auto items = [](const std::vector<int32_t>& ids) {
    std::string s;
    for (int32_t id : ids) {
      s += std::string(s.empty() ? "" : ",") +
           "{\"device_id\":" + std::to_string(id) + "}";
    }
    return "[" + s + "]";
  };
  std::string nodes =
      "{\"node_id\":0,\"is_local\":true,\"item_list\":" + items(local) + "}";
  for (size_t i = 0; i < hosts.size(); ++i) {
    nodes += ",{\"node_id\":" + std::to_string(i + 1) + ",\"ipaddr\":\"" +
             hosts[i].first->host() +
             "\",\"port\":" + std::to_string(hosts[i].first->port()) +
             ",\"item_list\":" + items(hosts[i].second) + "}";
  }
  return "{\"cluster\":[{\"cluster_nodes\":[" + nodes +
         "]}],\"credentials\":" + credentials_json + "}";
}

}  // namespace hflow::testing

#endif  // HFLOW_TESTS_HOSTS_TEST_UTIL_H_
