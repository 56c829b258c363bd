// Fuzz target: the JSON graph file parser (src/deploy/graph_file.cc) and
// the structural validation it ends with (graph_validate.cc), fed the bytes
// as a user's graph file (ParseGraphJson, the text LoadGraphFile reads).
//
// Invariants of a successful parse (docs/user_guide.md, "Graph file"): the
// GraphDef re-validates, its topological order holds every node, batch
// attributes expand into a graph that still validates; and printing the
// GraphDef back to a graph file and parsing that gives the same GraphDef. An
// inline deploy object is also run through the deploy info parser, as `hflow
// validate` does.
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "deploy/deploy_info.h"
#include "deploy/graph_def.h"
#include "flow_func/init_params.h"
#include "fuzz_check.h"

namespace {

using hflow::deploy::GraphDef;
using hflow::deploy::NodeDef;
using hflow::deploy::OutputRef;
using hflow::flow_func::AttrValueImpl;
using Json = nlohmann::json;
using DataType = ::FlowFunc::TensorDataType;

constexpr char kBaseDir[] = "/fuzz/graph_dir";

std::string RefText(const GraphDef& g, const OutputRef& r) {
  return g.IsGraphInput(r.op) ? r.op : r.ToString();
}

// An init param back to JSON; false for a value JSON cannot hold (a float
// that overflowed to infinity).
bool AttrJson(const AttrValueImpl::Value& v, Json* out) {
  bool ok = true;
  auto dt_name = [](DataType dt) {
    return std::string(hflow::flow_func::DataTypeName(dt));
  };
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, float>) {
          ok = std::isfinite(x);
          *out = x;
        } else if constexpr (std::is_same_v<T, std::vector<float>>) {
          for (float f : x) ok = ok && std::isfinite(f);
          *out = x;
        } else if constexpr (std::is_same_v<T, DataType>) {
          *out = dt_name(x);
        } else if constexpr (std::is_same_v<T, std::vector<DataType>>) {
          *out = Json::array();
          for (auto dt : x) out->push_back(dt_name(dt));
        } else {
          *out = x;
        }
      },
      v);
  return ok;
}

Json AttrsJson(const NodeDef& n) {
  Json attrs = Json::object();
  for (size_t i = 0; i < n.input_attrs.size(); ++i) {
    for (const auto& a : n.input_attrs[i]) {
      Json j;
      if (const auto* c = std::get_if<hflow::CountBatch>(&a)) {
        j["count_batch"] = {{"batch_size", c->batch_size},
                            {"slide_stride", c->slide_stride},
                            {"timeout", c->timeout},
                            {"padding", c->padding},
                            {"batch_dim", c->batch_dim},
                            {"drop_remainder", c->drop_remainder}};
      } else {
        const auto& t = std::get<hflow::TimeBatch>(a);
        j["time_batch"] = {{"time_window", t.time_window},
                           {"timeout", t.timeout},
                           {"batch_dim", t.batch_dim},
                           {"padding", t.padding},
                           {"drop_remainder", t.drop_remainder}};
      }
      attrs[std::to_string(i)] = j;
    }
  }
  return attrs;
}

// The graph file of `g`; false when it holds a value JSON cannot spell.
bool ToJson(const GraphDef& g, Json* out) {
  Json& j = *out;
  j["name"] = g.name;
  j["inputs"] = g.inputs;
  j["nodes"] = Json::array();
  for (const NodeDef& n : g.nodes) {
    Json node;
    node["name"] = n.name;
    node["inputs"] = Json::array();
    for (const auto& r : n.inputs) node["inputs"].push_back(RefText(g, r));
    node["outputs"] = n.output_num;
    if (!n.pp.function.empty()) node["function"] = n.pp.function;
    if (!n.pp.compile_config.empty()) {
      node["compile_config"] = n.pp.compile_config;
    }
    Json params = Json::object();
    for (const auto& [key, value] : n.pp.init_params) {
      const auto* impl = dynamic_cast<const AttrValueImpl*>(value.get());
      FUZZ_CHECK(impl != nullptr);
      if (!AttrJson(impl->value(), &params[key])) return false;
    }
    if (!params.empty()) node["init_params"] = params;
    if (!n.input_map.empty()) node["input_map"] = n.input_map;
    if (!n.output_map.empty()) node["output_map"] = n.output_map;
    Json attrs = AttrsJson(n);
    if (!attrs.empty()) node["input_attrs"] = attrs;
    j["nodes"].push_back(node);
  }
  j["outputs"] = Json::array();
  for (const auto& r : g.outputs) j["outputs"].push_back(r.ToString());
  j["exception_catch"] = g.exception_catch;
  if (!g.deploy_info_json.empty()) {
    j["deploy"] = Json::parse(g.deploy_info_json);
  } else if (!g.deploy_info_path.empty()) {
    j["deploy"] = g.deploy_info_path;
  }
  return true;
}

bool SameAttrs(const NodeDef& a, const NodeDef& b) {
  if (a.input_attrs.size() != b.input_attrs.size()) {
    // Parsed attrs are sized to the inputs once "input_attrs" is present;
    // a printed graph writes the key only when some input has an attr.
    auto none = [](const NodeDef& n) {
      for (const auto& v : n.input_attrs) {
        if (!v.empty()) return false;
      }
      return true;
    };
    return none(a) && none(b);
  }
  for (size_t i = 0; i < a.input_attrs.size(); ++i) {
    if (a.input_attrs[i].size() != b.input_attrs[i].size()) return false;
    for (size_t k = 0; k < a.input_attrs[i].size(); ++k) {
      const auto &x = a.input_attrs[i][k], &y = b.input_attrs[i][k];
      if (x.index() != y.index()) return false;
      if (const auto* c = std::get_if<hflow::CountBatch>(&x)) {
        const auto& d = std::get<hflow::CountBatch>(y);
        if (c->batch_size != d.batch_size ||
            c->slide_stride != d.slide_stride || c->timeout != d.timeout ||
            c->padding != d.padding || c->batch_dim != d.batch_dim ||
            c->drop_remainder != d.drop_remainder) {
          return false;
        }
      } else {
        const auto& t = std::get<hflow::TimeBatch>(x);
        const auto& u = std::get<hflow::TimeBatch>(y);
        if (t.time_window != u.time_window || t.timeout != u.timeout ||
            t.batch_dim != u.batch_dim || t.padding != u.padding ||
            t.drop_remainder != u.drop_remainder) {
          return false;
        }
      }
    }
  }
  return true;
}

bool SameParams(const NodeDef& a, const NodeDef& b) {
  if (a.pp.init_params.size() != b.pp.init_params.size()) return false;
  for (const auto& [key, value] : a.pp.init_params) {
    auto it = b.pp.init_params.find(key);
    if (it == b.pp.init_params.end()) return false;
    const auto* x = dynamic_cast<const AttrValueImpl*>(value.get());
    const auto* y = dynamic_cast<const AttrValueImpl*>(it->second.get());
    if (x == nullptr || y == nullptr || !(x->value() == y->value())) {
      return false;
    }
  }
  return true;
}

bool Same(const GraphDef& a, const GraphDef& b) {
  if (a.name != b.name || a.inputs != b.inputs || a.outputs != b.outputs ||
      a.exception_catch != b.exception_catch ||
      a.deploy_info_json != b.deploy_info_json ||
      a.deploy_info_path != b.deploy_info_path ||
      a.nodes.size() != b.nodes.size()) {
    return false;
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const NodeDef &x = a.nodes[i], &y = b.nodes[i];
    if (x.name != y.name || x.inputs != y.inputs ||
        x.output_num != y.output_num || x.pp.name != y.pp.name ||
        x.pp.function != y.pp.function ||
        x.pp.compile_config != y.pp.compile_config ||
        x.input_map != y.input_map || x.output_map != y.output_map ||
        !SameAttrs(x, y) || !SameParams(x, y)) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = hflow_fuzz::AsText(data, size);
  GraphDef g;
  if (!hflow::deploy::ParseGraphJson(text, "fuzz.json", kBaseDir, &g).ok()) {
    return 0;
  }
  FUZZ_CHECK(hflow::deploy::ValidateGraphStructure(g).ok());
  FUZZ_CHECK(hflow::deploy::TopologicalOrder(g).size() == g.nodes.size());

  Json printed;
  if (ToJson(g, &printed)) {
    GraphDef again;
    hflow::Status s = hflow::deploy::ParseGraphJson(printed.dump(), "fuzz.json",
                                                    kBaseDir, &again);
    if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
    FUZZ_CHECK(s.ok());
    FUZZ_CHECK(Same(g, again));
  }

  if (!g.deploy_info_json.empty()) {
    std::vector<std::string> names;
    for (const NodeDef& n : g.nodes) names.push_back(n.name);
    hflow::deploy::DeployInfo info;
    (void)hflow::deploy::ParseDeployInfo(g.deploy_info_json, g.source, names,
                                         hflow::DefaultClusterConfig(), &info);
  }

  // What `hflow validate` and the session do next: batch attributes become
  // nodes, and the expanded graph must still be a valid graph.
  GraphDef expanded = g;
  if (hflow::deploy::ExpandInputAttrs(&expanded).ok()) {
    hflow::Status s = hflow::deploy::ValidateGraphStructure(expanded);
    if (!s.ok()) std::fprintf(stderr, "%s\n", s.message().c_str());
    FUZZ_CHECK(s.ok());
    FUZZ_CHECK(hflow::deploy::TopologicalOrder(expanded).size() ==
               expanded.nodes.size());
  }
  return 0;
}
