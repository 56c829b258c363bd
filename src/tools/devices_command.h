// `hflow devices [--cluster FILE | --devices LIST] [--json]`: lists every
// node and device of the selected cluster and which device is the default
// device for implicit binding (docs/user_guide.md, "The command line"). Core,
// RunDevices, writes to the given streams so that tests can call it directly.
//
// Exit-code convention for all subcommands: a callback that fails throws
// CLI::RuntimeError(code), which main turns into the process exit status
// without printing anything more.
//
// Thread-safety: main thread only.
#ifndef HFLOW_TOOLS_DEVICES_COMMAND_H_
#define HFLOW_TOOLS_DEVICES_COMMAND_H_

#include <CLI/CLI.hpp>
#include <ostream>
#include <string>

#include "tools/cluster_options.h"

namespace hflow::tools {

// Registers the `devices` subcommand and its callback on `app`.
void AddDevicesCommand(CLI::App* app);

// Prints the cluster `args` selects: a table, or with `json` one JSON object
// {"source", "default_device" (id or null), "nodes": [{"node_id",
// "is_local", "devices": [{"device_id", "item_id", "memory_bytes"}]}]}.
// The backend (`backend`, else the cluster file's "backend", else "sim"),
// when not the sim, is started over the cluster (installing its runtime),
// and each local device shows what stands for it ("on": "GPU 0 (NVIDIA
// ...)"); JSON always names the backend. Returns 0; 2 after writing a
// configuration error to `err`; 1 when the backend cannot start.
int RunDevices(const ClusterArgs& args, bool json, std::ostream& out,
               std::ostream& err, const std::string& backend = "");

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_DEVICES_COMMAND_H_
