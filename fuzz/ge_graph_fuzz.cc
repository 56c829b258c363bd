// Fuzz target: the GE-graph front-end (src/model/ge_graph_import.cc and
// the GE operator lowerings, src/model/ge_ops*.cc), fed the bytes as a GE
// graph file (the binary container or the JSON form).
//
// Invariants: a rejection names the file and never crashes; an accepted
// graph's IR passes CheckIr and every constant holds exactly its elements'
// bytes; the IR written back as a GE graph file (ExportGeGraph, what the
// parsers hand to ge::Graph) reads back to an IR of the same shape.
//
// Thread-safety: single-threaded (libFuzzer calls it from one thread).
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "model/ge_graph_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hflow::model::ModelIr;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  ModelIr ir;
  hflow::Status s =
      hflow::model::ImportGeGraphBytes(bytes, "fuzz.hfg", {}, &ir);
  if (!s.ok()) {
    FUZZ_CHECK(s.message().rfind("fuzz.hfg", 0) == 0);  // names the file
    return 0;
  }
  FUZZ_CHECK(hflow::model::CheckIr(ir).ok());
  for (const auto& [name, t] : ir.constants) {
    const size_t es = hflow::model::ElementSize(t.dtype);
    FUZZ_CHECK(es > 0 && t.NumElements() >= 0);
    FUZZ_CHECK(t.data().size() == size_t(t.NumElements()) * es);
  }
  std::string file;
  FUZZ_CHECK(hflow::model::ExportGeGraph(ir, "fuzz", &file).ok());
  ModelIr again;
  FUZZ_CHECK(
      hflow::model::ImportGeGraphBytes(file, "again.hfg", {}, &again).ok());
  FUZZ_CHECK(again.nodes.size() == ir.nodes.size() &&
             again.constants.size() == ir.constants.size() &&
             again.inputs.size() == ir.inputs.size() &&
             again.outputs.size() == ir.outputs.size());
  return 0;
}
