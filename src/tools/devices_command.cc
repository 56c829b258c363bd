// `hflow devices`: prints the cluster as a table or as one JSON object.
//
// Thread-safety: main thread only (see devices_command.h).
#include "tools/devices_command.h"

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "hflow/rt.h"

namespace hflow::tools {
namespace {

// What stands for each local device under a started backend; empty for
// the sim (the table then keeps its usual columns).
using Labels = std::map<int32_t, std::string>;

// "16 GiB", "1.5 GiB", "512 MiB", "100 B": binary units, as GE's "GB" means.
std::string HumanBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (unit < 6 && bytes >= (uint64_t{1} << (10 * (unit + 1)))) ++unit;
  uint64_t scale = uint64_t{1} << (10 * unit);
  char buf[32];
  if (bytes % scale == 0) {
    std::snprintf(buf, sizeof(buf), "%llu %s",
                  static_cast<unsigned long long>(bytes / scale), kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f %s",
                  static_cast<double>(bytes) / static_cast<double>(scale),
                  kUnits[unit]);
  }
  return buf;
}

size_t DeviceCount(const ClusterConfig& cfg) {
  size_t n = 0;
  for (const ClusterNode& node : cfg.nodes) n += node.devices.size();
  return n;
}

void PrintJson(const ClusterConfig& cfg, const std::string& backend,
               const Labels& labels, std::ostream& out) {
  using Json = nlohmann::ordered_json;
  Json nodes = Json::array();
  for (const ClusterNode& node : cfg.nodes) {
    Json devices = Json::array();
    for (const DeviceDesc& d : node.devices) {
      Json dev = {{"device_id", d.device_id},
                  {"item_id", d.item_id},
                  {"memory_bytes", d.memory_bytes}};
      auto label = labels.find(d.device_id);
      if (node.is_local && label != labels.end()) dev["on"] = label->second;
      devices.push_back(std::move(dev));
    }
    nodes.push_back({{"node_id", node.node_id},
                     {"is_local", node.is_local},
                     {"devices", std::move(devices)}});
  }
  std::optional<int32_t> def = cfg.ResolvedDefaultDevice();
  Json doc = {{"source", cfg.source},
              {"backend", backend},
              {"default_device", def ? Json(*def) : Json(nullptr)},
              {"nodes", std::move(nodes)}};
  // A file name need not be valid UTF-8; replace rather than throw.
  out << doc.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
}

void PrintTable(const ClusterConfig& cfg, const Labels& labels,
                std::ostream& out) {
  std::optional<int32_t> def = cfg.ResolvedDefaultDevice();
  out << "Source: " << cfg.source << " (" << cfg.nodes.size()
      << (cfg.nodes.size() == 1 ? " node, " : " nodes, ") << DeviceCount(cfg)
      << " devices)\n";
  if (def) {
    out << "Default device: " << *def
        << " (a thread with no bound context is bound to it implicitly)\n";
  } else {
    out << "Default device: none (every thread must bind a device "
           "explicitly)\n";
  }
  out << "\n"
      << std::left << std::setw(6) << "NODE" << std::setw(7) << "LOCAL"
      << std::setw(8) << "DEVICE" << std::setw(6) << "ITEM" << std::setw(9)
      << "DEFAULT" << (labels.empty() ? "MEMORY\n" : "MEMORY    ON\n");
  for (const ClusterNode& node : cfg.nodes) {
    for (const DeviceDesc& d : node.devices) {
      // Implicit binding only ever targets a device of the local node.
      bool is_default = node.is_local && def && *def == d.device_id;
      out << std::setw(6) << node.node_id << std::setw(7)
          << (node.is_local ? "yes" : "no") << std::setw(8) << d.device_id
          << std::setw(6) << d.item_id << std::setw(9)
          << (is_default ? "yes" : "no");
      auto label = labels.find(d.device_id);
      if (node.is_local && label != labels.end()) {
        out << std::setw(10) << HumanBytes(d.memory_bytes) << label->second;
      } else {
        out << HumanBytes(d.memory_bytes);
      }
      out << "\n";
    }
  }
}

}  // namespace

int RunDevices(const ClusterArgs& args, bool json, std::ostream& out,
               std::ostream& err, const std::string& backend) {
  ClusterConfig cfg;
  Status s = ResolveCluster(args, &cfg);
  if (!s.ok()) {
    err << "hflow devices: " << s.ToString() << "\n";
    return 2;  // the cluster named on the command line is wrong
  }
  Labels labels;
  // As Initialize: the flag, else the cluster file's field, else the sim.
  rt::RuntimeOptions ro;
  ro.backend = backend;
  ro.cluster = cfg;
  const std::string chosen = rt::ResolvedBackend(ro);
  if (chosen != "sim") {
    std::shared_ptr<rt::DeviceRuntime> runtime;
    s = rt::InitializeRuntime(ro, &runtime);
    if (!s.ok()) {
      err << "hflow devices: " << s.ToString() << "\n";
      return 1;
    }
    for (int32_t id : runtime->DeviceIds()) {
      labels[id] = runtime->DeviceLabel(id);
    }
  }
  if (json) {
    PrintJson(cfg, chosen, labels, out);
  } else {
    PrintTable(cfg, labels, out);
  }
  out.flush();
  return 0;
}

void AddDevicesCommand(CLI::App* app) {
  CLI::App* cmd = app->add_subcommand(
      "devices",
      "List the cluster's nodes and devices, and the default device");
  // The callback outlives this function; shared state keeps the values alive
  // as long as CLI11 keeps the callback.
  auto args = std::make_shared<ClusterArgs>();
  auto json = std::make_shared<bool>(false);
  auto backend = std::make_shared<std::string>();
  AddClusterOptions(cmd, args.get());
  cmd->add_flag("--json", *json, "Print one JSON object instead of a table");
  cmd->add_option("--backend", *backend,
                  "Device runtime to start over the cluster: sim or cuda "
                  "(shows the GPU behind each device); default: the cluster "
                  "file's \"backend\", else sim")
      ->check(CLI::IsMember({"sim", "cuda"}));
  cmd->callback([args, json, backend] {
    int code = RunDevices(*args, *json, std::cout, std::cerr, *backend);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace hflow::tools
