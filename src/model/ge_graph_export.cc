// ExportGeGraph (ge_graph_import.h): a ModelIr as a GE graph file, each
// IR node an `ai.onnx::17::<Op>` op (the IR's operators are ONNX's at
// opset 17), each input a Data op, each constant a Const op whose bytes
// go to the data section. What the parsers hand to ge::Graph.
//
// Thread-safety: reentrant.
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "flow_func/lib/flow_func_internal.h"
#include "model/ge_graph_import.h"
#include "nlohmann/json.hpp"

namespace hflow {
namespace model {
namespace {

using Json = nlohmann::json;

std::string GeName(DataType t) {
  const auto* info = FlowFunc::internal::FindDataType(t);
  return info == nullptr ? "DT_UNDEFINED" : info->ge_name;
}

class Exporter {
 public:
  Status Run(const ModelIr& ir, const std::string& name, std::string* out) {
    Json doc = {{"format", "hflow-ge-graph"}, {"version", 1}, {"name", name}};
    Json ops = Json::array();
    Json inputs = Json::array();
    int64_t index = 0;
    for (const IrValue& v : ir.inputs) {
      const std::string op = Unique(v.name);
      Json desc = {{"dtype", GeName(v.dtype)}, {"format", "ND"}};
      if (v.has_shape) desc["dims"] = v.dims;
      ops.push_back({{"name", op},
                     {"type", "Data"},
                     {"input_names", {"x"}},
                     {"output_names", {"y"}},
                     {"attrs", {{"index", {{"int", index++}}}}},
                     {"descs", {{"y", desc}}}});
      values_[v.name] = {op, 0};
      inputs.push_back(op);
    }
    for (const auto& [value, t] : ir.constants) {
      const std::string op = Unique(value);
      ops.push_back({{"name", op},
                     {"type", "Const"},
                     {"output_names", {"y"}},
                     {"attrs", {{"value", {{"tensor", Tensor(t)}}}}}});
      values_[value] = {op, 0};
    }
    for (size_t i = 0; i < ir.nodes.size(); ++i) {
      Json op;
      HFLOW_RETURN_IF_ERROR(Node(ir.nodes[i], i, &op));
      ops.push_back(std::move(op));
    }
    Json outputs = Json::array();
    for (const IrValue& v : ir.outputs) {
      auto it = values_.find(v.name);
      if (it == values_.end()) {
        return Status::InvalidArgument(ir.source + ": output '" + v.name +
                                       "' is computed by no node");
      }
      outputs.push_back(
          {{"op", it->second.first}, {"index", it->second.second}});
    }
    doc["inputs"] = inputs;
    doc["outputs"] = outputs;
    doc["ops"] = ops;
    // Node names come from the model file: invalid UTF-8 is replaced.
    Pack(doc.dump(-1, ' ', false, Json::error_handler_t::replace), out);
    return Status::OK();
  }

 private:
  std::string Unique(const std::string& want) {
    std::string name = want.empty() ? "op" : want;
    for (int i = 1; !names_.insert(name).second; ++i) {
      name = (want.empty() ? "op" : want) + "_" + std::to_string(i);
    }
    return name;
  }

  Json Tensor(const IrTensor& t) {
    while (data_.size() % kGeGraphAlign != 0) data_.push_back('\0');
    Json j = {{"dtype", GeName(t.dtype)},
              {"dims", t.dims},
              {"format", "ND"},
              {"offset", data_.size()},
              {"size", t.data().size()}};
    data_ += t.data();
    return j;
  }

  Status Node(const IrNode& n, size_t i, Json* out) {
    const std::string op =
        Unique(n.name.empty() ? "node_" + std::to_string(i) : n.name);
    Json in_names = Json::array();
    Json links = Json::array();
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      in_names.push_back("x" + std::to_string(k));
      if (n.inputs[k].empty()) continue;
      const auto& src = values_.at(n.inputs[k]);  // CheckIr: defined before
      links.push_back(
          {{"index", k}, {"op", src.first}, {"output", src.second}});
    }
    Json out_names = Json::array();
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      out_names.push_back("y" + std::to_string(k));
      if (!n.outputs[k].empty()) values_[n.outputs[k]] = {op, k};
    }
    Json attrs = Json::object();
    for (const auto& [key, a] : n.attrs) {
      using K = IrAttr::Kind;
      // JSON has no inf or NaN (nlohmann would write null).
      bool finite = a.kind != K::kFloat || std::isfinite(a.f);
      for (double f : a.kind == K::kFloats ? a.floats : std::vector<double>()) {
        finite = finite && std::isfinite(f);
      }
      if (!finite) {
        return Status::NotSupported(n.Describe() + ": attribute '" + key +
                                    "' is not finite, which a GE graph file "
                                    "cannot hold");
      }
      switch (a.kind) {
        case K::kInt:
          attrs[key] = {{"int", a.i}};
          break;
        case K::kFloat:
          attrs[key] = {{"float", a.f}};
          break;
        case K::kString:
          attrs[key] = {{"string", a.s}};
          break;
        case K::kInts:
          attrs[key] = {{"ints", a.ints}};
          break;
        case K::kFloats:
          attrs[key] = {{"floats", a.floats}};
          break;
        case K::kTensor:
          attrs[key] = {{"tensor", Tensor(a.t)}};
          break;
        case K::kStrings:
          return Status::NotSupported(
              n.Describe() + ": attribute '" + key +
              "' is a list of strings, which a GE graph cannot hold");
      }
    }
    *out = {{"name", op},
            {"type", std::string(kOnnxOpPrefix) + "17::" + n.op},
            {"input_names", in_names},
            {"output_names", out_names},
            {"inputs", links},
            {"attrs", attrs}};
    return Status::OK();
  }

  void Pack(const std::string& json, std::string* out) const {
    out->assign(kGeGraphMagic);
    uint64_t len = json.size();
    for (int i = 0; i < 8; ++i) {
      out->push_back(static_cast<char>(len & 0xff));
      len >>= 8;
    }
    *out += json;
    while (out->size() % kGeGraphAlign != 0) out->push_back('\0');
    *out += data_;
  }

  std::set<std::string> names_;
  std::map<std::string, std::pair<std::string, size_t>> values_;
  std::string data_;
};

}  // namespace

Status ExportGeGraph(const ModelIr& ir, const std::string& name,
                     std::string* bytes) {
  return Exporter().Run(ir, name, bytes);
}

}  // namespace model
}  // namespace hflow
