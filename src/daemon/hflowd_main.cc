// hflowd: the daemon on each host of a multi-host cluster. It initializes
// hflow over the devices it is given and serves the driver's control calls
// over gRPC on exactly the address it is given, to clients presenting the
// cluster's credentials (docs/user_guide.md, "Running across hosts").
//
//   hflowd --listen ADDR:PORT --devices LIST [--backend sim|cuda]
//          [--node-id N] [--token-file F] [--tls-ca F --tls-cert F
//          --tls-key F] [--ready-file F]
//
// Exit status: 0 after SIGTERM/SIGINT (a clean stop), 1 when it cannot
// start (address, runtime), 2 for bad arguments or credentials.
//
// Thread-safety: main parses, starts and waits; a named signal thread
// (hflowd-signals) stops the server; gRPC's threads run the calls.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "daemon/daemon_service.h"
#include "daemon/instance_host.h"
#include "hflow/rt.h"
#include "hflow/session.h"
#include "net/daemon_server.h"
#include "util/thread_name.h"

namespace hflow::daemon {
namespace {

struct Args {
  std::string listen, devices, backend, ready_file;
  int32_t node_id = -1;
  net::CredentialFiles creds;
};

std::mutex g_log_mu;
void Log(const std::string& line) {
  std::lock_guard<std::mutex> lock(g_log_mu);
  std::cerr << "hflowd: " << line << std::endl;
}

// Writes the bound address where scripts and tests wait for it, whole or
// not at all (written aside, then renamed).
Status WriteReadyFile(const std::string& path, const std::string& address) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << address << "\n";
    if (!out)
      return Status::NotFound("--ready-file " + path + ": cannot write");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return Status::NotFound("--ready-file " + path + ": cannot write");
  }
  return Status::OK();
}

net::HelloInfo Identity(const Args& a, const std::string& backend) {
  net::HelloInfo id;
  char host[256] = {};
  ::gethostname(host, sizeof(host) - 1);
  id.hostname = host;
  id.pid = ::getpid();
  id.backend = backend;
  rt::DeviceRuntime* runtime = rt::CurrentRuntime();
  for (int32_t d : runtime->DeviceIds()) {
    id.devices.push_back(d);
    id.labels.push_back(runtime->DeviceLabel(d));
  }
  id.node_id = a.node_id;
  id.release = HFLOW_RELEASE;
  id.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  return id;
}

int Serve(const Args& a) {
  net::ServerOptions so;
  Status s = net::ParseHostAddress(a.listen, true, "--listen", &so.listen);
  if (s.ok()) s = net::LoadCredentials(a.creds, &so.credentials);
  if (s.ok()) s = net::RequireCredentials(so.credentials);
  Options opts;
  if (s.ok()) s = ParseDeviceList(a.devices, &opts.cluster);
  if (!s.ok()) {
    Log(s.message());
    return 2;
  }
  opts.backend = a.backend;
  opts.cluster.source = "--devices";
  s = Initialize(opts);
  if (!s.ok()) {
    Log("cannot start: " + s.ToString());
    return 1;
  }
  rt::RuntimeOptions ro;
  ro.backend = a.backend;
  ro.cluster = opts.cluster;
  // The instances drivers place here run on the runtime Initialize made.
  auto instances = std::make_unique<InstanceHost>(
      rt::GetInstalledRuntime().runtime, opts.cluster.LocalDeviceIds(), Log);
  DaemonService service(Identity(a, rt::ResolvedBackend(ro)), Log,
                        instances.get());
  so.log = Log;
  std::unique_ptr<net::DaemonServer> server;
  s = net::DaemonServer::Start(so, &service, &server);
  if (!s.ok()) {
    Log(s.message());
    instances.reset();
    (void)Finalize();
    return 1;
  }
  const std::string bound = server->BoundAddress().ToString();
  Log("listening on " + bound + " (" +
      (a.node_id >= 0 ? "node " + std::to_string(a.node_id) + ", " : "") +
      "devices " + a.devices + ", backend " + rt::ResolvedBackend(ro) +
      ", protocol " + std::to_string(net::kProtocolVersion) + ", " +
      so.credentials.Describe() + ")");
  if (!a.ready_file.empty()) {
    s = WriteReadyFile(a.ready_file, bound);
    if (!s.ok()) Log(s.message());
  }
  // SIGTERM and SIGINT were blocked in main before any thread started, so
  // only this thread takes them.
  std::thread signals([&server] {
    util::SetCurrentThreadName("hflowd-signals");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    int sig = 0;
    sigwait(&set, &sig);
    Log(std::string("stopping (") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") +
        ")");
    server->Shutdown();
  });
  server->Wait();
  signals.join();
  server.reset();
  instances.reset();  // unloads what is left, before the runtime goes
  Status fin = Finalize();
  if (!fin.ok()) Log("finalize: " + fin.ToString());
  Log("stopped");
  return 0;
}

}  // namespace
}  // namespace hflow::daemon

int main(int argc, char** argv) {
  using hflow::daemon::Args;
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  hflow::util::SetCurrentThreadName("hflowd");
  Args a;
  CLI::App app{"hflowd: serves one host's devices to an hflow driver"};
  app.add_option("--listen", a.listen,
                 "ADDR:PORT to listen on (port 0: the system picks one); "
                 "the only address hflowd listens on")
      ->required();
  app.add_option("--devices", a.devices,
                 "the devices this host serves: \"2,3,4,5\" or \"2~5\"")
      ->required();
  app.add_option("--backend", a.backend, "sim or cuda (default: sim)")
      ->check(CLI::IsMember({"sim", "cuda"}));
  app.add_option("--node-id", a.node_id,
                 "the cluster node this host is (checked by the driver)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--token-file", a.creds.token_file,
                 "the cluster's shared token (mode 600)");
  app.add_option("--tls-ca", a.creds.tls_ca, "PEM CA of the cluster");
  app.add_option("--tls-cert", a.creds.tls_cert, "PEM certificate of hflowd");
  app.add_option("--tls-key", a.creds.tls_key, "PEM private key of hflowd");
  app.add_option("--ready-file", a.ready_file,
                 "write the bound ADDR:PORT here once listening");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help is 0; bad arguments 2
  }
  return hflow::daemon::Serve(a);
}
