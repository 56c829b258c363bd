// Finds where an ONNX model's initializers keep their raw bytes, so that a
// parse need not copy them.
//
// Note [Weights from the mapped file]
// Parsing a ModelProto copies every initializer's raw_data out of the file
// into a string of its own, and the upload then copies it again into the
// device's memory: two passes over a model's weights (46 MB for resnet18),
// each on fresh pages, were most of a build's load time. protobuf has no
// mode that leaves a bytes field where it lies, so the ONNX front-end
// walks the wire format itself first (protobuf's own CodedInputStream, no
// hand-written decoding): SplitInitializerData copies the model without
// the graph's initializers' raw_data payloads (each replaced by a one-byte
// stand-in, so the tensor still says where its data is and ONNX's checker
// sees what it would have seen) and records
// where each payload lies in the file. protobuf parses that small
// skeleton; each initializer's constant then views its payload in the
// mapped file (IrTensor::mapping), and the upload copies it once, from the
// file to the device. Anything the walk does not expect (groups, a
// truncated field) makes it give up, and the model is parsed whole, as
// before, so what is accepted and what is refused does not change.
//
// Thread-safety: reentrant.
#ifndef HFLOW_MODEL_ONNX_WIRE_H_
#define HFLOW_MODEL_ONNX_WIRE_H_

#include <cstddef>
#include <string>
#include <vector>

namespace hflow {
namespace model {

// Where one initializer's raw_data payload lies in the model's bytes.
struct WireSpan {
  bool present = false;  // the initializer has raw_data
  size_t offset = 0;
  size_t size = 0;
};

// Splits the serialized ModelProto [data, data + size) into *skeleton (the
// same model with the top-level graph's initializers' raw_data payloads
// replaced by stand-ins) and *spans (one per initializer, in the order the
// parsed GraphProto lists them). False when the bytes are not what the walk
// expects; the caller then parses them whole.
bool SplitInitializerData(const char* data, size_t size, std::string* skeleton,
                          std::vector<WireSpan>* spans);

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_ONNX_WIRE_H_
