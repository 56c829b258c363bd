// Deploy info parsing (see deploy_info.h). Fields are read with
// util::JsonFields: every rejection reads "<file>: <json path>: <problem>;
// <hint>" and unknown keys are errors.
// Thread-safety: reentrant; nlohmann-json exceptions never escape.
#include "deploy/deploy_info.h"

#include <charconv>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "util/json_fields.h"

namespace hflow {
namespace deploy {
namespace {

using Json = nlohmann::json;
constexpr int64_t kMaxExpanded = 4096;  // a typo guard, not a limit of hflow

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool ParseInt(std::string_view s, int64_t* v) {
  s = Trim(s);
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size() && *v >= 0 &&
         *v <= INT32_MAX;
}

// "3" or "2~5" -> [lo, hi].
Status ParsePart(std::string_view part, std::string_view entry, int64_t* lo,
                 int64_t* hi) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("logic device '" + std::string(entry) +
                                   "': " + why +
                                   "; write cluster:node:device with numbers "
                                   "or ranges a~b (e.g. 0:0:2~5)");
  };
  size_t tilde = part.find('~');
  if (tilde == std::string_view::npos) {
    if (!ParseInt(part, lo))
      return bad("'" + std::string(part) + "' is not a number");
    *hi = *lo;
    return Status::OK();
  }
  if (!ParseInt(part.substr(0, tilde), lo) ||
      !ParseInt(part.substr(tilde + 1), hi)) {
    return bad("'" + std::string(part) + "' is not a range a~b");
  }
  if (*lo > *hi) return bad("range '" + std::string(part) + "' runs backwards");
  return Status::OK();
}

// Appends the devices of one entry to `out`, which with them may hold at
// most kMaxExpanded devices in all: the guard covers the whole list, so many
// small entries cannot add up to millions of devices either.
Status ParseEntry(std::string_view entry, std::vector<LogicDevice>* out) {
  std::vector<std::pair<int64_t, int64_t>> parts;
  std::string_view rest = entry;
  while (true) {
    size_t colon = rest.find(':');
    int64_t lo, hi;
    HFLOW_RETURN_IF_ERROR(ParsePart(rest.substr(0, colon), entry, &lo, &hi));
    parts.emplace_back(lo, hi);
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (parts.size() < 3 || parts.size() > 4) {
    return Status::InvalidArgument(
        "logic device '" + std::string(entry) +
        "': expected cluster:node:device[:numa], got " +
        std::to_string(parts.size()) + " parts; write e.g. 0:0:2");
  }
  // Each span is at most 2^31 and the running product stays below
  // kMaxExpanded before each step, so the product cannot overflow.
  int64_t count = 1;
  for (auto [lo, hi] : parts) {
    count *= (hi - lo + 1);
    if (count > kMaxExpanded) break;
  }
  if (count > kMaxExpanded - static_cast<int64_t>(out->size())) {
    return Status::InvalidArgument(
        "logic device '" + std::string(entry) + "' takes the list beyond " +
        std::to_string(kMaxExpanded) + " devices; is a range mistyped?");
  }
  if (parts.size() == 3) parts.emplace_back(-1, -1);
  for (int64_t c = parts[0].first; c <= parts[0].second; ++c)
    for (int64_t n = parts[1].first; n <= parts[1].second; ++n)
      for (int64_t d = parts[2].first; d <= parts[2].second; ++d)
        for (int64_t m = parts[3].first; m <= parts[3].second; ++m)
          out->push_back(
              LogicDevice{int32_t(c), int32_t(n), int32_t(d), int32_t(m)});
  return Status::OK();
}

std::string Describe(const LogicDevice& d) {
  return std::to_string(d.cluster) + ":" + std::to_string(d.node) + ":" +
         std::to_string(d.device);
}

// Checks one logic device against the cluster (one cluster, id 0).
Status CheckInCluster(const LogicDevice& d, const ClusterConfig& cluster) {
  if (d.cluster != 0) {
    return Status::InvalidArgument("cluster " + std::to_string(d.cluster) +
                                   " does not exist (the cluster config "
                                   "describes cluster 0); use cluster 0");
  }
  for (const ClusterNode& n : cluster.nodes) {
    if (n.node_id != d.node) continue;
    for (const DeviceDesc& dev : n.devices) {
      if (dev.device_id == d.device) return Status::OK();
    }
    return Status::InvalidArgument("device " + std::to_string(d.device) +
                                   " is not a device of cluster node " +
                                   std::to_string(d.node) +
                                   "; use a device the cluster config "
                                   "lists on that node");
  }
  return Status::InvalidArgument("cluster node " + std::to_string(d.node) +
                                 " does not exist; use a node id of the "
                                 "cluster config");
}

}  // namespace

Status ParseLogicDeviceList(std::string_view text,
                            std::vector<LogicDevice>* out) {
  out->clear();
  if (Trim(text).empty()) {
    return Status::InvalidArgument(
        "empty logic device list; write e.g. 0:0:2~5");
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view entry = Trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos
                                               : comma - start));
    if (entry.empty()) {
      return Status::InvalidArgument("logic device list '" + std::string(text) +
                                     "' has an empty entry; separate entries "
                                     "with single commas");
    }
    HFLOW_RETURN_IF_ERROR(ParseEntry(entry, out));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  // A set, not a pairwise scan: a list may hold kMaxExpanded devices.
  std::set<std::tuple<int32_t, int32_t, int32_t, int32_t>> seen;
  for (const LogicDevice& d : *out) {
    if (!seen.emplace(d.cluster, d.node, d.device, d.numa).second) {
      return Status::InvalidArgument("logic device list '" + std::string(text) +
                                     "' names " + Describe(d) +
                                     " twice; list each device once");
    }
  }
  return Status::OK();
}

namespace {

constexpr char kDocumentForm[] =
    "write {\"batch_deploy_info\": [...], \"deploy_info\": [...]}";
constexpr char kDevicesForm[] = "write a logic device list such as \"0:0:2~5\"";

// What one parse accumulates: the placement so far and the graph's nodes.
struct Placer {
  const util::JsonFields& f;
  const std::set<std::string>& known;
  const ClusterConfig& cluster;
  DeployInfo* info;

  Status Place(const std::string& path, const Json& name_j,
               const std::vector<LogicDevice>& devs) const {
    std::string name;
    HFLOW_RETURN_IF_ERROR(f.String(
        name_j, path, &name, "write the name of a flow node of the graph"));
    if (!known.count(name)) {
      return f.Error(path, "flow node '" + name + "' is not in the graph",
                     "name a flow node of the graph");
    }
    if (info->placement.count(name)) {
      return f.Error(path, "flow node '" + name + "' is placed twice",
                     "place each flow node once");
    }
    info->placement[name] = devs;
    return Status::OK();
  }

  // The devices of a logic device list, each checked against the cluster.
  Status Devices(const std::string& path, const Json& j,
                 std::vector<LogicDevice>* devs) const {
    std::string text;
    HFLOW_RETURN_IF_ERROR(f.String(j, path, &text, kDevicesForm));
    Status s = ParseLogicDeviceList(text, devs);
    for (size_t i = 0; s.ok() && i < devs->size(); ++i) {
      s = CheckInCluster((*devs)[i], cluster);
    }
    return s.ok() ? s : f.Error(path, s.message(), "");
  }

  Status Batch(const std::string& p, const Json& e) const {
    HFLOW_RETURN_IF_ERROR(f.Object(
        e, p, "write {\"flow_node_list\": [...], \"logic_device_list\": ...}"));
    HFLOW_RETURN_IF_ERROR(
        f.Keys(e, p, {"flow_node_list", "logic_device_list"},
               {"redundant_logic_device_list", "invoke_list"}));
    const Json *nodes = nullptr, *list = nullptr;
    HFLOW_RETURN_IF_ERROR(f.Required(e, p, "flow_node_list",
                                     "list the flow nodes to place", &nodes));
    HFLOW_RETURN_IF_ERROR(f.Array(*nodes, p + ".flow_node_list",
                                  "list the flow nodes, e.g. [\"add\"]"));
    HFLOW_RETURN_IF_ERROR(
        f.Required(e, p, "logic_device_list", kDevicesForm, &list));
    std::vector<LogicDevice> devs;
    HFLOW_RETURN_IF_ERROR(Devices(p + ".logic_device_list", *list, &devs));
    for (size_t k = 0; k < nodes->size(); ++k) {
      HFLOW_RETURN_IF_ERROR(
          Place(util::JsonPath(p + ".flow_node_list", k), (*nodes)[k], devs));
    }
    return Status::OK();
  }

  Status Single(const std::string& p, const Json& e) const {
    HFLOW_RETURN_IF_ERROR(f.Object(
        e, p, "write {\"flow_node_name\": ..., \"logic_device_id\": ...}"));
    HFLOW_RETURN_IF_ERROR(f.Keys(e, p, {"flow_node_name", "logic_device_id"}));
    const Json *name = nullptr, *id = nullptr;
    HFLOW_RETURN_IF_ERROR(f.Required(e, p, "flow_node_name",
                                     "name the flow node to place", &name));
    HFLOW_RETURN_IF_ERROR(
        f.Required(e, p, "logic_device_id", kDevicesForm, &id));
    std::vector<LogicDevice> devs;
    HFLOW_RETURN_IF_ERROR(Devices(p + ".logic_device_id", *id, &devs));
    return Place(p + ".flow_node_name", *name, devs);
  }
};

}  // namespace

Status ParseDeployInfo(std::string_view json_text, std::string_view source,
                       const std::vector<std::string>& node_names,
                       const ClusterConfig& cluster, DeployInfo* out) {
  const util::JsonFields f(source, "<deploy info>");
  Json root;
  HFLOW_RETURN_IF_ERROR(f.Parse(json_text, &root));
  HFLOW_RETURN_IF_ERROR(f.Object(root, util::kDocumentPath, kDocumentForm));
  // GE's placement fields hflow has no use for (scheduling and redundancy
  // hints, invoked-model placement) are accepted and ignored.
  HFLOW_RETURN_IF_ERROR(
      f.Keys(root, "", {"batch_deploy_info", "deploy_info"},
             {"dynamic_schedule_enable", "keep_logic_device_order"}));
  const std::set<std::string> known(node_names.begin(), node_names.end());
  DeployInfo info;
  const Placer placer{f, known, cluster, &info};
  const Json* list = nullptr;
  HFLOW_RETURN_IF_ERROR(f.OptArray(root, "", "batch_deploy_info", &list));
  for (size_t i = 0; list && i < list->size(); ++i) {
    HFLOW_RETURN_IF_ERROR(
        placer.Batch(util::JsonPath("batch_deploy_info", i), (*list)[i]));
  }
  HFLOW_RETURN_IF_ERROR(f.OptArray(root, "", "deploy_info", &list));
  for (size_t i = 0; list && i < list->size(); ++i) {
    HFLOW_RETURN_IF_ERROR(
        placer.Single(util::JsonPath("deploy_info", i), (*list)[i]));
  }
  *out = std::move(info);
  return Status::OK();
}

Status LoadDeployInfoFile(const std::string& path,
                          const std::vector<std::string>& node_names,
                          const ClusterConfig& cluster, DeployInfo* out) {
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound(path + ": cannot read the deploy info file");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseDeployInfo(ss.str(), path, node_names, cluster, out);
}

}  // namespace deploy
}  // namespace hflow
