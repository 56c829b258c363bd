// A ge::Graph as a GE graph file and back (graph_internal.h GraphToBytes /
// GraphFromBytes; the format: docs/formats.md "GE graph file"). The file
// keeps the graph as built: every op with its type, registered names,
// links, attributes (tensors' bytes in the aligned data section) and descs;
// the model library reads the same file to run it. Part of libgraph.so
// (old string ABI).
//
// Thread-safety: reads a finished graph / builds a new one; reentrant.
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <variant>

#include "ge_api/graph/graph_internal.h"

namespace ge {
namespace {

using Json = nlohmann::json;
constexpr char kMagic[] = "HFGRAPH1";
constexpr size_t kAlign = 64;

// GE's DT_* names of the numeric types (and DT_STRING).
const std::pair<DataType, const char*> kDtypes[] = {
    {DT_FLOAT, "DT_FLOAT"},   {DT_FLOAT16, "DT_FLOAT16"},
    {DT_INT8, "DT_INT8"},     {DT_INT32, "DT_INT32"},
    {DT_UINT8, "DT_UINT8"},   {DT_INT16, "DT_INT16"},
    {DT_UINT16, "DT_UINT16"}, {DT_UINT32, "DT_UINT32"},
    {DT_INT64, "DT_INT64"},   {DT_UINT64, "DT_UINT64"},
    {DT_DOUBLE, "DT_DOUBLE"}, {DT_BOOL, "DT_BOOL"},
    {DT_STRING, "DT_STRING"}, {DT_BF16, "DT_BF16"}};

const std::pair<Format, const char*> kFormats[] = {{FORMAT_NCHW, "NCHW"},
                                                   {FORMAT_NHWC, "NHWC"},
                                                   {FORMAT_ND, "ND"},
                                                   {FORMAT_HWCN, "HWCN"},
                                                   {FORMAT_CHWN, "CHWN"}};

const char* FormatName(Format f) {
  for (const auto& e : kFormats) {
    if (e.first == f) return e.second;
  }
  return "ND";
}
Format FormatOf(const std::string& name) {
  for (const auto& e : kFormats) {
    if (name == e.second) return e.first;
  }
  return FORMAT_ND;
}

class Writer {
 public:
  bool Run(const GraphImpl& g, std::string* bytes, std::string* error) {
    Json ops = Json::array();
    std::vector<const OperatorImpl*> order;
    if (!Order(g, &order, error)) return false;
    for (const OperatorImpl* op : order) {
      Json j;
      if (!Op(*op, &j, error)) return false;
      ops.push_back(std::move(j));
    }
    Json inputs = Json::array();
    for (const Operator& in : g.inputs) {
      const auto& impl = OperatorAccess::Impl(in);
      if (impl) inputs.push_back(impl->name);
    }
    Json outputs = Json::array();
    for (const auto& o : g.outputs) {
      const auto& impl = OperatorAccess::Impl(o.first);
      if (!impl) continue;
      std::vector<size_t> idx = o.second;
      if (idx.empty()) {
        for (size_t i = 0; i < std::max<size_t>(impl->output_names.size(), 1);
             ++i) {
          idx.push_back(i);
        }
      }
      for (size_t i : idx)
        outputs.push_back({{"op", impl->name}, {"index", i}});
    }
    if (outputs.empty()) {
      *error = "the graph has no outputs; call SetOutputs";
      return false;
    }
    Json doc = {
        {"format", "hflow-ge-graph"}, {"version", 1},       {"name", g.name},
        {"inputs", inputs},           {"outputs", outputs}, {"ops", ops}};
    // Names are the user's bytes: invalid UTF-8 is replaced, not thrown.
    const std::string json =
        doc.dump(-1, ' ', false, Json::error_handler_t::replace);
    bytes->assign(kMagic);
    uint64_t len = json.size();
    for (int i = 0; i < 8; ++i, len >>= 8) {
      bytes->push_back(static_cast<char>(len & 0xff));
    }
    *bytes += json;
    while (bytes->size() % kAlign != 0) bytes->push_back('\0');
    *bytes += data_;
    return true;
  }

 private:
  // Producers before consumers, from the graph's inputs, outputs, targets
  // and added ops; false with *error on a cycle (a model graph is acyclic;
  // a SetInput mistake can make one).
  static bool Order(const GraphImpl& g, std::vector<const OperatorImpl*>* order,
                    std::string* error) {
    std::set<const OperatorImpl*> seen, open;
    std::vector<Operator> roots = g.inputs;
    for (const auto& o : g.outputs) roots.push_back(o.first);
    roots.insert(roots.end(), g.targets.begin(), g.targets.end());
    roots.insert(roots.end(), g.ops.begin(), g.ops.end());
    // Iterative post-order: an op is emitted once its producers are; `open`
    // holds the ops whose producers are being visited (the DFS path).
    for (const Operator& root : roots) {
      std::vector<std::pair<const OperatorImpl*, bool>> stack;
      stack.push_back({OperatorAccess::Impl(root).get(), false});
      while (!stack.empty()) {
        auto [op, expanded] = stack.back();
        stack.pop_back();
        if (op == nullptr) continue;
        if (expanded) {
          open.erase(op);
          seen.insert(op);
          order->push_back(op);
          continue;
        }
        if (seen.count(op) != 0) continue;
        if (open.count(op) != 0) {
          *error = "op '" + op->name +
                   "' is its own producer through its inputs: a model graph "
                   "has no cycle";
          return false;
        }
        open.insert(op);
        stack.push_back({op, true});
        for (const auto& in : op->inputs) {
          if (in.second.src) stack.push_back({in.second.src.get(), false});
        }
      }
    }
    return true;
  }

  Json TensorJson(const Tensor& t) {
    const TensorDesc d = t.GetTensorDesc();
    while (data_.size() % kAlign != 0) data_.push_back('\0');
    Json j = {{"dtype", DataTypeGeName(d.GetDataType())},
              {"dims", d.GetShape().GetDims()},
              {"format", FormatName(d.GetFormat())},
              {"offset", data_.size()},
              {"size", t.GetSize()}};
    if (t.GetData() != nullptr) {
      data_.append(reinterpret_cast<const char*>(t.GetData()), t.GetSize());
    }
    return j;
  }

  Json AttrJson(const OpAttr& a) {
    if (const auto* v = std::get_if<int64_t>(&a)) return {{"int", *v}};
    if (const auto* v = std::get_if<float>(&a)) return {{"float", *v}};
    if (const auto* v = std::get_if<bool>(&a)) return {{"bool", *v}};
    if (const auto* v = std::get_if<std::string>(&a)) return {{"string", *v}};
    if (const auto* v = std::get_if<std::vector<int64_t>>(&a)) {
      return {{"ints", *v}};
    }
    if (const auto* v = std::get_if<std::vector<float>>(&a)) {
      return {{"floats", *v}};
    }
    if (const auto* v = std::get_if<Tensor>(&a)) {
      return {{"tensor", TensorJson(*v)}};
    }
    return {{"dtype", DataTypeGeName(std::get<DataType>(a))}};
  }

  bool Op(const OperatorImpl& op, Json* out, std::string* error) {
    if (!op.error.empty()) {
      *error = "op '" + op.name + "': " + op.error;
      return false;
    }
    Json links = Json::array();
    for (const auto& in : op.inputs) {
      if (!in.second.src) continue;
      links.push_back({{"index", in.first},
                       {"op", in.second.src->name},
                       {"output", in.second.src_index}});
    }
    Json attrs = Json::object();
    for (const auto& a : op.attrs) {
      // JSON has no inf or NaN (nlohmann would write null).
      bool finite = true;
      if (const auto* f = std::get_if<float>(&a.second)) {
        finite = std::isfinite(*f);
      } else if (const auto* v = std::get_if<std::vector<float>>(&a.second)) {
        for (float x : *v) finite = finite && std::isfinite(x);
      }
      if (!finite) {
        *error = "op '" + op.name + "': attribute '" + a.first +
                 "' is not finite, which a GE graph file cannot hold";
        return false;
      }
      attrs[a.first] = AttrJson(a.second);
    }
    Json descs = Json::object();
    for (const auto& d : op.descs) {
      // Keys are "in:<name>" / "out:<name>" (operator.cc).
      const std::string name = d.first.substr(d.first.find(':') + 1);
      descs[name] = {{"dtype", DataTypeGeName(d.second.GetDataType())},
                     {"dims", d.second.GetShape().GetDims()},
                     {"format", FormatName(d.second.GetFormat())}};
    }
    *out = {{"name", op.name},
            {"type", op.type},
            {"input_names", op.input_names},
            {"output_names", op.output_names},
            {"inputs", links},
            {"attrs", attrs}};
    if (!descs.empty()) (*out)["descs"] = descs;
    return true;
  }

  std::string data_;
};

uint64_t Le64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

class Reader {
 public:
  Reader(const std::string& bytes, std::string* error)
      : bytes_(bytes), error_(error) {}

  bool Run(GraphImpl* g) {
    if (!Split()) return false;
    Json doc = Json::parse(json_, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() ||
        doc.value("format", "") != "hflow-ge-graph") {
      return Fail("not a GE graph file of hflow's (format \"hflow-ge-graph\")");
    }
    if (doc.value("version", 0) != 1) {
      return Fail("version " + doc["version"].dump() + " is not 1");
    }
    g->name = doc.value("name", "");
    if (!doc.contains("ops") || !doc["ops"].is_array()) {
      return Fail("\"ops\" must be an array");
    }
    for (const Json& j : doc["ops"]) {
      if (!NewOp(j)) return false;
    }
    for (const Json& j : doc["ops"]) {
      if (!Links(j)) return false;
    }
    for (const Json& name : doc.value("inputs", Json::array())) {
      auto it = ops_.find(name.is_string() ? name.get<std::string>() : "");
      if (it == ops_.end())
        return Fail("\"inputs\" names no op: " + name.dump());
      g->inputs.push_back(OperatorAccess::Wrap(it->second));
    }
    for (const Json& o : doc.value("outputs", Json::array())) {
      auto it = ops_.find(o.value("op", ""));
      if (it == ops_.end()) return Fail("\"outputs\" names no op: " + o.dump());
      g->outputs.push_back(
          {OperatorAccess::Wrap(it->second), {o.value("index", size_t{0})}});
    }
    for (const auto& op : order_) g->ops.push_back(OperatorAccess::Wrap(op));
    return true;
  }

 private:
  bool Fail(const std::string& what) {
    *error_ = what;
    return false;
  }

  bool Split() {
    const size_t magic = std::strlen(kMagic);
    if (bytes_.compare(0, magic, kMagic) != 0) {
      json_ = bytes_;
      data_ = bytes_.size();
      return true;
    }
    if (bytes_.size() < magic + 8) return Fail("truncated header");
    const uint64_t len = Le64(bytes_.data() + magic);
    if (len > bytes_.size() - magic - 8) return Fail("truncated JSON header");
    json_ = bytes_.substr(magic + 8, len);
    data_ = (magic + 8 + len + kAlign - 1) / kAlign * kAlign;
    return true;
  }

  bool TensorOf(const Json& t, const std::string& where, Tensor* out) {
    TensorDesc desc(Shape(t.value("dims", std::vector<int64_t>())),
                    FormatOf(t.value("format", "ND")),
                    DataTypeOf(t.value("dtype", "")));
    if (t.contains("values")) {
      return Fail(where +
                  ": inline \"values\" are for the model library; "
                  "save the graph with SaveToFile to load it here");
    }
    const uint64_t off = t.value("offset", uint64_t{0});
    const uint64_t len = t.value("size", uint64_t{0});
    if (data_ > bytes_.size() || off > bytes_.size() - data_ ||
        len > bytes_.size() - data_ - off) {
      return Fail(where + ": bytes past the end of the file (truncated?)");
    }
    *out = Tensor(desc,
                  reinterpret_cast<const uint8_t*>(bytes_.data()) + data_ + off,
                  len);
    return true;
  }

  bool AttrOf(const Json& a, const std::string& where, OpAttr* out) {
    if (!a.is_object() || a.size() != 1) return Fail(where + ": bad attribute");
    const std::string k = a.begin().key();
    const Json& v = a.begin().value();
    if (k == "int") {
      *out = v.get<int64_t>();
    } else if (k == "float") {
      *out = v.get<float>();
    } else if (k == "bool") {
      *out = v.get<bool>();
    } else if (k == "string") {
      *out = v.get<std::string>();
    } else if (k == "ints") {
      *out = v.get<std::vector<int64_t>>();
    } else if (k == "floats") {
      *out = v.get<std::vector<float>>();
    } else if (k == "dtype") {
      *out = DataTypeOf(v.get<std::string>());
    } else if (k == "tensor") {
      Tensor t;
      if (!TensorOf(v, where, &t)) return false;
      *out = t;
    } else {
      return Fail(where + ": '" + k + "' is not an attribute kind");
    }
    return true;
  }

  bool NewOp(const Json& j) {
    auto op = std::make_shared<OperatorImpl>();
    op->name = j.value("name", "");
    op->type = j.value("type", "");
    const std::string where = "op '" + op->name + "'";
    op->input_names = j.value("input_names", std::vector<std::string>());
    op->output_names = j.value("output_names", std::vector<std::string>());
    const Json attrs = j.value("attrs", Json::object());
    const Json descs = j.value("descs", Json::object());
    for (const auto& a : attrs.items()) {
      if (!AttrOf(a.value(), where + ": attribute '" + a.key() + "'",
                  &op->attrs[a.key()])) {
        return false;
      }
    }
    for (const auto& d : descs.items()) {
      TensorDesc desc(Shape(d.value().value("dims", std::vector<int64_t>())),
                      FormatOf(d.value().value("format", "ND")),
                      DataTypeOf(d.value().value("dtype", "")));
      if (op->InputIndex(d.key()) >= 0) op->descs["in:" + d.key()] = desc;
      if (op->OutputIndex(d.key()) >= 0) op->descs["out:" + d.key()] = desc;
    }
    if (op->name.empty() || !ops_.emplace(op->name, op).second) {
      return Fail(where + ": empty or repeated op name");
    }
    order_.push_back(op);
    return true;
  }

  bool Links(const Json& j) {
    const auto& op = ops_.at(j.value("name", ""));
    for (const Json& in : j.value("inputs", Json::array())) {
      auto src = ops_.find(in.value("op", ""));
      if (src == ops_.end()) {
        return Fail("op '" + op->name + "': input from an unknown op " +
                    in.dump());
      }
      op->inputs[in.value("index", 0u)] = {src->second, in.value("output", 0u)};
    }
    return true;
  }

  const std::string& bytes_;
  std::string* error_;
  std::string json_;
  size_t data_ = 0;
  std::map<std::string, std::shared_ptr<OperatorImpl>> ops_;
  std::vector<std::shared_ptr<OperatorImpl>> order_;
};

}  // namespace

const char* DataTypeGeName(DataType dt) {
  for (const auto& e : kDtypes) {
    if (e.first == dt) return e.second;
  }
  return "DT_UNDEFINED";
}

DataType DataTypeOf(const std::string& name) {
  for (const auto& e : kDtypes) {
    if (name == e.second) return e.first;
  }
  return DT_UNDEFINED;
}

bool GraphToBytes(const Graph& graph, std::string* bytes, std::string* error) {
  const auto& impl = GraphAccess::Impl(graph);
  if (!impl) {
    *error = "the graph is empty (default-constructed)";
    return false;
  }
  if (impl->flow_json) {
    *error = "a DataFlow graph (FlowGraph::ToGeGraph) is not a model graph";
    return false;
  }
  return Writer().Run(*impl, bytes, error);
}

bool GraphFromBytes(const std::string& bytes, Graph* graph,
                    std::string* error) {
  auto impl = std::make_shared<GraphImpl>();
  // Exceptions from nlohmann's typed reads become errors: a corrupt file
  // must not throw through GE's C-style API.
  try {
    if (!Reader(bytes, error).Run(impl.get())) return false;
  } catch (const std::exception& e) {
    *error = std::string("a field has the wrong JSON type: ") + e.what();
    return false;
  }
  GraphAccess::Impl(*graph) = impl;
  return true;
}

}  // namespace ge
