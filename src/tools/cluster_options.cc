// --cluster / --devices options and their resolution into a ClusterConfig.
//
// Thread-safety: see cluster_options.h (main thread only).
#include "tools/cluster_options.h"

#include "hflow/ge_options.h"

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
                      "{\"devices\": [...]}); default: the file "
                      "$RESOURCE_CONFIG_PATH names, else devices 0,1,2,3")
          ->type_name("FILE")
          ->check(NonEmpty("a cluster config file"));
  CLI::Option* devices =
      cmd->add_option("--devices", args->devices,
                      "Local device ids, e.g. 2,3,4,5 or 2~5 or 0,3~4,7")
          ->type_name("LIST")
          ->check(NonEmpty("device ids such as 2,3,4,5"));
  // CLI11 makes excludes() symmetric.
  cluster->excludes(devices);
  cmd->add_option("--mbuf-pool-bytes", args->mbuf_pool,
                  "Message pool per used device, e.g. 512MB (default 256MiB)")
      ->type_name("SIZE")
      ->check(NonEmpty("a size such as 512MB"));
  cmd->add_option("--max-message-bytes", args->max_message,
                  "Largest message, e.g. 128MB (default 64MiB; the pool "
                  "must hold 3)")
      ->type_name("SIZE")
      ->check(NonEmpty("a size such as 128MB"));
  cmd->add_option("--queue-depth", args->queue_depth,
                  "Depth of every queue no flow attribute of the graph sets "
                  "(default 64; at least 2)")
      ->type_name("N");
}

namespace {
hflow::Status ParseSizeFlag(const std::string& flag, const std::string& text,
                            uint64_t* out) {
  if (text.empty()) return hflow::Status::OK();
  return hflow::ParseMemorySize(text, out).WithContext(flag + " '" + text +
                                                       "': ");
}
}  // namespace

hflow::Status ApplyMemoryOptions(const ClusterArgs& args, hflow::Options* out) {
  if (args.queue_depth != 0) {
    if (args.queue_depth < 2 || args.queue_depth > INT32_MAX) {
      return hflow::Status::InvalidArgument(
          "--queue-depth " + std::to_string(args.queue_depth) +
          ": must be at least 2 (and at most 2147483647); give the messages "
          "a queue holds");
    }
    out->queue_depth = static_cast<uint32_t>(args.queue_depth);
  }
  HFLOW_RETURN_IF_ERROR(ParseSizeFlag("--mbuf-pool-bytes", args.mbuf_pool,
                                      &out->mbuf_pool_bytes));
  return ParseSizeFlag("--max-message-bytes", args.max_message,
                       &out->max_message_bytes);
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
  // As GE, which reads its resource config from this variable.
  bool found = false;
  HFLOW_RETURN_IF_ERROR(hflow::ClusterConfigFromEnvironment(out, &found));
  if (!found) *out = hflow::DefaultClusterConfig();
  return hflow::Status::OK();
}

}  // namespace hflow::tools
