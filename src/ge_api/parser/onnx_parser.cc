// aclgrphParseONNX (parser/onnx_parser.h): hflow reads no model files, so it
// says so and leaves the graph empty. libfmk_onnx_parser.so (old string ABI).
//
// Thread-safety: any thread.
#include "parser/onnx_parser.h"

#include <cstdio>

namespace ge {
graphStatus aclgrphParseONNX(const char* model_file, ge::Graph& graph) {
  return aclgrphParseONNX(model_file, {}, graph);
}
graphStatus aclgrphParseONNX(
    const char* model_file, const std::map<ge::AscendString, ge::AscendString>&,
    ge::Graph& /*graph*/) {
  std::fprintf(
      stderr,
      "hflow ge: aclgrphParseONNX(%s): hflow does not parse model files "
      "and does not run model graphs yet; a GraphPp node fails at "
      "build\n",
      model_file == nullptr ? "(null)" : model_file);
  return GRAPH_FAILED;
}
}  // namespace ge
