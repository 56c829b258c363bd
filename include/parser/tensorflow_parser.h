// GE's TensorFlow model parser: a frozen GraphDef (.pb) into a ge::Graph of
// Data and Const ops and the model's operators (mapped onto ONNX-named
// `ai.onnx::17::<Op>` ops, NHWC operators wrapped in transposes), which a
// GraphPp node or Session::AddGraph + RunGraph runs on hflow's model
// executor. GE's parser options: "input_shape" ("name:1,224,224,3;..."),
// "out_nodes" ("node:0;other:1"), "input_format". Needs hflow's model
// library. A missing or corrupt file or an unmapped operator: GRAPH_FAILED,
// with the reason logged and kept for GEGetErrorMsg, naming the file and op.
//
// Thread-safety: any thread.
#ifndef HFLOW_GE_PARSER_TENSORFLOW_PARSER_H_
#define HFLOW_GE_PARSER_TENSORFLOW_PARSER_H_

#include <map>
#include <string>

#include "graph/ascend_string.h"
#include "graph/error_codes.h"
#include "graph/graph.h"

#ifndef PARSER_FUNC_VISIBILITY
#define PARSER_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace ge {
PARSER_FUNC_VISIBILITY graphStatus
aclgrphParseTensorFlow(const char* model_file, ge::Graph& graph);
PARSER_FUNC_VISIBILITY graphStatus aclgrphParseTensorFlow(
    const char* model_file,
    const std::map<ge::AscendString, ge::AscendString>& parser_params,
    ge::Graph& graph);
}  // namespace ge

#endif  // HFLOW_GE_PARSER_TENSORFLOW_PARSER_H_
