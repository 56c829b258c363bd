// CliTest: a fixture that runs the built `hflow` binary in a temporary
// folder and captures exit code, stdout, stderr and wall time. Every run is
// bounded (coreutils timeout, 120 s), so a hang fails the test instead of
// stalling the suite.
//
// Thread-safety: one fixture per test.
#ifndef HFLOW_TESTS_CLI_TEST_UTIL_H_
#define HFLOW_TESTS_CLI_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#ifndef HFLOW_CLI_PATH
#error "HFLOW_CLI_PATH must name the built hflow binary"
#endif

namespace hflow {
namespace testing {

struct CliResult {
  int code = -1;
  std::string out;
  std::string err;
  double seconds = 0;  // wall time of the command
};

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "hflow_cli_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::string cmd = "rm -rf '" + dir_ + "'";
    (void)std::system(cmd.c_str());
  }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // Writes `text` to dir_/name and returns the path.
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  // Runs `hflow <args>` (through the shell, as written).
  CliResult Run(const std::string& args) {
    std::string out = dir_ + "/stdout", err = dir_ + "/stderr";
    std::string cmd = "timeout -k 5 120 env " + env_ + " '" +
                      std::string(HFLOW_CLI_PATH) + "' " + args + " >'" + out +
                      "' 2>'" + err + "'";
    auto start = std::chrono::steady_clock::now();
    int status = std::system(cmd.c_str());
    CliResult r;
    r.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Read(out);
    r.err = Read(err);
    return r;
  }

  std::string dir_;
  std::string env_;  // NAME=VALUE ... for the hflow process
};

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_CLI_TEST_UTIL_H_
