// One graph on several hosts, end to end with real hflowd processes on
// loopback addresses (127.0.0.2 and .3) and GE's multi-node numa_config:
//
//   x ── id (this host) ── f1 (Fragile, node 1) ── f2 (Fragile, node 2) ── out
//
// Fragile answers [2x, pid]: out = [4x, pid of node 2's daemon], so each
// test sees where the code ran. Every transaction comes back once; the
// daemons' device reports show no implicit binding (every handler bound
// its device); a daemon killed or stopped mid-stream fails the graph
// within 2 s naming the host, node and transaction, and the session goes
// on; RemoveGraph and the driver's end leave nothing loaded on any host;
// wrong credentials and a device the daemon does not serve fail the build
// naming the host. The graph's device reports carry both daemons'
// devices. On device sets without device 0 and with it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hflow/hflow.h"
#include "hosts_test_util.h"
#include "net/host_client.h"
#include "test_graphs.h"
#include "test_util.h"
#include "util/sanitizers.h"
#include "worker_test_util.h"

namespace hflow {
namespace {

using ::hflow::testing::I64;
using testing::Daemon;
using testing::MultiHostConfig;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

#if defined(HFLOW_ASAN) || defined(HFLOW_TSAN)
constexpr double kSlack = 3.0;  // sanitized daemons start and answer slower
#else
constexpr double kSlack = 1.0;
#endif

// Occurrences of `what` in `text`.
size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

class HostsGraphTest : public ::testing::TestWithParam<std::vector<int32_t>> {
 protected:
  void SetUp() override {
    (void)Finalize();
    token_ = testing::MakeTokenFile(dir_, "token");
    const std::string devices = FormatDeviceList(GetParam());
    ASSERT_TRUE(a_.Start(dir_, "a", Args("127.0.0.2:0", devices, 1)));
    ASSERT_TRUE(b_.Start(dir_, "b", Args("127.0.0.3:0", devices, 2)));
  }
  void TearDown() override { (void)Finalize(); }

  std::vector<std::string> Args(const std::string& listen,
                                const std::string& devices, int node) const {
    return {"--listen",     listen, "--devices", devices,
            "--token-file", token_, "--node-id", std::to_string(node)};
  }

  // Initializes hflow over this host (GetParam()) and the two daemons,
  // with `creds` (default: the daemons' token).
  void Init(const std::string& creds = "", int32_t init_timeout_ms = -1) {
    const std::vector<int32_t>& d = GetParam();
    const std::string config = MultiHostConfig(
        d, {{&a_, d}, {&b_, d}},
        creds.empty() ? "{\"token_file\":\"" + token_ + "\"}" : creds);
    Options o;
    o.init_timeout_ms = init_timeout_ms;
    ASSERT_TRUE(ParseClusterConfig(config, "cluster.json", &o.cluster).ok());
    Status s = Initialize(o);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  // The graph above: f1 on node 1's device d1, f2 on node 2's device d2.
  FlowGraph Graph(int32_t d1, int32_t d2, const std::string& mode = "pass",
                  int64_t at = 0, int64_t init_sleep_ms = 0,
                  const std::string& meet_dir = "") {
    const std::string config = testing::FragileConfig(dir_.path(), false);
    FlowData x("x", 0);
    FlowNode id = testing::FuncNode("id", "_BuiltIn_Identity");
    id.SetInput(0, x);
    auto frag = [&](const std::string& name, const std::string& m) {
      FunctionPp pp(name + "_pp");
      pp.SetCompileConfig(config);
      pp.SetInitParam("mode", m);
      pp.SetInitParam("at", at);
      if (init_sleep_ms > 0) pp.SetInitParam("init_sleep_ms", init_sleep_ms);
      if (!meet_dir.empty()) {  // a meeting of one: marks Init and dtor
        pp.SetInitParam("meet_dir", meet_dir + "/" + name);
        pp.SetInitParam("meet_count", int64_t(1));
      }
      FlowNode n(name, 1, 1);
      n.AddPp(pp);
      return n;
    };
    FlowNode f1 = frag("f1", "pass");
    f1.SetInput(0, id, 0);
    FlowNode f2 = frag("f2", mode);
    f2.SetInput(0, f1, 0);
    FlowGraph g("spread");
    g.SetInputs({x}).SetOutputs({f2});
    const std::string local = std::to_string(GetParam().front());
    g.SetDeployInfo(R"({"deploy_info": [)"
                    R"({"flow_node_name": "id", "logic_device_id": "0:0:)" +
                    local +
                    R"("}, {"flow_node_name": "f1", "logic_device_id": "0:1:)" +
                    std::to_string(d1) +
                    R"("}, {"flow_node_name": "f2", "logic_device_id": "0:2:)" +
                    std::to_string(d2) + R"("}]})");
    return g;
  }

  void Feed(Session& s, uint32_t graph, int64_t v) {
    FlowInfo in;
    in.transaction_id = uint64_t(v);
    Status st = s.FeedData(graph, {I64(v)}, in, 10000);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // The daemon's implicit bindings over its devices (must stay 0).
  uint64_t ImplicitBindings(const Daemon& d) {
    net::HostAddress addr;
    EXPECT_TRUE(net::ParseHostAddress(d.address(), true, "test", &addr).ok());
    net::ClientOptions co;
    EXPECT_TRUE(
        net::LoadCredentials({token_, "", "", ""}, &co.credentials).ok());
    std::unique_ptr<net::HostClient> c;
    Status st = net::HostClient::Connect(addr, co, &c);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return ~0ull;
    std::vector<DeviceReport> reports;
    EXPECT_TRUE(c->DeviceReports(&reports).ok());
    uint64_t n = 0;
    for (const DeviceReport& r : reports) n += r.implicit_bindings;
    EXPECT_FALSE(reports.empty());
    return n;
  }

  TempDir dir_;
  std::string token_;
  Daemon a_, b_;
};

TEST_P(HostsGraphTest, SpreadGraphRunsEveryTransactionOnceOnItsHosts) {
  Init();
  const std::vector<int32_t>& d = GetParam();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph(d.back(), d.front())).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  constexpr int kN = 40;
  std::thread feeder([&] {
    for (int v = 1; v <= kN; ++v) Feed(s, 1, v);
  });
  std::set<uint64_t> seen;
  for (int i = 0; i < kN; ++i) {
    std::vector<Tensor> out;
    FlowInfo info;
    st = s.FetchData(1, &out, &info, 10000);
    EXPECT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(info.ret_code, 0);
    if (!st.ok() || info.ret_code != 0) break;
    const std::vector<int64_t> r = out.at(0).As<int64_t>();
    EXPECT_EQ(r.at(0), 4 * int64_t(info.transaction_id));
    EXPECT_EQ(r.at(1), b_.pid()) << "f2 must run in node 2's daemon";
    EXPECT_TRUE(seen.insert(info.transaction_id).second)
        << "transaction " << info.transaction_id << " came back twice";
  }
  feeder.join();
  EXPECT_EQ(seen.size(), size_t(kN));
  EXPECT_EQ(ImplicitBindings(a_), 0u);
  EXPECT_EQ(ImplicitBindings(b_), 0u);
  // The graph's device reports merge the daemons': every device of both
  // hosts, each with its node; f1's and f2's devices counted once with a
  // context, the others untouched, no implicit binding anywhere.
  std::vector<DeviceReport> reports;
  st = s.DeviceReports(1, &reports);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::map<int32_t, uint64_t> submodels;  // per node
  for (const DeviceReport& r : reports) {
    SCOPED_TRACE("node " + std::to_string(r.node) + " device " +
                 std::to_string(r.id));
    submodels[r.node] += r.submodels;
    EXPECT_EQ(r.implicit_bindings, 0u);
    if (r.node == 0) continue;
    const bool used =
        (r.node == 1 && r.id == d.back()) || (r.node == 2 && r.id == d.front());
    EXPECT_EQ(r.submodels, used ? 1u : 0u);
    EXPECT_EQ(r.contexts_created, used ? 1u : 0u);
  }
  EXPECT_EQ(reports.size(), 3 * d.size());
  EXPECT_EQ(submodels[0], 1u) << "id alone runs on this host";
  EXPECT_EQ(submodels[1], 1u);
  EXPECT_EQ(submodels[2], 1u);
  // RemoveGraph unloads everything on both hosts.
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  for (const Daemon* dm : {&a_, &b_}) {
    EXPECT_NE(dm->log().find("loaded node '"), std::string::npos);
    // By RemoveGraph's return: every instance it loaded unloaded.
    const std::string log = dm->log();
    EXPECT_EQ(Count(log, "loaded node '"), Count(log, "unloading node '"))
        << log;
    EXPECT_NE(log.find("instance(s) of ended session"), std::string::npos)
        << log;
  }
}

// A daemon killed (SIGKILL) or stopped (SIGSTOP) mid-stream fails the
// graph within 2 s naming the host; the session goes on.
TEST_P(HostsGraphTest, LostDaemonFailsTheGraphNamingTheHost) {
  for (int sig : {SIGKILL, SIGSTOP}) {
    SCOPED_TRACE(sig == SIGKILL ? "SIGKILL" : "SIGSTOP");
    Daemon& victim = sig == SIGKILL ? a_ : b_;
    Init();
    const std::vector<int32_t>& d = GetParam();
    {
      Session s;
      ASSERT_TRUE(s.AddGraph(1, Graph(d.front(), d.back())).ok());
      Status st = s.BuildGraph(1);
      ASSERT_TRUE(st.ok()) << st.ToString();
      Feed(s, 1, 1);
      std::vector<Tensor> out;
      FlowInfo info;
      ASSERT_TRUE(s.FetchData(1, &out, &info, 10000).ok());
      victim.Signal(sig);
      const auto t0 = Clock::now();
      Feed(s, 1, 2);
      st = s.FetchData(1, &out, &info, 10000);
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          Clock::now() - t0)
                          .count();
      EXPECT_FALSE(st.ok() && info.ret_code == 0);
      // 2 s, the promise, with room for a busy machine (and sanitizers).
      EXPECT_LE(ms, 2500 * kSlack) << st.ToString();
      const std::string text = st.ToString();
      EXPECT_NE(text.find(victim.host()), std::string::npos) << text;
      EXPECT_NE(text.find("cluster node"), std::string::npos) << text;
      // The session is usable: the graph goes, a local one runs.
      EXPECT_TRUE(s.RemoveGraph(1).ok());
      FlowGraph local = testing::ChainGraph(
          "local", {{"id", "_BuiltIn_Identity", {GetParam().front()}}});
      ASSERT_TRUE(s.AddGraph(2, local).ok());
      ASSERT_TRUE(s.BuildGraph(2).ok());
      Feed(s, 2, 5);
      ASSERT_TRUE(s.FetchData(2, &out, &info, 10000).ok());
      EXPECT_EQ(out.at(0).As<int64_t>().at(0), 5);
    }
    ASSERT_TRUE(Finalize().ok());
    victim.Kill(SIGKILL);
    const std::string devices = FormatDeviceList(GetParam());
    ASSERT_TRUE(victim.Start(
        dir_, sig == SIGKILL ? "a2" : "b2",
        Args(victim.host() + ":0", devices, sig == SIGKILL ? 1 : 2)));
  }
}

TEST_P(HostsGraphTest, WrongTokenFailsTheBuildNamingTheHost) {
  const std::string wrong = testing::MakeTokenFile(
      dir_, "wrong", "some-other-token-0123456789abcdef");
  Init("{\"token_file\":\"" + wrong + "\"}");
  Session s;
  const std::vector<int32_t>& d = GetParam();
  ASSERT_TRUE(s.AddGraph(1, Graph(d.front(), d.back())).ok());
  Status st = s.BuildGraph(1);
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
  EXPECT_NE(st.message().find("127.0.0."), std::string::npos) << st.ToString();
  EXPECT_NE(a_.log().find("wrong token"), std::string::npos) << a_.log();
}

TEST_P(HostsGraphTest, DeviceTheDaemonDoesNotServeFailsTheBuild) {
  // Node 1's config lists a device its daemon was not started with.
  const std::vector<int32_t>& d = GetParam();
  std::vector<int32_t> more = d;
  more.push_back(9);
  const std::string config = MultiHostConfig(
      d, {{&a_, more}, {&b_, d}}, "{\"token_file\":\"" + token_ + "\"}");
  Options o;
  ASSERT_TRUE(ParseClusterConfig(config, "cluster.json", &o.cluster).ok());
  ASSERT_TRUE(Initialize(o).ok());
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph(9, d.back())).ok());
  Status st = s.BuildGraph(1);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not device 9"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find(a_.host()), std::string::npos) << st.ToString();
}

// A load that fails on one host (f2's Init fails on node 2) fails the
// build naming the node and host, and rolls back what loaded elsewhere.
TEST_P(HostsGraphTest, FailedLoadRollsBackEveryHost) {
  Init();
  const std::vector<int32_t>& d = GetParam();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph(d.front(), d.back(), "fail", 0)).ok());
  Status st = s.BuildGraph(1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("node 'f2'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("cluster node 2"), std::string::npos)
      << st.message();
  // Whatever node 1 loaded, it unloaded before the build returned.
  for (const Daemon* dm : {&a_, &b_}) {
    const std::string log = dm->log();
    EXPECT_EQ(Count(log, "loaded node '"), Count(log, "unloading node '"))
        << log;
  }
}

// A driver killed with SIGKILL mid-stream leaves nothing loaded: its
// heartbeat stream ends with its connection, and the daemon unloads the
// session. The driver is `hflow run` on a graph file, feeding for ever.
TEST_P(HostsGraphTest, KilledDriverLeavesNothingOnTheHost) {
  const std::vector<int32_t>& d = GetParam();
  const std::string cluster =
      dir_.Write("cluster.json",
                 MultiHostConfig(d, {{&a_, d}, {&b_, d}},
                                 "{\"token_file\":\"" + token_ + "\"}"),
                 0644);
  const std::string config = testing::FragileConfig(dir_.path(), false);
  const std::string graph = dir_.Write(
      "graph.json",
      R"({"name":"remote","inputs":["x"],"nodes":[{"name":"frag",)"
      R"("inputs":["x"],"outputs":1,"function":"Fragile",)"
      R"("compile_config":")" +
          config +
          R"(","init_params":{"mode":"pass","at":0}}],"outputs":["frag:0"],)"
          R"("deploy":{"deploy_info":[{"flow_node_name":"frag",)"
          R"("logic_device_id":"0:1:)" +
          std::to_string(d.back()) + R"("}]}})",
      0644);
  const pid_t driver = testing::SpawnChild(
      {HFLOW_CLI_PATH, "run", graph, "--cluster", cluster, "--input",
       "x=int64:3", "--repeat", "100000000", "--output", "/dev/null"},
      dir_.path() + "/driver.log");
  ASSERT_GT(driver, 0);
  const bool loaded = testing::WaitFor(
      [&] { return a_.log().find("loaded node 'frag'") != std::string::npos; },
      std::chrono::milliseconds(20000));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(driver, SIGKILL);
  int status = 0;
  ::waitpid(driver, &status, 0);
  ASSERT_TRUE(loaded) << a_.log()
                      << testing::ReadText(dir_.path() + "/driver.log");
  EXPECT_TRUE(testing::WaitFor(
      [&] {
        return a_.log().find("unloading 1 instance(s) of ended session") !=
               std::string::npos;
      },
      std::chrono::milliseconds(int(3000 * kSlack))))
      << a_.log();
}

// Files whose names start with `prefix` in `dir`.
size_t FilesIn(const std::string& dir, const std::string& prefix) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

// More instances on one host than this host has devices (so more than
// the driver's deploy threads): their Inits meet, so they ran side by
// side (Note [Loads side by side] in daemon/instance_load.cc), and so do
// their destructors at RemoveGraph (Note [Unloading side by side] in
// daemon/instance_host.cc). One after the other, the first would wait for
// the others in vain (5 s) and no "met-" file would appear for it.
TEST_P(HostsGraphTest, AHostsInstancesLoadAndUnloadSideBySide) {
  Init();
  const std::vector<int32_t>& d = GetParam();
  const int n = int(d.size()) + 2;
  const std::string meet = dir_.path() + "/meet";
  std::filesystem::create_directories(meet + "/init");
  std::filesystem::create_directories(meet + "/dtor");
  const std::string config = testing::FragileConfig(dir_.path(), false);
  FlowData x("x", 0);
  FlowNode prev = testing::FuncNode("id", "_BuiltIn_Identity");
  prev.SetInput(0, x);
  std::string deploy = R"({"deploy_info": [{"flow_node_name": "id", )"
                       R"("logic_device_id": "0:0:)" +
                       std::to_string(d.front()) + "\"}";
  for (int i = 0; i < n; ++i) {
    const std::string name = "m" + std::to_string(i);
    FunctionPp pp(name + "_pp");
    pp.SetCompileConfig(config);
    pp.SetInitParam("meet_dir", meet);
    pp.SetInitParam("meet_count", int64_t(n));
    FlowNode m(name, 1, 1);
    m.AddPp(pp);
    m.SetInput(0, prev, 0);
    prev = m;
    deploy += R"(, {"flow_node_name": ")" + name +
              R"(", "logic_device_id": "0:1:)" +
              std::to_string(d[size_t(i) % d.size()]) + "\"}";
  }
  FlowGraph g("meeting");
  g.SetInputs({x}).SetOutputs({prev});
  g.SetDeployInfo(deploy + "]}");
  Session s;
  ASSERT_TRUE(s.AddGraph(1, g).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(FilesIn(meet + "/init", "met-"), size_t(n)) << a_.log();
  Feed(s, 1, 1);
  std::vector<Tensor> out;
  FlowInfo info;
  ASSERT_TRUE(s.FetchData(1, &out, &info, 10000).ok());
  EXPECT_EQ(out.at(0).As<int64_t>().at(0), int64_t(1) << n);
  EXPECT_EQ(out.at(0).As<int64_t>().at(1), a_.pid());
  ASSERT_TRUE(s.RemoveGraph(1).ok());
  EXPECT_EQ(FilesIn(meet + "/dtor", "met-"), size_t(n)) << a_.log();
}

// The peers of the sessions that ended in `log` ("session S of P ended").
std::vector<std::string> SessionPeers(const std::string& log) {
  std::vector<std::string> peers;
  const std::string of = " of ", ended = " ended";
  for (size_t at = log.find("session "); at != std::string::npos;
       at = log.find("session ", at + 1)) {
    const size_t line_end = log.find('\n', at);
    const std::string line = log.substr(at, line_end - at);
    const size_t o = line.find(of);
    if (o == std::string::npos || line.size() < ended.size() ||
        line.compare(line.size() - ended.size(), ended.size(), ended) != 0) {
      continue;
    }
    peers.push_back(
        line.substr(o + of.size(), line.size() - ended.size() - o - of.size()));
  }
  return peers;
}

// A second deployment on the same hosts reuses the first one's connection
// (Note [Connections outlive deployments] in hosts/hosts_open.cc): both
// sessions end from the same peer address. A daemon restarted at the same
// address is reached by a new connection, not the dead one's.
TEST_P(HostsGraphTest, ConnectionsOutliveDeploymentsButNotTheirDaemon) {
  Init();
  const std::vector<int32_t>& d = GetParam();
  Session s;
  for (uint32_t id : {1u, 2u}) {
    ASSERT_TRUE(s.AddGraph(id, Graph(d.front(), d.back())).ok());
    Status st = s.BuildGraph(id);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_TRUE(s.RemoveGraph(id).ok());
  }
  ASSERT_TRUE(
      testing::WaitFor([&] { return SessionPeers(a_.log()).size() >= 2; },
                       std::chrono::milliseconds(int(3000 * kSlack))))
      << a_.log();
  const std::vector<std::string> peers = SessionPeers(a_.log());
  EXPECT_EQ(peers.at(0), peers.at(1)) << a_.log();
  // The daemon dies and another starts at its address.
  const std::string address = a_.address();
  a_.Kill(SIGKILL);
  ASSERT_TRUE(
      a_.Start(dir_, "a2", Args(address, FormatDeviceList(GetParam()), 1)));
  ASSERT_EQ(a_.address(), address);
  ASSERT_TRUE(s.AddGraph(3, Graph(d.front(), d.back())).ok());
  Status st = s.BuildGraph(3);
  ASSERT_TRUE(st.ok()) << st.ToString();
  Feed(s, 3, 7);
  std::vector<Tensor> out;
  FlowInfo info;
  st = s.FetchData(3, &out, &info, 10000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(out.at(0).As<int64_t>().at(0), 28);
  EXPECT_NE(a_.log().find("loaded node 'f1'"), std::string::npos) << a_.log();
}

// Without Options::init_timeout_ms (the default: no deadline) a remote
// Init may take longer than a control call's 5 s: the build waits for it
// (the first version of batched loads gave the batch 5 s). One device
// set: the test takes 5.5 s.
class HostsSlowInitTest : public HostsGraphTest {};

TEST_P(HostsSlowInitTest, ALongInitOnAHostIsWaitedFor) {
  Init();
  const std::vector<int32_t>& d = GetParam();
  Session s;
  ASSERT_TRUE(s.AddGraph(1, Graph(d.front(), d.back(), "pass", 0, 5500)).ok());
  Status st = s.BuildGraph(1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  Feed(s, 1, 2);
  std::vector<Tensor> out;
  FlowInfo info;
  st = s.FetchData(1, &out, &info, 10000);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(out.at(0).As<int64_t>().at(0), 8);
}

// A build whose remote Init outlives Options::init_timeout_ms fails, and
// its rollback's Stop waits for the load still running on the daemon
// (Note [A session's end waits for its loads] in daemon/instance_host.cc):
// by the time BuildGraph returns, that instance's destructor has run.
TEST_P(HostsSlowInitTest, ARolledBackBuildLeavesNoLoadRunning) {
  Init("", 1000);
  const std::vector<int32_t>& d = GetParam();
  const std::string meet = dir_.path() + "/marks";
  for (const char* n : {"f1", "f2"}) {
    std::filesystem::create_directories(meet + "/" + n + "/init");
    std::filesystem::create_directories(meet + "/" + n + "/dtor");
  }
  Session s;
  ASSERT_TRUE(
      s.AddGraph(1, Graph(d.front(), d.back(), "pass", 0, 2500, meet)).ok());
  Status st = s.BuildGraph(1);
  ASSERT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  for (const char* n : {"f1", "f2"}) {
    SCOPED_TRACE(n);
    EXPECT_EQ(FilesIn(meet + "/" + n + "/init", "met-"), 1u);
    EXPECT_EQ(FilesIn(meet + "/" + n + "/dtor", "met-"), 1u)
        << "the load outlived the build's rollback";
  }
}

INSTANTIATE_TEST_SUITE_P(DeviceSets, HostsSlowInitTest,
                         ::testing::Values(std::vector<int32_t>{3, 6, 7}));

INSTANTIATE_TEST_SUITE_P(DeviceSets, HostsGraphTest,
                         ::testing::Values(std::vector<int32_t>{2, 3, 4, 5},
                                           std::vector<int32_t>{3, 6, 7},
                                           std::vector<int32_t>{0, 1, 2}));

}  // namespace
}  // namespace hflow
