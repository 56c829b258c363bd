// What a model node says about its model: the file and its framework, GE's
// parser options (load_params) and GE's graph compile config
// ({"build_options": {...}, "inputs_tensor_desc": [{"data_type":
// "DT_INT32", "shape": [3]}, ...]}), and the pieces the model UDF reads
// from its init params. Also the model library's names that the deployer
// needs (it includes this header only).
//
// Thread-safety: plain values; functions are reentrant.
#ifndef HFLOW_MODEL_MODEL_CONFIG_H_
#define HFLOW_MODEL_MODEL_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "model/ir.h"

namespace hflow {
namespace model {

// The model UDF, registered by libhflow_model.so, and its init params.
inline constexpr char kModelFunction[] = "_BuiltIn_Model";
inline constexpr char kModelLibrary[] = "libhflow_model.so";
inline constexpr char kAttrGraphFile[] = "_model_graph_file";
inline constexpr char kAttrFramework[] = "_model_framework";
inline constexpr char kAttrLoadParams[] = "_model_load_params";  // JSON object
inline constexpr char kAttrCompileConfig[] = "_model_compile_config";
inline constexpr char kAttrIntraOpThreads[] = "_model_intra_op_threads";

// Frameworks, as GE's dataflow.Framework names them (lower case here).
inline constexpr char kFrameworkOnnx[] = "onnx";
inline constexpr char kFrameworkTensorFlow[] = "tensorflow";
// hflow's GE graph file (ge::Graph::SaveToFile; a GraphPp node's graph).
inline constexpr char kFrameworkGeGraph[] = "ge_graph";

// One entry of inputs_tensor_desc.
struct InputDesc {
  bool has_dtype = false;
  DataType dtype = DataType::DT_FLOAT;
  bool has_shape = false;
  std::vector<int64_t> dims;  // -1: any
};

struct CompileConfig {
  std::map<std::string, std::string> build_options;  // accepted, unused
  std::vector<InputDesc> inputs;                     // by model input index
};

// Reads GE's graph compile config (empty path: an empty config). Errors
// name the file and field.
Status LoadModelCompileConfig(const std::string& path, CompileConfig* out);

// Overrides the model's inputs by index as GE does: dtype and shape of
// input i from inputs[i]. More descs than inputs is an error.
Status ApplyCompileConfig(const CompileConfig& cfg, ModelIr* ir);

// Parses a model file of `framework` into `ir` (`load_params` are GE's
// parser options: each front-end's, and for all of them GE's
// "input_data_names" ("a,b": the inputs' order, every input named once),
// "ge.outputNodeName" (as "out_nodes"), and "log" and
// "enable_scope_fusion_passes", which change nothing here).
Status ParseModelFile(const std::string& framework,
                      const std::string& graph_file,
                      const std::map<std::string, std::string>& load_params,
                      ModelIr* ir);

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_MODEL_CONFIG_H_
