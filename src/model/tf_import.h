// The TensorFlow front-end: a frozen GraphDef (.pb, as GE's
// aclgrphParseTensorFlow reads) into a ModelIr. Debian has no TensorFlow:
// the file is read with hflow's own copy of the schema's message and field
// numbers (proto/tf_graph.proto). TensorFlow's operators map onto the IR's
// (ONNX-named) ones; NHWC operators (Conv2D, DepthwiseConv2dNative,
// MaxPool, AvgPool, FusedBatchNorm*, BiasAdd) are wrapped in transposes to
// and from NCHW, and constant filters are rearranged once, at import.
//
// Thread-safety: reentrant.
#ifndef HFLOW_MODEL_TF_IMPORT_H_
#define HFLOW_MODEL_TF_IMPORT_H_

#include <map>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "model/ir.h"

namespace hflow {
namespace model {

// `params` are GE's parser options: "input_shape" ("name:1,224,224,3;..."),
// "out_nodes" ("node:0;other:1": the model's outputs, in order; default:
// every output no node reads) and "input_format" (accepted). Any other
// key is an error naming it.
Status ImportTfFile(const std::string& path,
                    const std::map<std::string, std::string>& params,
                    ModelIr* out);
Status ImportTfBytes(const std::string& bytes, const std::string& source,
                     const std::map<std::string, std::string>& params,
                     ModelIr* out);

// The TensorFlow operators the front-end maps, sorted.
std::vector<std::string> TfOperators();

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_TF_IMPORT_H_
