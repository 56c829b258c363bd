// Cluster config parsing: GE's numa_config subset and the compact
// {"devices": [...]} form (device lists and memory sizes are parsed in
// cluster_lists.cc).
// Fields are read with util::JsonFields, so every rejection is
// kInvalidArgument "<source>: <json path>: <problem>; <hint>" and unknown
// keys are rejected at every object read here (util/json_fields.h);
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
#include "util/json_fields.h"

namespace hflow {
namespace {

using Json = nlohmann::json;

using util::DescribeJson;
using util::JsonFields;

// ParseMemorySize at `path` (its message already says what to write).
Status SizeOf(const JsonFields& f, const std::string& path,
              const std::string& text, uint64_t* bytes) {
  Status s = ParseMemorySize(text, bytes);
  return s.ok() ? s : f.Error(path, s.message(), "");
}

// A non-negative int32 id (device, node or item id). Its own wording, not
// JsonFields::Int's range: "negative id -2; ids start at 0" says more.
Status Id(const JsonFields& f, const Json& v, const std::string& path,
          int32_t* out) {
  if (!v.is_number_integer()) {
    return f.Error(path,
                   "must be a non-negative integer, got " + DescribeJson(v),
                   "write a number such as 2");
  }
  if (v.is_number_unsigned() ? v.get<uint64_t>() > INT32_MAX
                             : v.get<int64_t>() > INT32_MAX) {
    return f.Error(path, "id " + v.dump() + " is too large",
                   "ids must fit in 32 bits");
  }
  if (!v.is_number_unsigned() && v.get<int64_t>() < 0) {
    return f.Error(path, "negative id " + v.dump(), "ids start at 0");
  }
  *out = static_cast<int32_t>(v.get<int64_t>());
  return Status::OK();
}

// A memory size: a positive integer of bytes or a string such as "32GB"
// (hflow's memory_bytes). Zero is refused because a device without memory
// can run nothing, and it is almost always a missing unit or a typo.
Status Memory(const JsonFields& f, const Json& v, const std::string& path,
              uint64_t* out) {
  const char* kForm = "write bytes (17179869184) or a size such as \"32GB\"";
  uint64_t bytes = 0;
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    return f.Error(path, "negative memory size " + v.dump(), kForm);
  }
  if (v.is_string() && v.get<std::string>().find('[') != std::string::npos) {
    return f.Error(
        path, "GE's item_def form " + v.dump() + " is not a size here", kForm);
  }
  if (v.is_number_unsigned()) {
    bytes = v.get<uint64_t>();
  } else if (v.is_string()) {
    HFLOW_RETURN_IF_ERROR(SizeOf(f, path, v.get<std::string>(), &bytes));
  } else {
    return f.Error(path, "must be a memory size, got " + DescribeJson(v),
                   kForm);
  }
  if (bytes == 0) {
    return f.Error(path, "memory size is zero",
                   "give each device some memory, e.g. \"16GB\"");
  }
  *out = bytes;
  return Status::OK();
}

// GE's item_def memory: a string "[<kind>:<size>]" such as "[DDR:32GB]"
// (GE reads it as a string; a bare "32GB" is not GE's form and GE would
// not read it, so it is refused rather than guessed at).
Status GeMemory(const JsonFields& f, const Json& v, const std::string& path,
                uint64_t* out) {
  const char* kForm = "write GE's form \"[DDR:<size>]\", e.g. \"[DDR:32GB]\"";
  if (!v.is_string()) {
    return f.Error(path, "must be a string, got " + DescribeJson(v), kForm);
  }
  const std::string text = v.get<std::string>();
  if (text.size() < 2 || text.front() != '[' || text.back() != ']' ||
      text.find(':') == std::string::npos) {
    return f.Error(path, "memory " + v.dump() + " is not in GE's form", kForm);
  }
  uint64_t bytes = 0;
  HFLOW_RETURN_IF_ERROR(SizeOf(f, path, text, &bytes));
  if (bytes == 0) {
    return f.Error(path, "memory size is zero",
                   "give each device some memory, e.g. \"[DDR:16GB]\"");
  }
  *out = bytes;
  return Status::OK();
}

struct ItemDefs {
  std::map<std::string, uint64_t> by_type;
  std::optional<uint64_t> single;
};

// Memory per item type from "item_def". `single` is set when exactly one
// definition exists: it then applies to items that do not name a type.
Status ParseItemDefs(const JsonFields& f, const Json& root, ItemDefs* out) {
  const Json* defs = nullptr;
  HFLOW_RETURN_IF_ERROR(f.OptArray(root, "", "item_def", &defs));
  if (defs == nullptr) return Status::OK();
  for (size_t i = 0; i < defs->size(); ++i) {
    const Json& d = (*defs)[i];
    std::string path = "item_def[" + std::to_string(i) + "]";
    if (!d.is_object()) {
      return f.Error(path, "must be an object, got " + DescribeJson(d),
                     "write {\"item_type\": ..., \"memory\": \"[DDR:32GB]\"}");
    }
    HFLOW_RETURN_IF_ERROR(f.Keys(d, path, {"item_type", "memory"},
                                 {"aic_type", "resource_type"}));
    std::string type;
    HFLOW_RETURN_IF_ERROR(f.OptString(d, path, "item_type", &type));
    const Json* mem = JsonFields::Find(d, "memory");
    uint64_t bytes = kDefaultDeviceMemoryBytes;
    if (mem) HFLOW_RETURN_IF_ERROR(GeMemory(f, *mem, path + ".memory", &bytes));
    if (defs->size() == 1) out->single = bytes;
    if (!type.empty() && !out->by_type.emplace(type, bytes).second) {
      return f.Error(path + ".item_type",
                     "item type \"" + type + "\" defined twice",
                     "define each item type once");
    }
  }
  return Status::OK();
}

Status ParseItem(const JsonFields& f, const Json& item, const std::string& path,
                 size_t index, const ItemDefs& defs, DeviceDesc* dev) {
  if (!item.is_object()) {
    return f.Error(path, "must be an object, got " + DescribeJson(item),
                   "write {\"item_id\": 0, \"device_id\": 2}");
  }
  HFLOW_RETURN_IF_ERROR(
      f.Keys(item, path, {"item_id", "device_id", "item_type"}, {"ipaddr"}));
  auto dev_it = item.find("device_id");
  if (dev_it == item.end()) {
    return f.Error(
        path, "missing \"device_id\"",
        "every item_list entry names its device, e.g. {\"device_id\": 2}");
  }
  HFLOW_RETURN_IF_ERROR(Id(f, *dev_it, path + ".device_id", &dev->device_id));
  dev->item_id = static_cast<int32_t>(index);
  auto item_it = item.find("item_id");
  if (item_it != item.end()) {
    HFLOW_RETURN_IF_ERROR(Id(f, *item_it, path + ".item_id", &dev->item_id));
  }
  std::string type;
  HFLOW_RETURN_IF_ERROR(f.OptString(item, path, "item_type", &type));
  dev->memory_bytes = defs.single.value_or(kDefaultDeviceMemoryBytes);
  if (!type.empty() && !defs.by_type.empty()) {
    auto def = defs.by_type.find(type);
    if (def == defs.by_type.end()) {
      return f.Error(path + ".item_type", "unknown item type \"" + type + "\"",
                     "define it in \"item_def\" or remove the field");
    }
    dev->memory_bytes = def->second;
  }
  return Status::OK();
}

Status ParseNode(const JsonFields& f, const Json& node, const std::string& path,
                 size_t index, const ItemDefs& defs, ClusterNode* out) {
  if (!node.is_object()) {
    return f.Error(
        path, "must be an object, got " + DescribeJson(node),
        "write {\"node_id\": 0, \"is_local\": true, \"item_list\": [...]}");
  }
  HFLOW_RETURN_IF_ERROR(
      f.Keys(node, path, {"node_id", "is_local", "item_list", "ipaddr", "port"},
             {"node_type", "data_panel", "memory", "auth_lib_path",
              "deploy_res_path"}));
  out->node_id = static_cast<int32_t>(index);
  auto id_it = node.find("node_id");
  if (id_it != node.end()) {
    HFLOW_RETURN_IF_ERROR(Id(f, *id_it, path + ".node_id", &out->node_id));
  }
  const Json* items = nullptr;
  out->is_local = false;
  HFLOW_RETURN_IF_ERROR(f.OptBool(node, path, "is_local", &out->is_local));
  HFLOW_RETURN_IF_ERROR(f.OptString(node, path, "ipaddr", &out->ipaddr));
  int64_t port = 0;
  HFLOW_RETURN_IF_ERROR(f.OptInt(node, path, "port", 1, &port, 65535));
  out->port = static_cast<int32_t>(port);
  HFLOW_RETURN_IF_ERROR(f.OptArray(node, path, "item_list", &items));
  if (items == nullptr || items->empty()) {
    return f.Error(
        path + ".item_list",
        "empty device list on node " + std::to_string(out->node_id),
        "list the node's devices as [{\"item_id\": 0, \"device_id\": 2}, ...]");
  }
  std::map<int32_t, size_t> seen;       // device id -> first position
  std::map<int32_t, size_t> seen_item;  // item id -> first position
  for (size_t i = 0; i < items->size(); ++i) {
    std::string ipath = path + ".item_list[" + std::to_string(i) + "]";
    DeviceDesc dev;
    HFLOW_RETURN_IF_ERROR(ParseItem(f, (*items)[i], ipath, i, defs, &dev));
    auto [item_it, item_fresh] = seen_item.emplace(dev.item_id, i);
    if (!item_fresh) {
      return f.Error(ipath + ".item_id",
                     "duplicate item id " + std::to_string(dev.item_id) +
                         " on node " + std::to_string(out->node_id) +
                         " (also item_list[" + std::to_string(item_it->second) +
                         "])",
                     "give each item of a node its own item_id (an item "
                     "without one takes its position)");
    }
    auto [it, fresh] = seen.emplace(dev.device_id, i);
    if (!fresh) {
      return f.Error(ipath + ".device_id",
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
Status ResolveLocal(const JsonFields& f, const std::string& path,
                    std::vector<ClusterNode>* nodes) {
  std::optional<size_t> local;
  for (size_t i = 0; i < nodes->size(); ++i) {
    if (!(*nodes)[i].is_local) continue;
    if (local) {
      return f.Error(
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
  return f.Error(
      path, "no local node among " + std::to_string(nodes->size()) + " nodes",
      "mark the host hflow runs on with \"is_local\": true");
}

Status ParseGeForm(const JsonFields& f, const Json& root, ClusterConfig* cfg) {
  HFLOW_RETURN_IF_ERROR(f.Keys(
      root, "",
      {"cluster", "item_def", "default_device", "backend", "credentials"},
      {"node_def"}));
  ItemDefs defs;
  HFLOW_RETURN_IF_ERROR(ParseItemDefs(f, root, &defs));
  const Json* clusters = nullptr;
  HFLOW_RETURN_IF_ERROR(f.OptArray(root, "", "cluster", &clusters));
  if (clusters->size() != 1) {
    return f.Error(
        "cluster",
        "expected exactly one cluster, got " + std::to_string(clusters->size()),
        "hflow runs one cluster; put all hosts in cluster[0].cluster_nodes");
  }
  const Json& cl = (*clusters)[0];
  if (!cl.is_object()) {
    return f.Error("cluster[0]", "must be an object, got " + DescribeJson(cl),
                   "write {\"cluster_nodes\": [...]}");
  }
  HFLOW_RETURN_IF_ERROR(
      f.Keys(cl, "cluster[0]", {"cluster_nodes"}, {"nodes_topology"}));
  const Json* nodes = nullptr;
  HFLOW_RETURN_IF_ERROR(f.OptArray(cl, "cluster[0]", "cluster_nodes", &nodes));
  if (nodes == nullptr || nodes->empty()) {
    return f.Error("cluster[0].cluster_nodes", "no nodes",
                   "describe at least the local host and its devices");
  }
  std::map<int32_t, size_t> seen;  // node id -> first position
  for (size_t i = 0; i < nodes->size(); ++i) {
    std::string path = "cluster[0].cluster_nodes[" + std::to_string(i) + "]";
    ClusterNode node;
    HFLOW_RETURN_IF_ERROR(ParseNode(f, (*nodes)[i], path, i, defs, &node));
    auto [it, fresh] = seen.emplace(node.node_id, i);
    if (!fresh) {
      return f.Error(path + ".node_id",
                     "node id " + std::to_string(node.node_id) + " used twice" +
                         " (also cluster_nodes[" + std::to_string(it->second) +
                         "])",
                     "give each host a distinct node_id");
    }
    for (size_t j = 0; j < cfg->nodes.size(); ++j) {
      const ClusterNode& o = cfg->nodes[j];
      if (node.port != 0 && o.port == node.port && o.ipaddr == node.ipaddr) {
        return f.Error(path + ".port",
                       "node " + std::to_string(node.node_id) +
                           " has the address of node " +
                           std::to_string(o.node_id) + " (" + node.ipaddr +
                           ":" + std::to_string(node.port) + ")",
                       "give each host's hflowd its own ipaddr and port");
      }
    }
    cfg->nodes.push_back(std::move(node));
  }
  return ResolveLocal(f, "cluster[0].cluster_nodes", &cfg->nodes);
}

Status ParseCompactForm(const JsonFields& f, const Json& root,
                        ClusterConfig* cfg) {
  HFLOW_RETURN_IF_ERROR(f.Keys(
      root, "",
      {"devices", "memory_bytes", "default_device", "backend", "credentials"}));
  const Json* devs = nullptr;
  HFLOW_RETURN_IF_ERROR(f.OptArray(root, "", "devices", &devs));
  if (devs->empty()) {
    return f.Error("devices", "empty device list",
                   "list device ids, e.g. [2, 3, 4, 5]");
  }
  auto mem_it = root.find("memory_bytes");
  const Json* mem = mem_it == root.end() ? nullptr : &*mem_it;
  if (mem && mem->is_array() && mem->size() != devs->size()) {
    return f.Error("memory_bytes",
                   "has " + std::to_string(mem->size()) + " entries for " +
                       std::to_string(devs->size()) + " devices",
                   "give one size per device, or a single size for all");
  }
  uint64_t all_mem = kDefaultDeviceMemoryBytes;
  if (mem && !mem->is_array())
    HFLOW_RETURN_IF_ERROR(Memory(f, *mem, "memory_bytes", &all_mem));
  ClusterNode node;
  node.is_local = true;
  std::map<int32_t, size_t> seen;
  for (size_t i = 0; i < devs->size(); ++i) {
    std::string path = "devices[" + std::to_string(i) + "]";
    DeviceDesc dev;
    dev.item_id = static_cast<int32_t>(i);
    dev.memory_bytes = all_mem;
    HFLOW_RETURN_IF_ERROR(Id(f, (*devs)[i], path, &dev.device_id));
    auto [it, fresh] = seen.emplace(dev.device_id, i);
    if (!fresh) {
      return f.Error(path,
                     "duplicate device id " + std::to_string(dev.device_id) +
                         " (also devices[" + std::to_string(it->second) + "])",
                     "list each device once");
    }
    if (mem && mem->is_array()) {
      HFLOW_RETURN_IF_ERROR(Memory(f, (*mem)[i],
                                   "memory_bytes[" + std::to_string(i) + "]",
                                   &dev.memory_bytes));
    }
    node.devices.push_back(dev);
  }
  cfg->nodes.push_back(std::move(node));
  return Status::OK();
}

// hflow's field in either form: which device runtime the devices are.
Status ParseBackend(const JsonFields& f, const Json& root, ClusterConfig* cfg) {
  auto it = root.find("backend");
  if (it == root.end() || it->is_null()) return Status::OK();
  std::string backend;
  HFLOW_RETURN_IF_ERROR(f.OptString(root, "", "backend", &backend));
  if (backend != "sim" && backend != "cuda") {
    return f.Error("backend", "unknown backend \"" + backend + "\"",
                   "use \"sim\" (simulated devices) or \"cuda\" (NVIDIA "
                   "GPUs)");
  }
  cfg->backend = backend;
  return Status::OK();
}

// hflow's field in either form: the files of a multi-host cluster's
// credentials, relative paths taken from the cluster file's folder.
Status ParseCredentials(const JsonFields& f, const Json& root,
                        std::string_view source, ClusterConfig* cfg) {
  const Json* c = nullptr;
  HFLOW_RETURN_IF_ERROR(f.OptObject(
      root, "", "credentials", &c,
      "write {\"token_file\": \"token\"} and/or TLS files (\"tls_ca\", "
      "\"tls_cert\", \"tls_key\")"));
  if (c == nullptr) return Status::OK();
  HFLOW_RETURN_IF_ERROR(f.Keys(
      *c, "credentials", {"token_file", "tls_ca", "tls_cert", "tls_key"}));
  ClusterCredentials& out = cfg->credentials;
  const std::filesystem::path dir =
      std::filesystem::path(std::string(source)).parent_path();
  struct Field {
    const char* key;
    std::string* value;
  } fields[] = {{"token_file", &out.token_file},
                {"tls_ca", &out.tls_ca},
                {"tls_cert", &out.tls_cert},
                {"tls_key", &out.tls_key}};
  for (const Field& fl : fields) {
    HFLOW_RETURN_IF_ERROR(f.OptString(*c, "credentials", fl.key, fl.value));
    if (!fl.value->empty() && std::filesystem::path(*fl.value).is_relative()) {
      *fl.value = (dir / *fl.value).string();
    }
  }
  return Status::OK();
}

Status ParseDefaultDevice(const JsonFields& f, const Json& root,
                          ClusterConfig* cfg) {
  auto it = root.find("default_device");
  if (it == root.end() || it->is_null()) return Status::OK();
  int32_t id = 0;
  HFLOW_RETURN_IF_ERROR(Id(f, *it, "default_device", &id));
  if (!cfg->HasLocalDevice(id)) {
    return f.Error("default_device",
                   "device " + std::to_string(id) +
                       " is not a device of the local node (" +
                       FormatDeviceList(cfg->LocalDeviceIds()) + ")",
                   "choose one of the local devices or omit the field");
  }
  cfg->default_device = id;
  return Status::OK();
}

}  // namespace

Status ParseClusterConfig(std::string_view json_text, std::string_view source,
                          ClusterConfig* out) {
  JsonFields f(source, "<cluster config>");
  Json root;
  HFLOW_RETURN_IF_ERROR(f.Parse(json_text, &root));
  HFLOW_RETURN_IF_ERROR(
      f.Object(root, util::kDocumentPath,
               "write {\"cluster\": [...]} or {\"devices\": [...]}"));
  bool ge = root.contains("cluster"), compact = root.contains("devices");
  if (ge == compact) {
    return f.Error(util::kDocumentPath,
                   ge ? "both \"cluster\" and \"devices\" present"
                      : "neither \"cluster\" nor \"devices\" present",
                   "use GE's {\"cluster\": [...]} form or the compact "
                   "{\"devices\": [...]}");
  }
  ClusterConfig cfg;
  cfg.source = f.source();
  HFLOW_RETURN_IF_ERROR(ge ? ParseGeForm(f, root, &cfg)
                           : ParseCompactForm(f, root, &cfg));
  HFLOW_RETURN_IF_ERROR(ParseDefaultDevice(f, root, &cfg));
  HFLOW_RETURN_IF_ERROR(ParseBackend(f, root, &cfg));
  HFLOW_RETURN_IF_ERROR(ParseCredentials(f, root, source, &cfg));
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
