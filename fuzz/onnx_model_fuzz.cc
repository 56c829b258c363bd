// Fuzz target: the ONNX front-end (src/model/onnx_import.cc), fed the bytes
// as a model file (ImportOnnxBytes: protobuf parse, opset range, ONNX's
// checker, conversion to the model IR, the IR's structural check).
//
// Invariants: a rejection names the file and never crashes (nothing
// libonnx throws escapes); an accepted model's IR passes CheckIr, every
// constant holds exactly its elements' bytes, and importing the same bytes
// again gives the same IR shape (the import is deterministic).
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "model/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hflow::model::ModelIr;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
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
    FUZZ_CHECK(t.bytes.size() == size_t(t.NumElements()) * es);
  }
  ModelIr again;
  FUZZ_CHECK(
      hflow::model::ImportOnnxBytes(bytes, "fuzz.onnx", {}, &again).ok());
  FUZZ_CHECK(again.nodes.size() == ir.nodes.size() &&
             again.constants.size() == ir.constants.size() &&
             again.inputs.size() == ir.inputs.size());
  return 0;
}
