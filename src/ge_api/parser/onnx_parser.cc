// aclgrphParseONNX (parser/onnx_parser.h): the ONNX file parsed by hflow's
// model library into a ge::Graph (runner_ops.h ParseModel). From memory,
// the bytes go through a temporary file, as the library reads files.
// libfmk_onnx_parser.so (old string ABI).
//
// Thread-safety: any thread.
#include "parser/onnx_parser.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "ge_api/runner/bridge.h"
#include "ge_api/runner/runner_ops.h"

namespace ge {
graphStatus aclgrphParseONNX(const char* model_file, ge::Graph& graph) {
  return aclgrphParseONNX(model_file, {}, graph);
}
graphStatus aclgrphParseONNX(
    const char* model_file,
    const std::map<ge::AscendString, ge::AscendString>& parser_params,
    ge::Graph& graph) {
  return runner::ParseModel("aclgrphParseONNX", "onnx", model_file,
                            parser_params, graph);
}
graphStatus aclgrphParseONNXFromMem(
    const char* buffer, size_t size,
    const std::map<ge::AscendString, ge::AscendString>& parser_params,
    ge::Graph& graph) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path =
      std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/hflow-onnx-XXXXXX";
  const int fd = mkstemp(&path[0]);
  bool written = fd >= 0;
  for (size_t done = 0; written && done < size;) {
    const ssize_t n = write(fd, buffer + done, size - done);
    written = n > 0;
    done += written ? static_cast<size_t>(n) : 0;
  }
  if (fd >= 0) close(fd);
  graphStatus s = GRAPH_FAILED;
  if (written && (buffer != nullptr || size == 0)) {
    s = runner::ParseModel("aclgrphParseONNXFromMem", "onnx", path.c_str(),
                           parser_params, graph);
  } else {
    const std::string why = "cannot write the " + std::to_string(size) +
                            " bytes to " + path + " (the parser reads a file)";
    hflow::gebridge::Fail("aclgrphParseONNXFromMem", GRAPH_FAILED, why.c_str());
  }
  if (fd >= 0) unlink(path.c_str());
  return s;
}
}  // namespace ge
