// GE's graph compile config and the model-file dispatch (model_config.h).
//
// Thread-safety: reentrant.
#include "model/model_config.h"

#include <fstream>
#include <sstream>

#include "flow_func/lib/flow_func_internal.h"
#include "model/ge_graph_import.h"
#include "model/onnx_import.h"
#include "model/tf_import.h"
#include "util/json_fields.h"

namespace hflow {
namespace model {
namespace {

using Json = nlohmann::json;

Status ReadDesc(const util::JsonFields& f, const Json& j,
                const std::string& path, InputDesc* d) {
  HFLOW_RETURN_IF_ERROR(f.Object(j, path));
  HFLOW_RETURN_IF_ERROR(f.Keys(j, path, {"data_type", "shape"}, {"format"}));
  std::string dt;
  HFLOW_RETURN_IF_ERROR(f.OptString(j, path, "data_type", &dt));
  if (!dt.empty()) {
    const FlowFunc::internal::DataTypeInfo* info =
        FlowFunc::internal::FindDataTypeByGeName(dt);
    if (info == nullptr || ElementSize(info->dtype) == 0) {
      return f.Error(util::JsonPath(path, "data_type"),
                     "'" + dt + "' is not a data type a model runs on",
                     "write one of GE's names: DT_FLOAT, DT_FLOAT16, DT_BF16, "
                     "DT_DOUBLE, DT_INT8, DT_INT16, DT_INT32, DT_INT64, "
                     "DT_UINT8, DT_BOOL");
    }
    d->has_dtype = true;
    d->dtype = info->dtype;
  }
  const Json* shape = nullptr;
  HFLOW_RETURN_IF_ERROR(f.OptArray(j, path, "shape", &shape));
  if (shape != nullptr) {
    d->has_shape = true;
    for (size_t i = 0; i < shape->size(); ++i) {
      int64_t v = 0;
      HFLOW_RETURN_IF_ERROR(
          f.Int((*shape)[i], util::JsonPath(util::JsonPath(path, "shape"), i),
                -1, &v, INT64_MAX, "give a dim (-1 for any size)"));
      d->dims.push_back(v);
    }
  }
  return Status::OK();
}

}  // namespace

Status LoadModelCompileConfig(const std::string& path, CompileConfig* out) {
  *out = CompileConfig();
  if (path.empty()) return Status::OK();
  std::ifstream in(path);
  if (!in) {
    return Status::NotFound(path + ": cannot open the graph compile config");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  util::JsonFields f(path);
  Json root;
  HFLOW_RETURN_IF_ERROR(f.Parse(ss.str(), &root));
  HFLOW_RETURN_IF_ERROR(f.Object(root, util::kDocumentPath));
  // GE's docs write both "build_options" and "build_option".
  HFLOW_RETURN_IF_ERROR(f.Keys(
      root, "", {"build_options", "build_option", "inputs_tensor_desc"}));
  for (const char* key : {"build_options", "build_option"}) {
    const Json* opts = nullptr;
    HFLOW_RETURN_IF_ERROR(f.OptObject(root, "", key, &opts));
    if (opts == nullptr) continue;
    for (const auto& [k, v] : opts->items()) {
      std::string s;
      HFLOW_RETURN_IF_ERROR(f.String(v, util::JsonPath(key, k), &s));
      out->build_options[k] = s;
    }
  }
  const Json* descs = nullptr;
  HFLOW_RETURN_IF_ERROR(f.OptArray(root, "", "inputs_tensor_desc", &descs));
  if (descs != nullptr) {
    for (size_t i = 0; i < descs->size(); ++i) {
      InputDesc d;
      HFLOW_RETURN_IF_ERROR(ReadDesc(
          f, (*descs)[i], util::JsonPath("inputs_tensor_desc", i), &d));
      out->inputs.push_back(std::move(d));
    }
  }
  return Status::OK();
}

Status ApplyCompileConfig(const CompileConfig& cfg, ModelIr* ir) {
  if (cfg.inputs.size() > ir->inputs.size()) {
    return Status::InvalidArgument("inputs_tensor_desc lists " +
                                   std::to_string(cfg.inputs.size()) +
                                   " inputs but " + ir->source + " has " +
                                   std::to_string(ir->inputs.size()));
  }
  for (size_t i = 0; i < cfg.inputs.size(); ++i) {
    const InputDesc& d = cfg.inputs[i];
    IrValue& v = ir->inputs[i];
    if (d.has_dtype) v.dtype = d.dtype;
    if (d.has_shape) {
      if (v.has_shape && !v.dims.empty() && v.dims.size() != d.dims.size()) {
        return Status::InvalidArgument(
            "inputs_tensor_desc[" + std::to_string(i) + "]: shape " +
            ShapeText(d.dims) + " has another rank than model input '" +
            v.name + "' " + ShapeText(v.dims) + " of " + ir->source);
      }
      v.dims = d.dims;
      v.has_shape = true;
    }
  }
  return Status::OK();
}

namespace {

Status ParseFile(const std::string& framework, const std::string& graph_file,
                 const std::map<std::string, std::string>& load_params,
                 ModelIr* ir) {
  if (framework == kFrameworkOnnx) {
    return ImportOnnxFile(graph_file, load_params, ir);
  }
  if (framework == kFrameworkTensorFlow) {
    return ImportTfFile(graph_file, load_params, ir);
  }
  if (framework == kFrameworkGeGraph) {
    return ImportGeGraphFile(graph_file, load_params, ir);
  }
  return Status::NotSupported("framework '" + framework +
                              "' is not supported; give \"onnx\", "
                              "\"tensorflow\" or \"ge_graph\"");
}

// GE's parser option "input_data_names" ("a,b"): the model's inputs in
// that order; every input must be named once.
Status OrderInputs(const std::string& names, ModelIr* ir) {
  std::vector<IrValue> ordered;
  std::stringstream ss(names);
  std::string name;
  while (std::getline(ss, name, ',')) {
    bool found = false;
    for (const IrValue& v : ir->inputs) {
      if (v.name != name && v.name != name + ":0") continue;
      for (const IrValue& o : ordered) {
        if (o.name == v.name) {
          return Status::InvalidArgument(ir->source +
                                         ": load param input_data_names "
                                         "names '" +
                                         name + "' twice");
        }
      }
      ordered.push_back(v);
      found = true;
    }
    if (!found) {
      return Status::InvalidArgument(ir->source +
                                     ": load param input_data_names names '" +
                                     name + "', which is not a model input");
    }
  }
  if (ordered.size() != ir->inputs.size()) {
    return Status::InvalidArgument(
        ir->source + ": load param input_data_names lists " +
        std::to_string(ordered.size()) + " of the model's " +
        std::to_string(ir->inputs.size()) + " inputs; name every input");
  }
  ir->inputs = std::move(ordered);
  return Status::OK();
}

}  // namespace

Status ParseModelFile(const std::string& framework,
                      const std::string& graph_file,
                      const std::map<std::string, std::string>& given,
                      ModelIr* ir) {
  // GE's parsers also take these keys: the output node names under GE's
  // option name, the inputs' order, and options without an effect here.
  std::map<std::string, std::string> load_params = given;
  if (auto it = load_params.find("ge.outputNodeName");
      it != load_params.end()) {
    load_params.emplace("out_nodes", it->second);
    load_params.erase(it);
  }
  std::string input_names;
  if (auto it = load_params.find("input_data_names"); it != load_params.end()) {
    input_names = it->second;
    load_params.erase(it);
  }
  for (const char* ignored : {"log", "enable_scope_fusion_passes"}) {
    load_params.erase(ignored);
  }
  HFLOW_RETURN_IF_ERROR(ParseFile(framework, graph_file, load_params, ir));
  return input_names.empty() ? Status::OK() : OrderInputs(input_names, ir);
}

}  // namespace model
}  // namespace hflow
