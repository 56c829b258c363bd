// --cluster / --devices options and their resolution into a ClusterConfig.
//
// Thread-safety: see cluster_options.h (main thread only).
#include "tools/cluster_options.h"

namespace hflow::tools {
namespace {

// Refuses an empty option value with a message that says what to write.
CLI::Validator NonEmpty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& value) -> std::string {
        if (value.find_first_not_of(" \t") != std::string::npos) return "";
        return "empty value; give " + what;
      },
      "", "NONEMPTY");
}

}  // namespace

void AddClusterOptions(CLI::App* cmd, ClusterArgs* args) {
  CLI::Option* cluster =
      cmd->add_option("--cluster", args->cluster_file,
                      "Cluster config JSON (GE numa_config or "
                      "{\"devices\": [...]}); default: devices 0,1,2,3")
          ->type_name("FILE")
          ->check(NonEmpty("a cluster config file"));
  CLI::Option* devices =
      cmd->add_option("--devices", args->devices,
                      "Local device ids, e.g. 2,3,4,5 or 2~5 or 0,3~4,7")
          ->type_name("LIST")
          ->check(NonEmpty("device ids such as 2,3,4,5"));
  // CLI11 makes excludes() symmetric.
  cluster->excludes(devices);
}

hflow::Status ResolveCluster(const ClusterArgs& args,
                             hflow::ClusterConfig* out) {
  if (!args.cluster_file.empty() && !args.devices.empty()) {
    return hflow::Status::InvalidArgument(
        "--cluster and --devices are mutually exclusive; give one of them");
  }
  if (!args.cluster_file.empty()) {
    return hflow::LoadClusterConfigFile(args.cluster_file, out);
  }
  if (!args.devices.empty()) return hflow::ParseDeviceList(args.devices, out);
  *out = hflow::DefaultClusterConfig();
  return hflow::Status::OK();
}

}  // namespace hflow::tools
