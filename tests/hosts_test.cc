// Multi-host control plane, end to end with real hflowd processes on
// loopback addresses: three daemons on {2,3,4,5}, {3,6,7} and {0,1,2,3}
// checked against a GE multi-node numa_config (`hflow hosts`), each broken
// host named by its field, credentials refused and logged, a daemon that
// listens only where told, and a lost daemon (killed or stopped) reported
// within 2 s.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hosts_test_util.h"
#include "net/cluster_hosts.h"
#include "net/host_client.h"
#include "tools/hosts_command.h"
#include "util/sanitizers.h"

namespace hflow {
namespace {

using testing::Daemon;
using testing::MultiHostConfig;
using testing::TempDir;

#if defined(HFLOW_ASAN) || defined(HFLOW_TSAN)
constexpr double kSlack = 3.0;  // sanitized daemons start and answer slower
#else
constexpr double kSlack = 1.0;
#endif

std::string TokenCreds(const std::string& file) {
  return "{\"token_file\":\"" + file + "\"}";
}

struct HostsRun {
  int code = 0;
  std::string out, err;
};

HostsRun RunHostsCommand(const TempDir& dir, const std::string& config,
                         bool json, int32_t timeout_ms = 5000) {
  tools::ClusterArgs args;
  args.cluster_file = dir.Write("cluster.json", config, 0644);
  std::ostringstream out, err;
  HostsRun r;
  r.code = tools::RunHosts(args, json, timeout_ms, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::vector<std::string> DaemonArgs(const std::string& listen,
                                    const std::string& devices,
                                    const std::string& token, int node) {
  std::vector<std::string> a = {"--listen", listen,         "--devices",
                                devices,    "--token-file", token};
  if (node >= 0) {
    a.push_back("--node-id");
    a.push_back(std::to_string(node));
  }
  return a;
}

net::ClientOptions ClientWithToken(const std::string& token_file) {
  net::ClientOptions o;
  net::CredentialFiles f;
  f.token_file = token_file;
  EXPECT_TRUE(net::LoadCredentials(f, &o.credentials).ok());
  o.connect_timeout_ms = 5000;
  return o;
}

std::unique_ptr<net::HostClient> Connect(const Daemon& d,
                                         const net::ClientOptions& o) {
  net::HostAddress a;
  EXPECT_TRUE(net::ParseHostAddress(d.address(), false, "test", &a).ok());
  std::unique_ptr<net::HostClient> c;
  Status s = net::HostClient::Connect(a, o, &c);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return c;
}

TEST(HostsTest, ThreeDaemonsOnSetsWithAndWithoutZeroMatchTheConfig) {
  TempDir dir;
  const std::string token = testing::MakeTokenFile(dir);
  Daemon a, b, c;
  ASSERT_TRUE(a.Start(dir, "a", DaemonArgs("127.0.0.2:0", "2~5", token, 1)));
  ASSERT_TRUE(b.Start(dir, "b", DaemonArgs("127.0.0.3:0", "3,6,7", token, 2)));
  ASSERT_TRUE(
      c.Start(dir, "c", DaemonArgs("127.0.0.4:0", "0,1,2,3", token, -1)));
  const std::string cfg = MultiHostConfig(
      {0, 1}, {{&a, {2, 3, 4, 5}}, {&b, {3, 6, 7}}, {&c, {0, 3}}},
      TokenCreds(token));
  HostsRun r = RunHostsCommand(dir, cfg, /*json=*/true);
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["hosts"].size(), 4u);
  EXPECT_TRUE(j["hosts"][0]["local"].get<bool>());
  const std::vector<std::vector<int32_t>> served = {
      {2, 3, 4, 5}, {3, 6, 7}, {0, 1, 2, 3}};
  const Daemon* daemons[] = {&a, &b, &c};
  for (size_t i = 0; i < 3; ++i) {
    const auto& h = j["hosts"][i + 1];
    SCOPED_TRACE(h.dump());
    EXPECT_TRUE(h["ok"].get<bool>());
    EXPECT_EQ(h["address"], daemons[i]->address());
    EXPECT_EQ(h["devices"].get<std::vector<int32_t>>(), served[i]);
    EXPECT_EQ(h["backend"], "sim");
    EXPECT_EQ(h["pid"].get<int>(), daemons[i]->pid());
  }
  // The table says the same; each daemon logged the driver's hello.
  r = RunHostsCommand(dir, cfg, /*json=*/false);
  ASSERT_EQ(r.code, 0) << r.err;
  const size_t at = r.out.find(b.address());
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  EXPECT_NE(line.find(" ok "), std::string::npos) << line;
  EXPECT_NE(line.find("devices 3,6,7"), std::string::npos) << line;
  EXPECT_NE(a.log().find("hello from driver"), std::string::npos);
  EXPECT_NE(a.log().find("for node 1, devices 2,3,4,5"), std::string::npos)
      << a.log();
  // No daemon made a context or bound implicitly by serving the control
  // plane: none outside its set, none inside.
  for (size_t i = 0; i < 3; ++i) {
    auto client = Connect(*daemons[i], ClientWithToken(token));
    ASSERT_NE(client, nullptr);
    std::vector<DeviceReport> reports;
    ASSERT_TRUE(client->DeviceReports(&reports).ok());
    std::vector<int32_t> ids;
    for (const DeviceReport& d : reports) {
      ids.push_back(d.id);
      EXPECT_EQ(d.contexts_created, 0u) << "device " << d.id;
      EXPECT_EQ(d.implicit_bindings, 0u) << "device " << d.id;
    }
    EXPECT_EQ(ids, served[i]);
    uint64_t seq1 = 0, seq2 = 0;
    ASSERT_TRUE(client->Heartbeat(&seq1).ok());
    ASSERT_TRUE(client->Heartbeat(&seq2).ok());
    EXPECT_GT(seq2, seq1);
  }
}

TEST(HostsTest, EachBrokenHostIsNamedByItsField) {
  TempDir dir;
  const std::string token = testing::MakeTokenFile(dir);
  Daemon a, b;
  ASSERT_TRUE(a.Start(dir, "a", DaemonArgs("127.0.0.2:0", "3,6,7", token, 1)));
  ASSERT_TRUE(b.Start(dir, "b", DaemonArgs("127.0.0.3:0", "2,3", token, 5)));
  // Node 1 lists a device its daemon does not serve; node 2's daemon says
  // it is node 5; node 3 has no address; node 4: nothing listens there.
  std::string cfg =
      MultiHostConfig({2}, {{&a, {3, 4}}, {&b, {2}}}, TokenCreds(token));
  const std::string tail = "]}],\"credentials\"";
  cfg.insert(cfg.find(tail),
             ",{\"node_id\":3,\"item_list\":[{\"device_id\":2}]}"
             ",{\"node_id\":4,\"ipaddr\":\"127.0.0.4\",\"port\":1,"
             "\"item_list\":[{\"device_id\":2}]}");
  const auto t0 = std::chrono::steady_clock::now();
  HostsRun r = RunHostsCommand(dir, cfg, /*json=*/true);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_EQ(r.code, 1) << r.err << r.out;
  // A refused connection is said at once, not after the 5 s timeout.
  EXPECT_LT(seconds, 4.0 * kSlack);
  const auto j = nlohmann::json::parse(r.out);
  auto error = [&](size_t i) {
    EXPECT_FALSE(j["hosts"][i]["ok"].get<bool>()) << j["hosts"][i].dump();
    return j["hosts"][i].value("error", std::string());
  };
  EXPECT_NE(error(1).find("cluster[0].cluster_nodes[1].item_list[1]."
                          "device_id: device 4 is not served by hflowd at " +
                          a.address() + " (node 1), which serves 3,6,7"),
            std::string::npos)
      << error(1);
  EXPECT_NE(error(2).find("cluster_nodes[2].node_id: hflowd at " + b.address() +
                          " (node 2) serves node 5"),
            std::string::npos)
      << error(2);
  EXPECT_NE(error(3).find("cluster_nodes[3]: node 3 is another host but has "
                          "no \"ipaddr\""),
            std::string::npos)
      << error(3);
  EXPECT_NE(error(4).find("hflowd at 127.0.0.4:1 (node 4): the connection "
                          "failed; start hflowd there"),
            std::string::npos)
      << error(4);
  EXPECT_NE(r.err.find("device 4 is not served"), std::string::npos) << r.err;
}

TEST(HostsTest, CredentialsAreRequiredCheckedAndRefusalsLogged) {
  TempDir dir;
  const std::string token = testing::MakeTokenFile(dir);
  const std::string other = testing::MakeTokenFile(
      dir, "other", "a-different-token-0123456789abcdef");
  Daemon a;
  ASSERT_TRUE(a.Start(dir, "a", DaemonArgs("127.0.0.2:0", "2,3", token, 1)));
  // A wrong token: refused, and the daemon logs who and why.
  HostsRun r = RunHostsCommand(
      dir, MultiHostConfig({0}, {{&a, {2}}}, TokenCreds(other)), true);
  ASSERT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("permission denied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the driver presented a wrong token"), std::string::npos)
      << r.err;
  EXPECT_NE(a.log().find("refused Hello from ipv4:127.0.0.1:"),
            std::string::npos)
      << a.log();
  EXPECT_NE(a.log().find(": presented a wrong token"), std::string::npos);
  // No token at all (a client without credentials).
  net::ClientOptions none;
  auto client = Connect(a, none);
  ASSERT_NE(client, nullptr);
  net::HelloInfo info;
  Status s = client->Hello({}, &info);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied) << s.ToString();
  EXPECT_NE(s.message().find("presented no token"), std::string::npos);
  EXPECT_NE(a.log().find("presented no token"), std::string::npos);
  // A cluster with other hosts but no credentials is a config error (2).
  std::string cfg = MultiHostConfig({0}, {{&a, {2}}}, "{}");
  cfg.replace(cfg.find(",\"credentials\":{}"), 17, "");
  r = RunHostsCommand(dir, cfg, true);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("the cluster has other hosts but no \"credentials\""),
            std::string::npos)
      << r.err;
  // A token file others may read is refused on both sides.
  const std::string open =
      dir.Write("open", "hflow-test-token-0123456789abcdef", 0644);
  r = RunHostsCommand(dir, MultiHostConfig({0}, {{&a, {2}}}, TokenCreds(open)),
                      true);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("chmod 600"), std::string::npos) << r.err;
  std::string log;
  EXPECT_EQ(
      Daemon::RunToEnd(dir, DaemonArgs("127.0.0.2:0", "2", open, -1), &log), 2);
  EXPECT_NE(log.find("group or others may read it"), std::string::npos) << log;
}

TEST(HostsTest, AnotherProtocolVersionIsRefusedNamingBoth) {
  TempDir dir;
  const std::string token = testing::MakeTokenFile(dir);
  Daemon a;
  ASSERT_TRUE(a.Start(dir, "a", DaemonArgs("127.0.0.3:0", "3,6,7", token, 1)));
  ClusterConfig cfg;
  ASSERT_TRUE(
      ParseClusterConfig(MultiHostConfig({0}, {{&a, {3}}}, TokenCreds(token)),
                         "c.json", &cfg)
          .ok());
  net::Credentials creds;
  ASSERT_TRUE(net::LoadClusterCredentials(cfg, &creds).ok());
  net::ProbeOptions po;
  po.protocol_version = net::kProtocolVersion + 1;
  std::vector<net::HostProbe> probes;
  Status s = net::ProbeHosts(cfg, creds, po, &probes);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_NE(
      s.message().find("hflowd speaks protocol " +
                       std::to_string(net::kProtocolVersion) + ", the driver " +
                       std::to_string(net::kProtocolVersion + 1)),
      std::string::npos)
      << s.ToString();
  EXPECT_NE(
      a.log().find("protocol " + std::to_string(net::kProtocolVersion + 1)),
      std::string::npos);
}

TEST(HostsTest, DaemonListensOnlyWhereToldAndRefusesBadStarts) {
  TempDir dir;
  const std::string token = testing::MakeTokenFile(dir);
  Daemon a;
  ASSERT_TRUE(a.Start(dir, "a", DaemonArgs("127.0.0.2:0", "2", token, -1)));
  // The same port on another loopback address has no listener.
  net::HostAddress elsewhere{"127.0.0.1", static_cast<uint16_t>(a.port())};
  net::ClientOptions o = ClientWithToken(token);
  std::unique_ptr<net::HostClient> c;
  Status s = net::HostClient::Connect(elsewhere, o, &c);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  // The port it holds cannot be taken by a second daemon.
  std::string log;
  EXPECT_EQ(
      Daemon::RunToEnd(dir, DaemonArgs(a.address(), "3", token, -1), &log), 1);
  EXPECT_NE(log.find("cannot listen on " + a.address()), std::string::npos)
      << log;
  // An address that is not this host's (TEST-NET-1).
  EXPECT_EQ(
      Daemon::RunToEnd(dir, DaemonArgs("192.0.2.1:0", "3", token, -1), &log),
      1);
  EXPECT_NE(log.find("cannot listen on 192.0.2.1:0"), std::string::npos) << log;
  // No credentials, a malformed address, a bad device list: 2.
  EXPECT_EQ(Daemon::RunToEnd(dir, {"--listen", "127.0.0.2:0", "--devices", "2"},
                             &log),
            2);
  EXPECT_NE(log.find("serves only clients with the cluster's credentials"),
            std::string::npos)
      << log;
  EXPECT_EQ(
      Daemon::RunToEnd(dir, DaemonArgs("127.0.0.2", "2", token, -1), &log), 2);
  EXPECT_NE(log.find("--listen: \"127.0.0.2\"; write ADDR:PORT"),
            std::string::npos)
      << log;
  EXPECT_EQ(
      Daemon::RunToEnd(dir, DaemonArgs("127.0.0.2:0", "2,x", token, -1), &log),
      2);
  // SIGTERM: a clean stop.
  const int status = a.Kill(SIGTERM);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_NE(a.log().find("stopping (SIGTERM)"), std::string::npos);
  EXPECT_NE(a.log().find("hflowd: stopped"), std::string::npos);
}

// Waits for a HostWatch's report; returns the seconds it took from `t0`.
class LossProbe {
 public:
  void Report(const Status& s) {
    std::lock_guard<std::mutex> lock(mu_);
    status_ = s;
    reports_++;
    at_ = std::chrono::steady_clock::now();
    cv_.notify_all();
  }
  bool Wait(double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(seconds),
                        [&] { return reports_ > 0; });
  }
  double Since(std::chrono::steady_clock::time_point t0) {
    std::lock_guard<std::mutex> lock(mu_);
    return std::chrono::duration<double>(at_ - t0).count();
  }
  Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }
  int reports() {
    std::lock_guard<std::mutex> lock(mu_);
    return reports_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  Status status_;
  int reports_ = 0;
  std::chrono::steady_clock::time_point at_;
};

// `why`: the reasons either detector may give (the stream's end, or the
// beats overdue); one must be in the report.
void ExpectLossWithinTwoSeconds(int sig, std::vector<std::string> why) {
  TempDir dir;
  const std::string token = testing::MakeTokenFile(dir);
  Daemon a;
  ASSERT_TRUE(a.Start(dir, "a", DaemonArgs("127.0.0.2:0", "3,6,7", token, 1)));
  auto client = Connect(a, ClientWithToken(token));
  ASSERT_NE(client, nullptr);
  LossProbe probe;
  // 1 s without beats: a second of margin to the 2 s the product promises.
  auto watch =
      client->Watch(100, 1000, [&](const Status& s) { probe.Report(s); });
  // Beats flow while the daemon lives.
  const auto live = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (watch->beats() < 3 && std::chrono::steady_clock::now() < live) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(watch->beats(), 3u);
  EXPECT_EQ(probe.reports(), 0);
  const auto t0 = std::chrono::steady_clock::now();
  a.Signal(sig);
  ASSERT_TRUE(probe.Wait(10)) << "no loss reported";
  EXPECT_LT(probe.Since(t0), 2.0 * kSlack);
  EXPECT_EQ(probe.status().code(), StatusCode::kDeviceLost);
  EXPECT_NE(
      probe.status().message().find("hflowd at " + a.address() + " was lost: "),
      std::string::npos)
      << probe.status().ToString();
  bool named = false;
  for (const std::string& w : why) {
    named = named || probe.status().message().find(w) != std::string::npos;
  }
  EXPECT_TRUE(named) << probe.status().ToString();
  watch.reset();  // joins; the report came once
  EXPECT_EQ(probe.reports(), 1);
}

TEST(HostsTest, KilledDaemonIsLostWithinTwoSeconds) {
  ExpectLossWithinTwoSeconds(SIGKILL, {"heartbeat stream broke"});
}

TEST(HostsTest, StoppedDaemonIsLostWithinTwoSeconds) {
  // SIGSTOP keeps the connection open: the overdue beats (or the
  // transport's unanswered pings) say it.
  ExpectLossWithinTwoSeconds(
      SIGSTOP, {"no heartbeat for 1000 ms", "heartbeat stream broke"});
}

TEST(HostsTest, AWatchMayBeDestroyedFromItsOwnReport) {
  TempDir dir;
  const std::string token = testing::MakeTokenFile(dir);
  Daemon a;
  ASSERT_TRUE(a.Start(dir, "a", DaemonArgs("127.0.0.2:0", "2", token, -1)));
  auto client = Connect(a, ClientWithToken(token));
  ASSERT_NE(client, nullptr);
  std::mutex mu;
  std::condition_variable cv;
  std::unique_ptr<net::HostWatch> watch;
  bool reported = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    watch = client->Watch(50, 500, [&](const Status&) {
      std::unique_ptr<net::HostWatch> mine;
      {
        std::lock_guard<std::mutex> lock(mu);
        mine = std::move(watch);
      }
      mine.reset();  // the natural reaction: drop the watch of a lost host
      std::lock_guard<std::mutex> lock(mu);
      reported = true;
      cv.notify_all();
    });
  }
  a.Kill(SIGKILL);
  std::unique_lock<std::mutex> lock(mu);
  EXPECT_TRUE(
      cv.wait_for(lock, std::chrono::seconds(10), [&] { return reported; }));
  EXPECT_EQ(watch, nullptr);
}

TEST(HostsTest, MutualTlsServesOnlyClientsOfTheClusterCa) {
  TempDir dir;
  ASSERT_TRUE(testing::MakeTlsFiles(dir, "", {"hflowd", "driver"}));
  ASSERT_TRUE(testing::MakeTlsFiles(dir, "rogue_", {"driver", "hflowd"}));
  const std::string p = dir.path() + "/";
  Daemon a;
  ASSERT_TRUE(a.Start(dir, "a",
                      {"--listen", "127.0.0.2:0", "--devices", "2,3,4,5",
                       "--tls-ca", p + "ca.pem", "--tls-cert", p + "hflowd.pem",
                       "--tls-key", p + "hflowd.key"}));
  auto tls = [&](const std::string& prefix) {
    return "{\"tls_ca\":\"" + p + "ca.pem\",\"tls_cert\":\"" + p + prefix +
           "driver.pem\",\"tls_key\":\"" + p + prefix + "driver.key\"}";
  };
  HostsRun r =
      RunHostsCommand(dir, MultiHostConfig({0}, {{&a, {2, 5}}}, tls("")), true);
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  // A certificate another CA signed: the handshake fails.
  r = RunHostsCommand(dir, MultiHostConfig({0}, {{&a, {2}}}, tls("rogue_")),
                      true);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("the connection failed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("check the TLS files"), std::string::npos) << r.err;
  // A daemon whose certificate another CA signed: the driver refuses it.
  Daemon rogue;
  ASSERT_TRUE(
      rogue.Start(dir, "rogue",
                  {"--listen", "127.0.0.3:0", "--devices", "2", "--tls-ca",
                   p + "rogue_ca.pem", "--tls-cert", p + "rogue_hflowd.pem",
                   "--tls-key", p + "rogue_hflowd.key"}));
  r = RunHostsCommand(dir, MultiHostConfig({0}, {{&rogue, {2}}}, tls("")),
                      true);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.err.find("the connection failed"), std::string::npos) << r.err;
  EXPECT_EQ(rogue.log().find("hello from driver"), std::string::npos)
      << rogue.log();
  // A token instead of a certificate: no TLS, no connection.
  const std::string token = testing::MakeTokenFile(dir);
  r = RunHostsCommand(dir, MultiHostConfig({0}, {{&a, {2}}}, TokenCreds(token)),
                      true);
  EXPECT_EQ(r.code, 1) << r.out;
  // Partial TLS files are a config error naming what is missing.
  r = RunHostsCommand(
      dir,
      MultiHostConfig({0}, {{&a, {2}}}, "{\"tls_ca\":\"" + p + "ca.pem\"}"),
      true);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("TLS needs three files"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hflow
