// Device lists ("0,3~4,7", the --devices flag, and back), memory sizes
// ("32GB", "[DDR:32GB]"), the built-in clusters and ClusterConfig's
// accessors; the JSON cluster config is parsed in cluster_config.cc. Rejections
// are kInvalidArgument in the wording of util::FieldError: "--devices: <item>:
// <problem>; <hint>".
//
// Thread-safety: all functions are reentrant; they touch no shared state.
#include <cctype>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hflow/cluster.h"
#include "util/json_fields.h"

namespace hflow {
namespace {

// Ranges such as "0~100000000" are typos, not clusters; refuse them before
// allocating anything.
constexpr int64_t kMaxDevicesPerNode = 4096;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Lower(std::string_view s) {
  std::string r(s);
  for (char& c : r)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

Status ListError(const std::string& item, const std::string& problem,
                 const std::string& hint) {
  return util::FieldError("--devices", item, problem, hint);
}

// Parses one "a" or "a~b" item of a device list.
Status ParseListItem(std::string_view item, int64_t* lo, int64_t* hi) {
  auto number = [&](std::string_view s, int64_t* v) -> Status {
    s = Trim(s);
    std::string q = "\"" + std::string(item) + "\"";
    if (!s.empty() && s[0] == '-') {
      return ListError(q, "negative device id", "device ids start at 0");
    }
    if (s.empty() ||
        s.find_first_not_of("0123456789") != std::string_view::npos) {
      return ListError(q, "not a device id or range",
                       "write ids like 2,3 or ranges like 2~5");
    }
    // More than 10 digits cannot be an int32 (and could overflow stoll).
    *v = s.size() > 10 ? int64_t{INT32_MAX} + 1 : std::stoll(std::string(s));
    if (*v > INT32_MAX) {
      return ListError(q, "device id too large", "ids must fit in 32 bits");
    }
    return Status::OK();
  };
  size_t tilde = item.find('~');
  HFLOW_RETURN_IF_ERROR(number(item.substr(0, tilde), lo));
  *hi = *lo;
  if (tilde == std::string_view::npos) return Status::OK();
  HFLOW_RETURN_IF_ERROR(number(item.substr(tilde + 1), hi));
  std::string q = "\"" + std::string(item) + "\"";
  if (*hi < *lo)
    return ListError(q, "range end is below its start",
                     "write ranges low~high");
  if (*hi - *lo >= kMaxDevicesPerNode) {
    return ListError(q,
                     "range spans more than " +
                         std::to_string(kMaxDevicesPerNode) + " devices",
                     "check the bounds");
  }
  return Status::OK();
}

}  // namespace

Status ParseDeviceList(std::string_view list, ClusterConfig* out) {
  if (Trim(list).empty()) {
    return ListError("", "empty device list",
                     "write ids like 2,3,4,5 or ranges like 2~5");
  }
  std::vector<int32_t> ids;
  std::set<int64_t> seen;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = std::min(list.find(',', start), list.size());
    std::string_view item = Trim(list.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) {
      return ListError("", "empty item in \"" + std::string(list) + "\"",
                       "separate ids with single commas, e.g. 2,3,4,5");
    }
    int64_t lo = 0, hi = 0;
    HFLOW_RETURN_IF_ERROR(ParseListItem(item, &lo, &hi));
    for (int64_t d = lo; d <= hi; ++d) {
      if (!seen.insert(d).second) {
        return ListError("\"" + std::string(item) + "\"",
                         "device " + std::to_string(d) + " listed twice",
                         "list each device once");
      }
      ids.push_back(static_cast<int32_t>(d));
    }
    if (static_cast<int64_t>(ids.size()) > kMaxDevicesPerNode) {
      return ListError(
          "", "more than " + std::to_string(kMaxDevicesPerNode) + " devices",
          "check the list");
    }
  }
  ClusterConfig cfg = MakeLocalCluster(ids);
  cfg.source = "--devices";
  *out = std::move(cfg);
  return Status::OK();
}

ClusterConfig DefaultClusterConfig() {
  ClusterConfig cfg = MakeLocalCluster({0, 1, 2, 3});
  cfg.source = "default";
  return cfg;
}

ClusterConfig MakeLocalCluster(const std::vector<int32_t>& device_ids,
                               uint64_t memory_bytes) {
  ClusterNode node;
  node.is_local = true;
  for (size_t i = 0; i < device_ids.size(); ++i) {
    node.devices.push_back(
        DeviceDesc{device_ids[i], static_cast<int32_t>(i), memory_bytes});
  }
  ClusterConfig cfg;
  cfg.nodes.push_back(std::move(node));
  return cfg;
}

Status ParseMemorySize(std::string_view text, uint64_t* bytes) {
  std::string_view s = Trim(text);
  const std::string quoted = "\"" + std::string(text) + "\"";
  const std::string hint =
      "; write e.g. \"32GB\", \"512MiB\", \"[DDR:32GB]\" or bytes";
  // GE's item_def form "[DDR:32GB]": the size follows the first colon (and
  // ends at a comma when several memories are listed).
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']') {
    s = s.substr(1, s.size() - 2);
    size_t colon = s.find(':');
    if (colon != std::string_view::npos) s = s.substr(colon + 1);
    s = Trim(s.substr(0, s.find(',')));
  }
  size_t digits = 0;
  while (digits < s.size() &&
         std::isdigit(static_cast<unsigned char>(s[digits])))
    ++digits;
  if (digits == 0)
    return Status::InvalidArgument("cannot parse memory size " + quoted + hint);
  static const std::map<std::string, int> kShift = {
      {"", 0},     {"b", 0},   {"k", 10},   {"kb", 10}, {"kib", 10},
      {"m", 20},   {"mb", 20}, {"mib", 20}, {"g", 30},  {"gb", 30},
      {"gib", 30}, {"t", 40},  {"tb", 40},  {"tib", 40}};
  auto unit = kShift.find(Lower(Trim(s.substr(digits))));
  if (unit == kShift.end()) {
    return Status::InvalidArgument("unknown unit in memory size " + quoted +
                                   hint);
  }
  uint64_t value = 0;
  for (size_t i = 0; i < digits; ++i) {
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      return Status::InvalidArgument("memory size " + quoted +
                                     " overflows 64 bits" + hint);
    }
    value = value * 10 + d;
  }
  if (unit->second > 0 &&
      value > (std::numeric_limits<uint64_t>::max() >> unit->second)) {
    return Status::InvalidArgument("memory size " + quoted +
                                   " overflows 64 bits" + hint);
  }
  *bytes = value << unit->second;
  return Status::OK();
}

// ---- ClusterConfig's accessors ----

const ClusterNode& ClusterConfig::LocalNode() const {
  for (const ClusterNode& n : nodes) {
    if (n.is_local) return n;
  }
  // Only a default-constructed config has no local node; it has no devices.
  static const ClusterNode kEmpty;
  return kEmpty;
}

std::vector<int32_t> ClusterNode::DeviceIds() const {
  std::vector<int32_t> ids;
  for (const DeviceDesc& d : devices) ids.push_back(d.device_id);
  return ids;
}

std::vector<int32_t> ClusterConfig::LocalDeviceIds() const {
  return LocalNode().DeviceIds();
}

bool ClusterConfig::HasLocalDevice(int32_t device_id) const {
  for (const DeviceDesc& d : LocalNode().devices) {
    if (d.device_id == device_id) return true;
  }
  return false;
}

std::vector<const ClusterNode*> ClusterConfig::RemoteNodes() const {
  std::vector<const ClusterNode*> out;
  for (const ClusterNode& n : nodes) {
    if (!n.is_local) out.push_back(&n);
  }
  return out;
}

std::optional<int32_t> ClusterConfig::ResolvedDefaultDevice() const {
  if (default_device) return default_device;
  if (HasLocalDevice(0)) return 0;
  return std::nullopt;
}

std::string FormatDeviceList(const std::vector<int32_t>& ids) {
  std::string r;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) r += ",";
    r += std::to_string(ids[i]);
  }
  return r;
}

}  // namespace hflow
