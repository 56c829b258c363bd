// The ONNX front-end: an ONNX model file (opsets 11 to 17 of the default
// domain) into a ModelIr, through Debian's libonnx (its protobuf types and
// checker). Constant nodes become constants; initializers listed among the
// graph's inputs (older exporters do so) are not model inputs.
//
// Thread-safety: reentrant.
#ifndef HFLOW_MODEL_ONNX_IMPORT_H_
#define HFLOW_MODEL_ONNX_IMPORT_H_

#include <map>
#include <string>

#include "hflow/status.h"
#include "model/ir.h"

namespace hflow {
namespace model {

inline constexpr int64_t kMinOnnxOpset = 11;
inline constexpr int64_t kMaxOnnxOpset = 17;

// `params` are GE's parser options (aclgrphParseONNX): "input_shape"
// ("name:1,3,224,224;other:4"), which fixes the named inputs' dims, and
// "input_format" (accepted; ONNX models are NCHW). Any other key is an
// error naming it.
Status ImportOnnxFile(const std::string& path,
                      const std::map<std::string, std::string>& params,
                      ModelIr* out);
Status ImportOnnxBytes(const std::string& bytes, const std::string& source,
                       const std::map<std::string, std::string>& params,
                       ModelIr* out);

// Applies GE's "input_shape" option to `ir`'s inputs. Errors name the
// input and the option.
Status ApplyInputShape(const std::string& spec, ModelIr* ir);

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_ONNX_IMPORT_H_
