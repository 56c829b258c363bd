// aclgrphParseTensorFlow (parser/tensorflow_parser.h): the frozen GraphDef
// parsed by hflow's model library into a ge::Graph (runner_ops.h
// ParseModel), with GE's parser options (input_shape, out_nodes,
// input_format). libfmk_parser.so (old string ABI).
//
// Thread-safety: any thread.
#include "parser/tensorflow_parser.h"

#include "ge_api/runner/runner_ops.h"

namespace ge {
graphStatus aclgrphParseTensorFlow(const char* model_file, ge::Graph& graph) {
  return aclgrphParseTensorFlow(model_file, {}, graph);
}
graphStatus aclgrphParseTensorFlow(
    const char* model_file,
    const std::map<ge::AscendString, ge::AscendString>& parser_params,
    ge::Graph& graph) {
  return runner::ParseModel("aclgrphParseTensorFlow", "tensorflow", model_file,
                            parser_params, graph);
}
}  // namespace ge
