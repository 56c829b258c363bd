// aclgrphParseTensorFlow (parser/tensorflow_parser.h): hflow reads no model
// files, so it says so and leaves the graph empty. libfmk_parser.so (old string
// ABI).
//
// Thread-safety: any thread.
#include "parser/tensorflow_parser.h"

#include <cstdio>

namespace ge {
graphStatus aclgrphParseTensorFlow(const char* model_file, ge::Graph& graph) {
  return aclgrphParseTensorFlow(model_file, {}, graph);
}
graphStatus aclgrphParseTensorFlow(
    const char* model_file, const std::map<ge::AscendString, ge::AscendString>&,
    ge::Graph& /*graph*/) {
  std::fprintf(
      stderr,
      "hflow ge: aclgrphParseTensorFlow(%s): hflow does not parse model files "
      "and does not run model graphs yet; a GraphPp node fails at "
      "build\n",
      model_file == nullptr ? "(null)" : model_file);
  return GRAPH_FAILED;
}
}  // namespace ge
