// Fuzz target: the ONNX front-end (src/model/onnx_import.cc), fed the bytes
// as a model file (ImportOnnxBytes: protobuf parse, opset range, ONNX's
// checker, conversion to the model IR, the IR's structural check).
//
// Invariants: the weights' walk (src/model/onnx_wire.h) accepts what a
// whole parse accepts and finds each initializer's raw bytes where they lie;
// a rejection names the file and never crashes (nothing
// libonnx throws escapes); an accepted model's IR passes CheckIr, every
// constant holds exactly its elements' bytes, and importing the same bytes
// again gives the same IR shape (the import is deterministic).
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "model/onnx_import.h"
#include "model/onnx_wire.h"

namespace {

// The walk against a whole parse of the same bytes.
void CheckWalk(const std::string& bytes) {
  onnx::ModelProto whole;
  const bool whole_ok = whole.ParseFromString(bytes);
  std::string skeleton;
  std::vector<hflow::model::WireSpan> spans;
  if (!hflow::model::SplitInitializerData(bytes.data(), bytes.size(), &skeleton,
                                          &spans)) {
    return;  // the front-end parses the whole bytes
  }
  onnx::ModelProto split;
  FUZZ_CHECK(split.ParseFromString(skeleton) == whole_ok);
  if (!whole_ok) return;
  FUZZ_CHECK(spans.size() == size_t(whole.graph().initializer_size()));
  for (size_t i = 0; i < spans.size(); ++i) {
    const onnx::TensorProto& t = whole.graph().initializer(int(i));
    FUZZ_CHECK(spans[i].present == t.has_raw_data());
    if (spans[i].present) {
      FUZZ_CHECK(bytes.compare(spans[i].offset, spans[i].size, t.raw_data()) ==
                 0);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hflow::model::ModelIr;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  CheckWalk(bytes);
  ModelIr ir;
  hflow::Status s = hflow::model::ImportOnnxBytes(bytes, "fuzz.onnx", {}, &ir);
  if (!s.ok()) {
    FUZZ_CHECK(s.message().rfind("fuzz.onnx", 0) == 0);  // names the file
    return 0;
  }
  FUZZ_CHECK(hflow::model::CheckIr(ir).ok());
  FUZZ_CHECK(!ir.outputs.empty());
  for (const auto& [name, t] : ir.constants) {
    const size_t es = hflow::model::ElementSize(t.dtype);
    FUZZ_CHECK(es > 0 && t.NumElements() >= 0);
    FUZZ_CHECK(t.data().size() == size_t(t.NumElements()) * es);
  }
  ModelIr again;
  FUZZ_CHECK(
      hflow::model::ImportOnnxBytes(bytes, "fuzz.onnx", {}, &again).ok());
  FUZZ_CHECK(again.nodes.size() == ir.nodes.size() &&
             again.constants.size() == ir.constants.size() &&
             again.inputs.size() == ir.inputs.size());
  return 0;
}
