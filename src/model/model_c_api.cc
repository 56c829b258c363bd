// The model library's C entries, found by name with dlsym (plain C
// signatures: libhflow does not link the library):
//   hflow_model_check    the deployer's check of a model node's model
//                        before anything is deployed (file, compile config,
//                        every operator), so a build and `hflow validate`
//                        name what is wrong with the node, file and op;
//                        its hold keeps the parse for the build's loads
//   hflow_model_release_hold;
//   hflow_model_acquire  loads a model onto a device on the calling
//   hflow_model_release  thread's binding, as the model UDF's Init does
//                        (the seed regression drives the load path with
//                        and without a binding through them).
//
// Thread-safety: reentrant.
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "model/loaded_model.h"
#include "model/model_config.h"
#include "model/tf_import.h"
#include "nlohmann/json.hpp"

namespace {

hflow::model::ModelSpec Spec(const char* framework, const char* graph_file,
                             const char* load_params_json,
                             const char* compile_config) {
  hflow::model::ModelSpec spec;
  spec.framework = framework;
  spec.graph_file = graph_file;
  spec.compile_config = compile_config;
  nlohmann::json lp = nlohmann::json::parse(load_params_json, nullptr, false);
  if (lp.is_object()) {
    for (const auto& [k, v] : lp.items()) {
      if (v.is_string()) spec.load_params[k] = v.get<std::string>();
    }
  }
  return spec;
}

struct Held {
  std::shared_ptr<const hflow::model::LoadedModel> model;
};

}  // namespace

// `hold` (may be null) gets the parsed model, for the loads of the same
// build to share (Note [One parse per build]); give it back with
// hflow_model_release_hold.
extern "C" __attribute__((visibility("default"))) int hflow_model_check(
    const char* framework, const char* graph_file, const char* load_params_json,
    const char* compile_config, int* inputs, int* outputs, void** hold,
    char* error, size_t error_len) {
  using hflow::Status;
  hflow::model::ModelSpec spec =
      Spec(framework, graph_file, load_params_json, compile_config);
  std::shared_ptr<const hflow::model::ModelIr> ir;
  Status s = hflow::model::LoadedModel::Check(spec, &ir);
  if (!s.ok()) {
    std::snprintf(error, error_len, "%s", s.message().c_str());
    return static_cast<int>(s.code());
  }
  *inputs = static_cast<int>(ir->inputs.size());
  *outputs = static_cast<int>(ir->outputs.size());
  if (hold != nullptr) {
    *hold = new std::shared_ptr<const hflow::model::ModelIr>(std::move(ir));
  }
  return 0;
}

extern "C" __attribute__((visibility("default"))) void hflow_model_release_hold(
    void* hold) {
  delete static_cast<std::shared_ptr<const hflow::model::ModelIr>*>(hold);
}

// Returns a handle (release it on a thread bound to the same device), or
// null with the status code in *code and the message in `error`.
extern "C" __attribute__((visibility("default"))) void* hflow_model_acquire(
    const char* framework, const char* graph_file, const char* load_params_json,
    const char* compile_config, int device, int* code, char* error,
    size_t error_len) {
  auto held = std::make_unique<Held>();
  hflow::Status s = hflow::model::LoadedModel::Acquire(
      Spec(framework, graph_file, load_params_json, compile_config), device,
      &held->model);
  *code = static_cast<int>(s.code());
  if (!s.ok()) {
    std::snprintf(error, error_len, "%s", s.message().c_str());
    return nullptr;
  }
  return held.release();
}

extern "C" __attribute__((visibility("default"))) void hflow_model_release(
    void* handle) {
  delete static_cast<Held*>(handle);
}

// The supported operators as the user guide's table (markdown rows:
// "| group | operators |"), written into `out` (truncated to `len`);
// returns the length it needs.
extern "C" __attribute__((visibility("default"))) size_t hflow_model_ops_table(
    char* out, size_t len) {
  std::map<std::string, std::string> groups;
  for (const auto& [op, group] : hflow::model::Executor::SupportedOps()) {
    std::string& row = groups[group];
    row += (row.empty() ? "`" : ", `") + op + "`";
  }
  std::string table = "| group | ONNX operators |\n|---|---|\n";
  for (const auto& [group, ops] : groups) {
    table += "| " + group + " | " + ops + " |\n";
  }
  std::string tf;
  for (const std::string& op : hflow::model::TfOperators()) {
    tf += (tf.empty() ? "`" : ", `") + op + "`";
  }
  table +=
      "\nTensorFlow operators the TensorFlow front-end maps onto them: " + tf +
      ".\n";
  if (len > 0) std::snprintf(out, len, "%s", table.c_str());
  return table.size() + 1;
}
