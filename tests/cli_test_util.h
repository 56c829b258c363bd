// CliTest: a fixture that runs the built `hflow` binary in a temporary
// folder and captures exit code, stdout and stderr.
//
// Thread-safety: one fixture per test.
#ifndef HFLOW_TESTS_CLI_TEST_UTIL_H_
#define HFLOW_TESTS_CLI_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/wait.h>

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
    std::string cmd = std::string("'") + HFLOW_CLI_PATH + "' " + args +
                      " >'" + out + "' 2>'" + err + "'";
    int status = std::system(cmd.c_str());
    CliResult r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Read(out);
    r.err = Read(err);
    return r;
  }

  std::string dir_;
};

}  // namespace testing
}  // namespace hflow

#endif  // HFLOW_TESTS_CLI_TEST_UTIL_H_
