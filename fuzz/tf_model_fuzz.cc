// Fuzz target: the TensorFlow front-end (src/model/tf_import.cc), fed the
// bytes as a frozen GraphDef (ImportTfBytes: protobuf parse, the operator
// mapping with its NHWC rewrites and constant filter rearrangement, the
// IR's structural check).
//
// Invariants: a rejection names the file and never crashes; an accepted
// model's IR passes CheckIr, every constant holds exactly its elements'
// bytes, and importing the same bytes again gives the same IR shape.
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "model/tf_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hflow::model::ModelIr;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  ModelIr ir;
  hflow::Status s = hflow::model::ImportTfBytes(bytes, "fuzz.pb", {}, &ir);
  if (!s.ok()) {
    FUZZ_CHECK(s.message().rfind("fuzz.pb", 0) == 0);  // names the file
    return 0;
  }
  FUZZ_CHECK(hflow::model::CheckIr(ir).ok());
  for (const auto& [name, t] : ir.constants) {
    const size_t es = hflow::model::ElementSize(t.dtype);
    FUZZ_CHECK(es > 0 && t.NumElements() >= 0);
    FUZZ_CHECK(t.data().size() == size_t(t.NumElements()) * es);
  }
  ModelIr again;
  FUZZ_CHECK(hflow::model::ImportTfBytes(bytes, "fuzz.pb", {}, &again).ok());
  FUZZ_CHECK(again.nodes.size() == ir.nodes.size() &&
             again.constants.size() == ir.constants.size() &&
             again.outputs.size() == ir.outputs.size());
  return 0;
}
