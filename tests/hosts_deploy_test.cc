// deploy/: the systemd unit's command line, with the example environment
// file's values, starts a working hflowd (its flags are hflowd's, and a
// renamed flag fails here, not on a user's host). Only the listen address
// and the token path are the test's: the unit's are a real host's.
//
// Thread-safety: single-threaded test.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hosts_test_util.h"

namespace hflow {
namespace {

std::string ReadSource(const std::string& rel) {
  std::ifstream in(std::string(HFLOW_SOURCE_DIR) + "/" + rel);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The unit's ExecStart, continuation lines joined, split into words.
std::vector<std::string> ExecStart(const std::string& unit) {
  std::istringstream lines(unit);
  std::string line, cmd;
  bool in_exec = false;
  while (std::getline(lines, line)) {
    if (line.rfind("ExecStart=", 0) == 0) {
      in_exec = true;
      line = line.substr(10);
    }
    if (!in_exec) continue;
    const bool more = !line.empty() && line.back() == '\\';
    cmd += " " + (more ? line.substr(0, line.size() - 1) : line);
    if (!more) break;
  }
  std::istringstream words(cmd);
  std::vector<std::string> out;
  for (std::string w; words >> w;) out.push_back(w);
  return out;
}

// KEY=VALUE lines, comments skipped.
std::map<std::string, std::string> EnvFile(const std::string& text) {
  std::istringstream lines(text);
  std::map<std::string, std::string> env;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

TEST(HostsDeployTest, SystemdUnitStartsHflowdWithTheExampleEnvironment) {
  std::vector<std::string> argv =
      ExecStart(ReadSource("deploy/hflowd.service"));
  std::map<std::string, std::string> env =
      EnvFile(ReadSource("deploy/hflowd.env.example"));
  ASSERT_GE(argv.size(), 2u);
  ASSERT_EQ(argv[0], "/opt/hflow/bin/hflowd");
  ASSERT_TRUE(env.count("HFLOWD_LISTEN") && env.count("HFLOWD_DEVICES") &&
              env.count("HFLOWD_NODE_ID") && env.count("HFLOWD_BACKEND"));
  testing::TempDir dir;
  env["HFLOWD_LISTEN"] = "127.0.0.2:0";
  const std::string token = testing::MakeTokenFile(dir);
  std::vector<std::string> args;
  for (size_t i = 1; i < argv.size(); ++i) {
    std::string a = argv[i];
    if (a.size() > 3 && a.rfind("${", 0) == 0 && a.back() == '}') {
      const std::string key = a.substr(2, a.size() - 3);
      ASSERT_TRUE(env.count(key)) << key << " is not in hflowd.env.example";
      a = env[key];
    }
    if (a == "/etc/hflow/token") a = token;
    args.push_back(a);
  }
  testing::Daemon d;
  ASSERT_TRUE(d.Start(dir, "unit", args));
  EXPECT_NE(d.log().find("node " + env["HFLOWD_NODE_ID"]), std::string::npos)
      << d.log();
  EXPECT_NE(d.log().find("backend " + env["HFLOWD_BACKEND"]), std::string::npos)
      << d.log();
  // SIGTERM, the unit's KillSignal, stops it cleanly (exit 0).
  const int status = d.Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << d.log();
}

}  // namespace
}  // namespace hflow
