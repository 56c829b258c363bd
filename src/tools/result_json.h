// The JSON line `hflow run` prints for each output of each fetched result:
//
//   {"output":0,"trans_id":1,"ret_code":0,"dtype":"int32","shape":[3],
//    "data":[2,3,4]}   (on one line)
//
// A result with a non-zero ret code also carries "ret_name" (ret_codes.h)
// and, when the runtime knows it, "error_node"; if it holds no data (a
// failed message) dtype, shape and data are left out. Floats are printed
// with the fewest digits that read back to the same value of their own
// dtype; NaN and infinities, which JSON numbers cannot spell, are the
// strings "NaN", "Infinity" and "-Infinity" (the spelling of Python's json
// module and JavaScript).
//
// Note [Fast JSON]: results can be large (an image, a batch of embeddings),
// so the text is produced with std::to_chars straight into one buffer sized
// for the worst case up front: no ostream, no per-element allocation.
//
// Thread-safety: pure functions over their arguments; reentrant.
#ifndef HFLOW_TOOLS_RESULT_JSON_H_
#define HFLOW_TOOLS_RESULT_JSON_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "hflow/session.h"

namespace hflow::tools {

// Appends the line (without newline) for output `output` of the result
// `info` describes to `*line`. With `npy_path` (hflow run --output-npy) the
// line says where the tensor went ("npy":"<path>") instead of its "data".
void AppendOutputJson(size_t output, const FlowInfo& info, const Tensor& tensor,
                      std::string* line, const std::string& npy_path = "");

// The line for a result with no error node.
std::string OutputJsonLine(size_t output, uint64_t trans_id, int32_t ret_code,
                           const Tensor& tensor);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RESULT_JSON_H_
