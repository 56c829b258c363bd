// A model file parsed into a GE graph file's bytes, for GE's parsers
// (aclgrphParseONNX / aclgrphParseTensorFlow, through the GE bridge): the
// model library (libhflow_model.so, found as model nodes find it) parses
// the file as a model node would and writes it as a graph of
// `ai.onnx::17::<Op>` ops over Data and Const ops.
//
// Thread-safety: reentrant.
#ifndef HFLOW_SESSION_MODEL_CONVERT_H_
#define HFLOW_SESSION_MODEL_CONVERT_H_

#include <map>
#include <string>

#include "hflow/status.h"

namespace hflow {

// `framework` is "onnx" or "tensorflow"; `params` GE's parser options.
// Errors name the file (and the op or option that is wrong), or say that
// the model library is missing and how to get it.
Status ConvertModelToGeGraph(const std::string& framework,
                             const std::string& model_file,
                             const std::map<std::string, std::string>& params,
                             const std::string& graph_name, std::string* bytes);

}  // namespace hflow

#endif  // HFLOW_SESSION_MODEL_CONVERT_H_
