// Cluster config parsing: GE's numa_config subset and the compact
// {"devices": [...]} form (device lists and memory sizes are parsed in
// cluster_lists.cc).
// Every rejection is kInvalidArgument "<source>: <json path>: <problem>;
// <hint>" so that a user can find and fix the field without reading code.
// Unknown keys are rejected (util/json_keys.h) at every object read here;
// GE's documented numa_config fields hflow does not use are accepted and
// ignored, and the subtrees hflow never reads (node_def, nodes_topology,
// data_panel) are not inspected.
// nlohmann-json exceptions are caught here and never cross the API.
//
// Thread-safety: all functions are reentrant; they touch no shared state.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "hflow/cluster.h"
#include "util/config_error.h"
#include "util/json_depth.h"
#include "util/json_keys.h"

namespace hflow {
namespace {

using Json = nlohmann::json;
using Type = Json::value_t;

std::string JoinIds(const std::vector<int32_t>& ids) {
  std::string r;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) r += ",";
    r += std::to_string(ids[i]);
  }
  return r;
}

// Carries the source name so that every check can build a complete message.
class Checker {
 public:
  explicit Checker(std::string_view source)
      : source_(source.empty() ? "<cluster config>" : source) {}

  const std::string& source() const { return source_; }

  Status Error(const std::string& path, const std::string& problem,
               const std::string& hint) const {
    return util::ConfigError(source_, path, problem, hint);
  }

  // A non-negative int32 id (device, node or item id).
  Status Id(const Json& v, const std::string& path, int32_t* out) const {
    if (!v.is_number_integer()) {
      return Error(path, "expected a non-negative integer, got " + Describe(v),
                   "write a number such as 2");
    }
    if (v.is_number_unsigned() ? v.get<uint64_t>() > INT32_MAX
                               : v.get<int64_t>() > INT32_MAX) {
      return Error(path, "id " + v.dump() + " is too large",
                   "ids must fit in 32 bits");
    }
    if (!v.is_number_unsigned() && v.get<int64_t>() < 0) {
      return Error(path, "negative id " + v.dump(), "ids start at 0");
    }
    *out = static_cast<int32_t>(v.get<int64_t>());
    return Status::OK();
  }

  // Unknown keys of `obj` at `path` (util/json_keys.h).
  Status Keys(const Json& obj, const std::string& path,
              std::initializer_list<const char*> known,
              std::initializer_list<const char*> ignored = {}) const {
    return util::CheckJsonKeys(obj, source_, path, known, ignored);
  }

  // A memory size: a positive integer of bytes or a string such as "32GB"
  // (hflow's memory_bytes). Zero is refused because a device without memory
  // can run nothing, and it is almost always a missing unit or a typo.
  Status Memory(const Json& v, const std::string& path, uint64_t* out) const {
    uint64_t bytes = 0;
    if (v.is_number_integer() && !v.is_number_unsigned()) {
      return Error(path, "negative memory size " + v.dump(),
                   "write bytes (17179869184) or a size such as \"32GB\"");
    }
    if (v.is_string() && v.get<std::string>().find('[') != std::string::npos) {
      return Error(path,
                   "GE's item_def form " + v.dump() + " is not a size here",
                   "write bytes (17179869184) or a size such as \"32GB\"");
    }
    if (v.is_number_unsigned()) {
      bytes = v.get<uint64_t>();
    } else if (v.is_string()) {
      Status s = ParseMemorySize(v.get<std::string>(), &bytes);
      if (!s.ok()) return Error(path, s.message(), "");
    } else {
      return Error(path, "expected a memory size, got " + Describe(v),
                   "write bytes (17179869184) or a string such as \"32GB\"");
    }
    if (bytes == 0) {
      return Error(path, "memory size is zero",
                   "give each device some memory, e.g. \"16GB\"");
    }
    *out = bytes;
    return Status::OK();
  }

  // GE's item_def memory: a string "[<kind>:<size>]" such as "[DDR:32GB]"
  // (GE reads it as a string; a bare "32GB" is not GE's form and GE would
  // not read it, so it is refused rather than guessed at).
  Status GeMemory(const Json& v, const std::string& path, uint64_t* out) const {
    const char* kForm = "write GE's form \"[DDR:<size>]\", e.g. \"[DDR:32GB]\"";
    if (!v.is_string()) {
      return Error(path, "expected a string, got " + Describe(v), kForm);
    }
    const std::string text = v.get<std::string>();
    if (text.size() < 2 || text.front() != '[' || text.back() != ']' ||
        text.find(':') == std::string::npos) {
      return Error(path, "memory " + v.dump() + " is not in GE's form", kForm);
    }
    uint64_t bytes = 0;
    Status s = ParseMemorySize(text, &bytes);
    if (!s.ok()) return Error(path, s.message(), "");
    if (bytes == 0) {
      return Error(path, "memory size is zero",
                   "give each device some memory, e.g. \"[DDR:16GB]\"");
    }
    *out = bytes;
    return Status::OK();
  }

  static std::string Describe(const Json& v) {
    std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + text;
  }

 private:
  std::string source_;
};

// Fetches an optional member of an object and checks its JSON type
// (array, boolean, string or object); `*found` is null when it is absent.
Status Member(const Checker& c, const Json& obj, const std::string& path,
              const char* key, Type type, const Json** found) {
  auto it = obj.find(key);
  *found = it == obj.end() ? nullptr : &*it;
  if (*found == nullptr || it->type() == type) return Status::OK();
  static const std::map<Type, const char*> kNames = {
      {Type::array, "an array"},
      {Type::boolean, "true or false"},
      {Type::string, "a string"},
      {Type::object, "an object"}};
  return c.Error(path + key,
                 std::string("expected ") + kNames.at(type) + ", got " +
                     Checker::Describe(*it),
                 "see the user guide's \"Cluster\" section");
}

struct ItemDefs {
  std::map<std::string, uint64_t> by_type;
  std::optional<uint64_t> single;
};

// Memory per item type from "item_def". `single` is set when exactly one
// definition exists: it then applies to items that do not name a type.
Status ParseItemDefs(const Checker& c, const Json& root, ItemDefs* out) {
  const Json* defs = nullptr;
  HFLOW_RETURN_IF_ERROR(Member(c, root, "", "item_def", Type::array, &defs));
  if (defs == nullptr) return Status::OK();
  for (size_t i = 0; i < defs->size(); ++i) {
    const Json& d = (*defs)[i];
    std::string path = "item_def[" + std::to_string(i) + "]";
    if (!d.is_object()) {
      return c.Error(path, "expected an object, got " + Checker::Describe(d),
                     "write {\"item_type\": ..., \"memory\": \"[DDR:32GB]\"}");
    }
    HFLOW_RETURN_IF_ERROR(c.Keys(d, path, {"item_type", "memory"},
                                 {"aic_type", "resource_type"}));
    const Json *type = nullptr, *mem = nullptr;
    HFLOW_RETURN_IF_ERROR(
        Member(c, d, path + ".", "item_type", Type::string, &type));
    auto mem_it = d.find("memory");
    if (mem_it != d.end()) mem = &*mem_it;
    uint64_t bytes = kDefaultDeviceMemoryBytes;
    if (mem) HFLOW_RETURN_IF_ERROR(c.GeMemory(*mem, path + ".memory", &bytes));
    if (defs->size() == 1) out->single = bytes;
    if (type && !out->by_type.emplace(type->get<std::string>(), bytes).second) {
      return c.Error(
          path + ".item_type",
          "item type \"" + type->get<std::string>() + "\" defined twice",
          "define each item type once");
    }
  }
  return Status::OK();
}

Status ParseItem(const Checker& c, const Json& item, const std::string& path,
                 size_t index, const ItemDefs& defs, DeviceDesc* dev) {
  if (!item.is_object()) {
    return c.Error(path, "expected an object, got " + Checker::Describe(item),
                   "write {\"item_id\": 0, \"device_id\": 2}");
  }
  HFLOW_RETURN_IF_ERROR(
      c.Keys(item, path, {"item_id", "device_id", "item_type"}, {"ipaddr"}));
  auto dev_it = item.find("device_id");
  if (dev_it == item.end()) {
    return c.Error(
        path, "missing \"device_id\"",
        "every item_list entry names its device, e.g. {\"device_id\": 2}");
  }
  HFLOW_RETURN_IF_ERROR(c.Id(*dev_it, path + ".device_id", &dev->device_id));
  dev->item_id = static_cast<int32_t>(index);
  auto item_it = item.find("item_id");
  if (item_it != item.end()) {
    HFLOW_RETURN_IF_ERROR(c.Id(*item_it, path + ".item_id", &dev->item_id));
  }
  const Json* type = nullptr;
  HFLOW_RETURN_IF_ERROR(
      Member(c, item, path + ".", "item_type", Type::string, &type));
  dev->memory_bytes = defs.single.value_or(kDefaultDeviceMemoryBytes);
  if (type && !defs.by_type.empty()) {
    auto def = defs.by_type.find(type->get<std::string>());
    if (def == defs.by_type.end()) {
      return c.Error(path + ".item_type",
                     "unknown item type \"" + type->get<std::string>() + "\"",
                     "define it in \"item_def\" or remove the field");
    }
    dev->memory_bytes = def->second;
  }
  return Status::OK();
}

Status ParseNode(const Checker& c, const Json& node, const std::string& path,
                 size_t index, const ItemDefs& defs, ClusterNode* out) {
  if (!node.is_object()) {
    return c.Error(
        path, "expected an object, got " + Checker::Describe(node),
        "write {\"node_id\": 0, \"is_local\": true, \"item_list\": [...]}");
  }
  HFLOW_RETURN_IF_ERROR(c.Keys(node, path, {"node_id", "is_local", "item_list"},
                               {"node_type", "ipaddr", "port", "data_panel",
                                "memory", "auth_lib_path", "deploy_res_path"}));
  out->node_id = static_cast<int32_t>(index);
  auto id_it = node.find("node_id");
  if (id_it != node.end()) {
    HFLOW_RETURN_IF_ERROR(c.Id(*id_it, path + ".node_id", &out->node_id));
  }
  const Json *local = nullptr, *items = nullptr;
  HFLOW_RETURN_IF_ERROR(
      Member(c, node, path + ".", "is_local", Type::boolean, &local));
  out->is_local = local && local->get<bool>();
  HFLOW_RETURN_IF_ERROR(
      Member(c, node, path + ".", "item_list", Type::array, &items));
  if (items == nullptr || items->empty()) {
    return c.Error(
        path + ".item_list",
        "empty device list on node " + std::to_string(out->node_id),
        "list the node's devices as [{\"item_id\": 0, \"device_id\": 2}, ...]");
  }
  std::map<int32_t, size_t> seen;       // device id -> first position
  std::map<int32_t, size_t> seen_item;  // item id -> first position
  for (size_t i = 0; i < items->size(); ++i) {
    std::string ipath = path + ".item_list[" + std::to_string(i) + "]";
    DeviceDesc dev;
    HFLOW_RETURN_IF_ERROR(ParseItem(c, (*items)[i], ipath, i, defs, &dev));
    auto [item_it, item_fresh] = seen_item.emplace(dev.item_id, i);
    if (!item_fresh) {
      return c.Error(ipath + ".item_id",
                     "duplicate item id " + std::to_string(dev.item_id) +
                         " on node " + std::to_string(out->node_id) +
                         " (also item_list[" + std::to_string(item_it->second) +
                         "])",
                     "give each item of a node its own item_id (an item "
                     "without one takes its position)");
    }
    auto [it, fresh] = seen.emplace(dev.device_id, i);
    if (!fresh) {
      return c.Error(ipath + ".device_id",
                     "duplicate device id " + std::to_string(dev.device_id) +
                         " on node " + std::to_string(out->node_id) +
                         " (also item_list[" + std::to_string(it->second) +
                         "])",
                     "list each device once per node");
    }
    out->devices.push_back(dev);
  }
  return Status::OK();
}

// Picks the local node: the one marked is_local, or the only node.
Status ResolveLocal(const Checker& c, const std::string& path,
                    std::vector<ClusterNode>* nodes) {
  std::optional<size_t> local;
  for (size_t i = 0; i < nodes->size(); ++i) {
    if (!(*nodes)[i].is_local) continue;
    if (local) {
      return c.Error(
          path + "[" + std::to_string(i) + "].is_local",
          "more than one local node (nodes " +
              std::to_string((*nodes)[*local].node_id) + " and " +
              std::to_string((*nodes)[i].node_id) + ")",
          "mark only the host hflow runs on with \"is_local\": true");
    }
    local = i;
  }
  if (local) return Status::OK();
  if (nodes->size() == 1) {
    (*nodes)[0].is_local = true;
    return Status::OK();
  }
  return c.Error(
      path, "no local node among " + std::to_string(nodes->size()) + " nodes",
      "mark the host hflow runs on with \"is_local\": true");
}

Status ParseGeForm(const Checker& c, const Json& root, ClusterConfig* cfg) {
  HFLOW_RETURN_IF_ERROR(c.Keys(
      root, "", {"cluster", "item_def", "default_device"}, {"node_def"}));
  ItemDefs defs;
  HFLOW_RETURN_IF_ERROR(ParseItemDefs(c, root, &defs));
  const Json* clusters = nullptr;
  HFLOW_RETURN_IF_ERROR(Member(c, root, "", "cluster", Type::array, &clusters));
  if (clusters->size() != 1) {
    return c.Error(
        "cluster",
        "expected exactly one cluster, got " + std::to_string(clusters->size()),
        "hflow runs one cluster; put all hosts in cluster[0].cluster_nodes");
  }
  const Json& cl = (*clusters)[0];
  if (!cl.is_object()) {
    return c.Error("cluster[0]",
                   "expected an object, got " + Checker::Describe(cl),
                   "write {\"cluster_nodes\": [...]}");
  }
  HFLOW_RETURN_IF_ERROR(
      c.Keys(cl, "cluster[0]", {"cluster_nodes"}, {"nodes_topology"}));
  const Json* nodes = nullptr;
  HFLOW_RETURN_IF_ERROR(
      Member(c, cl, "cluster[0].", "cluster_nodes", Type::array, &nodes));
  if (nodes == nullptr || nodes->empty()) {
    return c.Error("cluster[0].cluster_nodes", "no nodes",
                   "describe at least the local host and its devices");
  }
  std::map<int32_t, size_t> seen;  // node id -> first position
  for (size_t i = 0; i < nodes->size(); ++i) {
    std::string path = "cluster[0].cluster_nodes[" + std::to_string(i) + "]";
    ClusterNode node;
    HFLOW_RETURN_IF_ERROR(ParseNode(c, (*nodes)[i], path, i, defs, &node));
    auto [it, fresh] = seen.emplace(node.node_id, i);
    if (!fresh) {
      return c.Error(path + ".node_id",
                     "node id " + std::to_string(node.node_id) + " used twice" +
                         " (also cluster_nodes[" + std::to_string(it->second) +
                         "])",
                     "give each host a distinct node_id");
    }
    cfg->nodes.push_back(std::move(node));
  }
  return ResolveLocal(c, "cluster[0].cluster_nodes", &cfg->nodes);
}

Status ParseCompactForm(const Checker& c, const Json& root,
                        ClusterConfig* cfg) {
  HFLOW_RETURN_IF_ERROR(
      c.Keys(root, "", {"devices", "memory_bytes", "default_device"}));
  const Json* devs = nullptr;
  HFLOW_RETURN_IF_ERROR(Member(c, root, "", "devices", Type::array, &devs));
  if (devs->empty()) {
    return c.Error("devices", "empty device list",
                   "list device ids, e.g. [2, 3, 4, 5]");
  }
  auto mem_it = root.find("memory_bytes");
  const Json* mem = mem_it == root.end() ? nullptr : &*mem_it;
  if (mem && mem->is_array() && mem->size() != devs->size()) {
    return c.Error("memory_bytes",
                   "has " + std::to_string(mem->size()) + " entries for " +
                       std::to_string(devs->size()) + " devices",
                   "give one size per device, or a single size for all");
  }
  uint64_t all_mem = kDefaultDeviceMemoryBytes;
  if (mem && !mem->is_array())
    HFLOW_RETURN_IF_ERROR(c.Memory(*mem, "memory_bytes", &all_mem));
  ClusterNode node;
  node.is_local = true;
  std::map<int32_t, size_t> seen;
  for (size_t i = 0; i < devs->size(); ++i) {
    std::string path = "devices[" + std::to_string(i) + "]";
    DeviceDesc dev;
    dev.item_id = static_cast<int32_t>(i);
    dev.memory_bytes = all_mem;
    HFLOW_RETURN_IF_ERROR(c.Id((*devs)[i], path, &dev.device_id));
    auto [it, fresh] = seen.emplace(dev.device_id, i);
    if (!fresh) {
      return c.Error(path,
                     "duplicate device id " + std::to_string(dev.device_id) +
                         " (also devices[" + std::to_string(it->second) + "])",
                     "list each device once");
    }
    if (mem && mem->is_array()) {
      HFLOW_RETURN_IF_ERROR(c.Memory((*mem)[i],
                                     "memory_bytes[" + std::to_string(i) + "]",
                                     &dev.memory_bytes));
    }
    node.devices.push_back(dev);
  }
  cfg->nodes.push_back(std::move(node));
  return Status::OK();
}

Status ParseDefaultDevice(const Checker& c, const Json& root,
                          ClusterConfig* cfg) {
  auto it = root.find("default_device");
  if (it == root.end() || it->is_null()) return Status::OK();
  int32_t id = 0;
  HFLOW_RETURN_IF_ERROR(c.Id(*it, "default_device", &id));
  if (!cfg->HasLocalDevice(id)) {
    return c.Error("default_device",
                   "device " + std::to_string(id) +
                       " is not a device of the local node (" +
                       JoinIds(cfg->LocalDeviceIds()) + ")",
                   "choose one of the local devices or omit the field");
  }
  cfg->default_device = id;
  return Status::OK();
}

Status ParseJson(const Checker& c, std::string_view text, Json* root) {
  // The message keeps nlohmann's position ("parse error at line L, column
  // C: ..."); the depth bound keeps Describe's dump() off a deep stack.
  std::string what;
  if (!util::ParseJsonBoundedDepth(text, root, &what)) {
    return c.Error("", "malformed JSON: " + what,
                   "fix the JSON syntax at that position");
  }
  return Status::OK();
}

}  // namespace

const ClusterNode& ClusterConfig::LocalNode() const {
  for (const ClusterNode& n : nodes) {
    if (n.is_local) return n;
  }
  // Only a default-constructed config has no local node; it has no devices.
  static const ClusterNode kEmpty;
  return kEmpty;
}

std::vector<int32_t> ClusterConfig::LocalDeviceIds() const {
  std::vector<int32_t> ids;
  for (const DeviceDesc& d : LocalNode().devices) ids.push_back(d.device_id);
  return ids;
}

bool ClusterConfig::HasLocalDevice(int32_t device_id) const {
  for (const DeviceDesc& d : LocalNode().devices) {
    if (d.device_id == device_id) return true;
  }
  return false;
}

std::optional<int32_t> ClusterConfig::ResolvedDefaultDevice() const {
  if (default_device) return default_device;
  if (HasLocalDevice(0)) return 0;
  return std::nullopt;
}

Status ParseClusterConfig(std::string_view json_text, std::string_view source,
                          ClusterConfig* out) {
  Checker c(source);
  Json root;
  HFLOW_RETURN_IF_ERROR(ParseJson(c, json_text, &root));
  if (!root.is_object()) {
    return c.Error("", "expected a JSON object, got " + Checker::Describe(root),
                   "write {\"cluster\": [...]} or {\"devices\": [...]}");
  }
  bool ge = root.contains("cluster"), compact = root.contains("devices");
  if (ge == compact) {
    return c.Error("",
                   ge ? "both \"cluster\" and \"devices\" present"
                      : "neither \"cluster\" nor \"devices\" present",
                   "use GE's {\"cluster\": [...]} form or the compact "
                   "{\"devices\": [...]}");
  }
  ClusterConfig cfg;
  cfg.source = c.source();
  HFLOW_RETURN_IF_ERROR(ge ? ParseGeForm(c, root, &cfg)
                           : ParseCompactForm(c, root, &cfg));
  HFLOW_RETURN_IF_ERROR(ParseDefaultDevice(c, root, &cfg));
  *out = std::move(cfg);
  return Status::OK();
}

Status LoadClusterConfigFile(const std::string& path, ClusterConfig* out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::NotFound("cluster config \"" + path +
                            "\" is a directory; pass the JSON file itself");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::NotFound("cannot open cluster config \"" + path + "\" (" +
                            std::strerror(errno) +
                            "); check the path, or use --devices LIST instead");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return Status::NotFound("cannot read cluster config \"" + path + "\"");
  }
  return ParseClusterConfig(text.str(), path, out);
}

}  // namespace hflow
