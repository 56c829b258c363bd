// GE's tensorflow model parser entry points, so programs that build GraphPp
// nodes from model files compile and link unchanged. hflow does not parse
// model files: aclgrphParseTensorFlow leaves the graph empty and returns
// GRAPH_FAILED with a log line naming the file, and a DataFlow graph with a
// GraphPp node fails at build with a not-supported error naming the node.
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
