// The GE-graph front-end (ge_graph_import.h): reads the container or the
// plain JSON form, orders the ops producers first, and turns each into IR.
//
// Note [GE graph value names]: a Data op's value is named after the op
// (so GE's "input_shape" parser option names it as the user wrote it);
// every other op's output i is "<op>:<i>".
//
// Thread-safety: reentrant.
#include "model/ge_graph_import.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "flow_func/lib/flow_func_internal.h"
#include "model/ge_graph_values.h"
#include "model/ge_ops.h"
#include "model/mapped_file.h"
#include "model/onnx_import.h"
#include "nlohmann/json.hpp"

namespace hflow {
namespace model {
namespace {

using Json = nlohmann::json;

Status ReadWhole(const std::string& path, std::string* bytes) {
  // Sized once: a stringstream would copy the weights at every doubling.
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    return Status::NotFound(path + ": cannot open the GE graph file");
  }
  const std::streamoff size = in.tellg();
  bytes->resize(size > 0 ? static_cast<size_t>(size) : 0);
  in.seekg(0);
  if (size > 0 && !in.read(bytes->data(), size)) {
    return Status::NotFound(path + ": cannot read the GE graph file");
  }
  return Status::OK();
}

uint64_t ReadLe64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

class Importer {
 public:
  Importer(std::string_view bytes, std::shared_ptr<const void> owner,
           const std::string& source)
      : bytes_(bytes), owner_(std::move(owner)), source_(source) {}

  Status Run(ModelIr* ir) {
    ir->source = source_;
    HFLOW_RETURN_IF_ERROR(Split());
    HFLOW_RETURN_IF_ERROR(Header());
    std::vector<const Json*> order;
    HFLOW_RETURN_IF_ERROR(Order(&order));
    HFLOW_RETURN_IF_ERROR(KnownTypes());
    for (const Json* op : order) HFLOW_RETURN_IF_ERROR(Op(*op, ir));
    HFLOW_RETURN_IF_ERROR(Inputs(ir));
    return Outputs(ir);
  }

 private:
  Status Error(const std::string& what) const {
    return Status::InvalidArgument(source_ + ": " + what);
  }

  // The JSON text and where the data section starts.
  Status Split() {
    const size_t magic = std::strlen(kGeGraphMagic);
    if (bytes_.compare(0, magic, kGeGraphMagic) == 0) {
      if (bytes_.size() < magic + 8) return Error("truncated header");
      const uint64_t len = ReadLe64(bytes_.data() + magic);
      if (len > bytes_.size() - magic - 8) {
        return Error("the header says " + std::to_string(len) +
                     " bytes of JSON, the file has " +
                     std::to_string(bytes_.size() - magic - 8));
      }
      json_ = std::string_view(bytes_).substr(magic + 8, len);
      const size_t end = magic + 8 + len;
      data_start_ = (end + kGeGraphAlign - 1) / kGeGraphAlign * kGeGraphAlign;
      return Status::OK();
    }
    const size_t first = bytes_.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || bytes_[first] != '{') {
      return Error(
          "not a GE graph file (it starts with neither HFGRAPH1 nor a JSON "
          "object): write it with ge::Graph::SaveToFile, or as the JSON "
          "form of the format");
    }
    json_ = bytes_;
    data_start_ = bytes_.size();
    return Status::OK();
  }

  Status Header() {
    doc_ = Json::parse(json_.begin(), json_.end(), nullptr, false);
    if (doc_.is_discarded() || !doc_.is_object()) {
      return Error("the graph's JSON does not parse");
    }
    if (doc_.value("format", "") != "hflow-ge-graph") {
      return Error("\"format\" must be \"hflow-ge-graph\"");
    }
    if (!doc_.contains("version") || !doc_["version"].is_number_integer() ||
        doc_["version"].get<int64_t>() != 1) {
      return Error(
          "\"version\" must be 1 (a newer hflow wrote it? rebuild the graph "
          "with this one)");
    }
    if (!doc_.contains("ops") || !doc_["ops"].is_array()) {
      return Error("\"ops\" must be an array of ops");
    }
    for (const Json& op : doc_["ops"]) {
      if (!op.is_object() || !op.contains("name") || !op["name"].is_string() ||
          !op.contains("type") || !op["type"].is_string()) {
        return Error("every op needs a string \"name\" and \"type\"");
      }
      const std::string name = op["name"].get<std::string>();
      if (!ops_.emplace(name, &op).second) {
        return Error("two ops are named '" + name + "'");
      }
    }
    return Status::OK();
  }

  // Producers before consumers (file order among the ready ones).
  Status Order(std::vector<const Json*>* order) {
    std::map<std::string, std::set<std::string>> waits;
    for (const Json& op : doc_["ops"]) {
      const std::string name = op["name"].get<std::string>();
      waits[name];
      if (!op.contains("inputs")) continue;
      if (!op["inputs"].is_array()) {
        return Error("op '" + name + "': \"inputs\" must be an array");
      }
      for (const Json& in : op["inputs"]) {
        if (!in.is_object() || !in.contains("op") || !in["op"].is_string()) {
          return Error("op '" + name +
                       "': each input needs \"index\", \"op\" and \"output\"");
        }
        const std::string src = in["op"].get<std::string>();
        if (ops_.count(src) == 0) {
          return Error("op '" + name + "': its input comes from '" + src +
                       "', which is not an op of the graph");
        }
        waits[name].insert(src);
      }
    }
    std::set<std::string> done;
    while (order->size() < ops_.size()) {
      bool progress = false;
      for (const Json& op : doc_["ops"]) {
        const std::string name = op["name"].get<std::string>();
        if (done.count(name) != 0) continue;
        bool ready = true;
        for (const std::string& w : waits[name]) ready &= done.count(w) != 0;
        if (!ready) continue;
        done.insert(name);
        order->push_back(&op);
        progress = true;
      }
      if (!progress) {
        return Error("the ops form a cycle (a model graph is acyclic)");
      }
    }
    return Status::OK();
  }

  // Every op type hflow does not run, each with its first op, at once (as
  // the ONNX front-end names every unsupported operator).
  Status KnownTypes() const {
    std::map<std::string, std::string> unknown;  // type -> first op
    for (const Json& op : doc_["ops"]) {
      const std::string type = op["type"].get<std::string>();
      if (type == "Data" || type == "Const" ||
          type.rfind(kOnnxOpPrefix, 0) == 0 || IsGeOperator(type)) {
        continue;
      }
      unknown.emplace(type, op["name"].get<std::string>());
    }
    if (unknown.empty()) return Status::OK();
    std::string list;
    for (const auto& [type, op] : unknown) {
      list += (list.empty() ? "" : ", ") + type + " (op '" + op + "')";
    }
    return Status::NotSupported(
        source_ + ": GE operators hflow does not run: " + list +
        "; the user guide's \"Model nodes\" lists the ones it runs");
  }

  static std::vector<std::string> Names(const Json& op, const char* key) {
    std::vector<std::string> out;
    if (op.contains(key) && op[key].is_array()) {
      for (const Json& n : op[key]) {
        out.push_back(n.is_string() ? n.get<std::string>() : "");
      }
    }
    return out;
  }

  std::string ValueOf(const std::string& op, int64_t output) const {
    const Json& src = *ops_.at(op);
    if (src["type"] == "Data") return op;  // Note [GE graph value names]
    return op + ":" + std::to_string(output);
  }

  Status Op(const Json& j, ModelIr* ir) {
    GeOp op;
    op.name = j["name"].get<std::string>();
    op.type = j["type"].get<std::string>();
    op.input_names = Names(j, "input_names");
    const std::vector<std::string> outs = Names(j, "output_names");
    const std::string where = "op '" + op.name + "' (" + op.type + ")";
    if (j.contains("attrs")) {
      if (!j["attrs"].is_object()) {
        return Error(where + ": \"attrs\" must be an object");
      }
      for (const auto& [k, v] : j["attrs"].items()) {
        HFLOW_RETURN_IF_ERROR(
            GeValueReader(bytes_, owner_, data_start_, source_)
                .Attr(v, where + ": attribute '" + k + "'", &op.attrs[k]));
      }
    }
    if (j.contains("inputs")) {
      for (const Json& in : j["inputs"]) {
        const int64_t idx = in.value("index", int64_t{-1});
        const int64_t out = in.value("output", int64_t{0});
        if (idx < 0 || idx > 4096 || out < 0) {
          return Error(where +
                       ": an input needs \"index\" and \"output\" "
                       "(integers >= 0)");
        }
        if (op.inputs.size() <= static_cast<size_t>(idx)) {
          op.inputs.resize(static_cast<size_t>(idx) + 1);
        }
        op.inputs[static_cast<size_t>(idx)] =
            ValueOf(in["op"].get<std::string>(), out);
      }
    }
    if (op.inputs.size() < op.input_names.size()) {
      op.inputs.resize(op.input_names.size());
    }
    for (size_t i = 0; i < std::max<size_t>(outs.size(), 1); ++i) {
      op.outputs.push_back(op.name + ":" + std::to_string(i));
    }
    if (op.type == "Data") return Data(j, op, ir);
    if (op.type == "Const") {
      auto it = op.attrs.find("value");
      if (it == op.attrs.end() || it->second.kind != IrAttr::Kind::kTensor) {
        return Error(where + ": a Const needs a tensor attribute 'value'");
      }
      ir->constants.emplace_back(op.outputs[0], it->second.t);
      return Status::OK();
    }
    if (op.type.rfind(kOnnxOpPrefix, 0) == 0) return Onnx(op, ir);
    return LowerGeOp(op, ir).WithContext(source_ + ": ");
  }

  // The input goes into ir->inputs now (lowerings read the ranks of their
  // inputs there); Inputs puts them in the graph's order at the end.
  Status Data(const Json& j, const GeOp& op, ModelIr* ir) {
    IrValue v;
    v.name = op.name;
    v.has_shape = false;
    for (const char* desc : {"y", "x"}) {
      if (!j.contains("descs") || !j["descs"].contains(desc)) continue;
      const Json& d = j["descs"][desc];
      const auto* info =
          FlowFunc::internal::FindDataTypeByGeName(d.value("dtype", ""));
      if (info == nullptr || ElementSize(info->dtype) == 0) {
        return Error("op '" + op.name + "' (Data): desc '" + desc +
                     "' has no dtype a model runs on");
      }
      v.dtype = info->dtype;
      if (d.contains("dims") && d["dims"].is_array()) {
        v.has_shape = true;
        for (const Json& x : d["dims"]) {
          v.dims.push_back(x.is_number_integer() ? x.get<int64_t>() : -1);
        }
      }
      break;
    }
    auto it = op.attrs.find("index");
    const int64_t index = it == op.attrs.end() ? 0 : it->second.i;
    data_ops_.emplace_back(index, v);
    ir->inputs.push_back(v);
    return Status::OK();
  }

  // An ONNX operator kept as it is: "ai.onnx::<opset>::<Op>".
  Status Onnx(const GeOp& op, ModelIr* ir) const {
    const std::string rest = op.type.substr(std::strlen(kOnnxOpPrefix));
    const size_t sep = rest.find("::");
    IrNode n;
    n.op = sep == std::string::npos ? rest : rest.substr(sep + 2);
    n.name = op.name;
    n.inputs = op.inputs;
    while (!n.inputs.empty() && n.inputs.back().empty()) n.inputs.pop_back();
    n.outputs = op.outputs;
    n.attrs = op.attrs;
    ir->nodes.push_back(std::move(n));
    return Status::OK();
  }

  Status Inputs(ModelIr* ir) {
    ir->inputs.clear();
    std::vector<std::string> listed;
    if (doc_.contains("inputs") && doc_["inputs"].is_array()) {
      listed = Names(doc_, "inputs");
    }
    if (listed.empty()) {
      std::stable_sort(
          data_ops_.begin(), data_ops_.end(),
          [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& d : data_ops_) ir->inputs.push_back(d.second);
      return Status::OK();
    }
    for (const std::string& name : listed) {
      bool found = false;
      for (const auto& d : data_ops_) {
        if (d.second.name != name) continue;
        ir->inputs.push_back(d.second);
        found = true;
      }
      if (!found) {
        return Error("\"inputs\" lists '" + name + "', which is not a Data op");
      }
    }
    return Status::OK();
  }

  Status Outputs(ModelIr* ir) const {
    if (!doc_.contains("outputs") || !doc_["outputs"].is_array() ||
        doc_["outputs"].empty()) {
      return Error("\"outputs\" must list the graph's outputs (SetOutputs)");
    }
    for (const Json& o : doc_["outputs"]) {
      if (!o.is_object() || !o.contains("op") || !o["op"].is_string() ||
          ops_.count(o["op"].get<std::string>()) == 0) {
        return Error(
            "each output needs \"op\" (an op of the graph) and "
            "\"index\"");
      }
      IrValue v;
      v.name = ValueOf(o["op"].get<std::string>(), o.value("index", 0));
      v.has_shape = false;
      ir->outputs.push_back(v);
    }
    return Status::OK();
  }

  const std::string_view bytes_;
  const std::shared_ptr<const void> owner_;  // keeps bytes_ alive
  const std::string source_;
  std::string_view json_;
  size_t data_start_ = 0;  // the data section's offset in bytes_
  Json doc_;
  std::map<std::string, const Json*> ops_;
  std::vector<std::pair<int64_t, IrValue>> data_ops_;  // (index, input)
};

// The file's bytes, which `owner` keeps alive: its tensors view them.
Status ImportGeGraphArray(std::string_view bytes,
                          std::shared_ptr<const void> owner,
                          const std::string& source,
                          const std::map<std::string, std::string>& params,
                          ModelIr* out) {
  for (const auto& [k, v] : params) {
    if (k != "input_shape") {
      return Status::InvalidArgument(
          source + ": load param '" + k +
          "' is not an option of a GE graph (input_shape is)");
    }
  }
  ModelIr ir;
  // A field of the wrong JSON type makes nlohmann throw; a bad file must
  // be an error, never an exception through the library's C entries.
  try {
    HFLOW_RETURN_IF_ERROR(Importer(bytes, std::move(owner), source).Run(&ir));
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(
        source + ": a field has the wrong JSON type (" + e.what() + ")");
  }
  auto it = params.find("input_shape");
  if (it != params.end()) {
    HFLOW_RETURN_IF_ERROR(
        ApplyInputShape(it->second, &ir).WithContext(source + ": "));
  }
  HFLOW_RETURN_IF_ERROR(CheckIr(ir));
  *out = std::move(ir);
  return Status::OK();
}

}  // namespace

Status ImportGeGraphBytes(const std::string& bytes, const std::string& source,
                          const std::map<std::string, std::string>& params,
                          ModelIr* out) {
  // The caller's bytes may not outlive the model: the weights keep a copy.
  auto owned = std::make_shared<const std::string>(bytes);
  return ImportGeGraphArray(*owned, owned, source, params, out);
}

// Mapped, not read, as ONNX files are (Note [Weights from the mapped file]
// in onnx_wire.h): the data section goes from the file to the device in
// one copy.
Status ImportGeGraphFile(const std::string& path,
                         const std::map<std::string, std::string>& params,
                         ModelIr* out) {
  std::shared_ptr<const MappedFile> file;
  HFLOW_RETURN_IF_ERROR(MappedFile::Open(path, &file));
  if (file != nullptr) {
    return ImportGeGraphArray(std::string_view(file->data(), file->size()),
                              file, path, params, out);
  }
  auto bytes = std::make_shared<std::string>();
  HFLOW_RETURN_IF_ERROR(ReadWhole(path, bytes.get()));
  return ImportGeGraphArray(*bytes, bytes, path, params, out);
}

}  // namespace model
}  // namespace hflow
