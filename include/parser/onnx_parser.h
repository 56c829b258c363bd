// GE's ONNX model parser: an ONNX file (opsets 11 to 17) into a ge::Graph
// of Data and Const ops and the model's operators (as `ai.onnx::17::<Op>`
// ops), which a GraphPp node or Session::AddGraph + RunGraph runs on
// hflow's model executor. GE's parser options: "input_shape"
// ("name:1,3,224,224;..."), "input_format". Needs hflow's model library
// (built where libtorch and libonnx are installed). A missing or corrupt
// file, an unsupported operator or opset: GRAPH_FAILED, with the reason
// logged and kept for GEGetErrorMsg, naming the file and the op.
//
// Thread-safety: any thread.
#ifndef HFLOW_GE_PARSER_ONNX_PARSER_H_
#define HFLOW_GE_PARSER_ONNX_PARSER_H_

#include <map>
#include <string>

#include "graph/ascend_string.h"
#include "graph/error_codes.h"
#include "graph/graph.h"

#ifndef PARSER_FUNC_VISIBILITY
#define PARSER_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif

namespace ge {
PARSER_FUNC_VISIBILITY graphStatus aclgrphParseONNX(const char* model_file,
                                                    ge::Graph& graph);
PARSER_FUNC_VISIBILITY graphStatus aclgrphParseONNX(
    const char* model_file,
    const std::map<ge::AscendString, ge::AscendString>& parser_params,
    ge::Graph& graph);
PARSER_FUNC_VISIBILITY graphStatus aclgrphParseONNXFromMem(
    const char* buffer, size_t size,
    const std::map<ge::AscendString, ge::AscendString>& parser_params,
    ge::Graph& graph);
}  // namespace ge

#endif  // HFLOW_GE_PARSER_ONNX_PARSER_H_
