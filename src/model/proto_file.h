// Reads a protobuf message (an ONNX ModelProto, a TensorFlow GraphDef)
// straight from its file: no copy of the file's bytes in between, since a
// model's weights are most of them.
//
// Thread-safety: reentrant.
#ifndef HFLOW_MODEL_PROTO_FILE_H_
#define HFLOW_MODEL_PROTO_FILE_H_

#include <google/protobuf/message_lite.h>

#include <string>

#include "hflow/status.h"

namespace hflow {
namespace model {

// NotFound naming `path` when it cannot be opened; otherwise OK, with
// *parsed false when the file is empty or not a `message`.
Status ParseProtoFile(const std::string& path,
                      google::protobuf::MessageLite* message, bool* parsed);

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_PROTO_FILE_H_
