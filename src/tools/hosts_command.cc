// `hflow hosts` (tools/hosts_command.h).
//
// Thread-safety: main thread only.
#include "tools/hosts_command.h"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "net/cluster_hosts.h"

namespace hflow::tools {
namespace {

void PrintJson(const ClusterConfig& cfg,
               const std::vector<net::HostProbe>& probes, std::ostream& out) {
  nlohmann::json hosts = nlohmann::json::array();
  size_t next = 0;
  for (const ClusterNode& n : cfg.nodes) {
    nlohmann::json h = {{"node_id", n.node_id}, {"local", n.is_local}};
    if (n.is_local) {
      h["ok"] = true;
      h["devices"] = n.DeviceIds();
    } else {
      const net::HostProbe& p = probes[next++];
      h["address"] = p.address.host.empty()
                         ? nlohmann::json(nullptr)
                         : nlohmann::json(p.address.ToString());
      h["ok"] = p.status.ok();
      if (!p.status.ok()) h["error"] = p.status.ToString();
      if (p.status.ok()) {
        h["hello_ms"] = p.hello_ms;
        h["hostname"] = p.info.hostname;
        h["pid"] = p.info.pid;
        h["backend"] = p.info.backend;
        h["release"] = p.info.release;
        h["devices"] = p.info.devices;
        h["labels"] = p.info.labels;
      }
    }
    hosts.push_back(std::move(h));
  }
  out << nlohmann::json{{"source", cfg.source}, {"hosts", hosts}}.dump(2)
      << "\n";
}

void PrintTable(const ClusterConfig& cfg,
                const std::vector<net::HostProbe>& probes, std::ostream& out) {
  out << "cluster " << cfg.source << "\n"
      << std::left << std::setw(6) << "NODE" << std::setw(24) << "ADDRESS"
      << std::setw(10) << "STATE"
      << "DETAIL\n";
  size_t next = 0;
  for (const ClusterNode& n : cfg.nodes) {
    out << std::setw(6) << n.node_id;
    if (n.is_local) {
      out << std::setw(24) << "(this host)" << std::setw(10) << "local"
          << "devices " << FormatDeviceList(n.DeviceIds()) << "\n";
      continue;
    }
    const net::HostProbe& p = probes[next++];
    out << std::setw(24)
        << (p.address.host.empty() ? "(none)" : p.address.ToString());
    if (!p.status.ok()) {
      out << std::setw(10) << "FAILED" << p.status.message() << "\n";
      continue;
    }
    char rtt[32];
    std::snprintf(rtt, sizeof(rtt), "%.1f ms", p.hello_ms);
    out << std::setw(10) << "ok" << p.info.hostname << " pid " << p.info.pid
        << ", " << p.info.backend << ", devices "
        << FormatDeviceList(p.info.devices) << ", hflow " << p.info.release
        << ", hello " << rtt << "\n";
  }
}

}  // namespace

int RunHosts(const ClusterArgs& args, bool json, int32_t timeout_ms,
             std::ostream& out, std::ostream& err) {
  ClusterConfig cfg;
  Status s = ResolveCluster(args, &cfg);
  if (!s.ok()) {
    err << "hflow hosts: " << s.ToString() << "\n";
    return 2;
  }
  net::Credentials creds;
  if (!cfg.RemoteNodes().empty()) {
    s = net::LoadClusterCredentials(cfg, &creds);
    if (!s.ok()) {
      err << "hflow hosts: " << s.ToString() << "\n";
      return 2;
    }
  }
  net::ProbeOptions po;
  po.timeout_ms = timeout_ms;
  std::vector<net::HostProbe> probes;
  s = net::ProbeHosts(cfg, creds, po, &probes);
  if (json) {
    PrintJson(cfg, probes, out);
  } else {
    PrintTable(cfg, probes, out);
  }
  out.flush();
  if (!s.ok()) {
    err << "hflow hosts: " << s.ToString() << "\n";
    return 1;
  }
  return 0;
}

void AddHostsCommand(CLI::App* app) {
  CLI::App* cmd = app->add_subcommand(
      "hosts",
      "Check a multi-host cluster: contact every other host's hflowd and "
      "compare it with the cluster config");
  auto args = std::make_shared<ClusterArgs>();
  auto json = std::make_shared<bool>(false);
  auto timeout = std::make_shared<int32_t>(5000);
  AddClusterOptions(cmd, args.get());
  cmd->add_flag("--json", *json, "Print one JSON object instead of a table");
  cmd->add_option("--timeout-ms", *timeout,
                  "How long to wait for each host (default 5000)")
      ->check(CLI::Range(1, 600000));
  cmd->callback([args, json, timeout] {
    int code = RunHosts(*args, *json, *timeout, std::cout, std::cerr);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace hflow::tools
