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
//                        and without a binding through them);
//   hflow_model_to_ge_graph  a model file parsed into a GE graph file's
//                        bytes (GE's parsers, aclgrphParseONNX/TensorFlow);
//   hflow_model_free     frees those bytes.
//
// Thread-safety: reentrant.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

#include "model/executor.h"
#include "model/ge_graph_import.h"
#include "model/ge_ops.h"
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

// Parses `graph_file` of `framework` with GE's parser options
// (`params_json`, an object of strings) and writes it as a GE graph file:
// *out (free it with hflow_model_free) of *out_len bytes. Returns 0, or the
// status code with the message in `error`.
extern "C" __attribute__((visibility("default"))) int hflow_model_to_ge_graph(
    const char* framework, const char* graph_file, const char* params_json,
    const char* graph_name, char** out, size_t* out_len, char* error,
    size_t error_len) {
  const hflow::model::ModelSpec spec =
      Spec(framework, graph_file, params_json, "");
  hflow::model::ModelIr ir;
  hflow::Status s = hflow::model::ParseModelFile(
      spec.framework, spec.graph_file, spec.load_params, &ir);
  // GE's parsers refuse what cannot run: every unsupported op, here.
  if (s.ok()) s = hflow::model::Executor::CheckOps(ir);
  std::string bytes;
  if (s.ok()) s = hflow::model::ExportGeGraph(ir, graph_name, &bytes);
  if (!s.ok()) {
    std::snprintf(error, error_len, "%s", s.message().c_str());
    return static_cast<int>(s.code());
  }
  *out = static_cast<char*>(std::malloc(bytes.size()));
  if (*out == nullptr) {
    std::snprintf(error, error_len, "out of memory (%zu bytes)", bytes.size());
    return static_cast<int>(hflow::StatusCode::kOutOfMemory);
  }
  std::memcpy(*out, bytes.data(), bytes.size());
  *out_len = bytes.size();
  return 0;
}

extern "C" __attribute__((visibility("default"))) void hflow_model_free(
    void* p) {
  std::free(p);
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
  std::string ge;
  for (const std::string& op : hflow::model::GeOperators()) {
    ge += (ge.empty() ? "`" : ", `") + op + "`";
  }
  table +=
      "\nGE operators (include/op_proto/all_ops.h) the GE-graph "
      "front-end maps onto them: " +
      ge + ".\n";
  if (len > 0) std::snprintf(out, len, "%s", table.c_str());
  return table.size() + 1;
}
