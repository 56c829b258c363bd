// The GE-graph front-end: a GE graph file (what ge::Graph::SaveToFile
// writes and a GraphPp node's graph becomes; docs/formats.md "GE graph
// file") into a ModelIr. Data ops become the model's inputs, Const ops its
// constants, GE operators are lowered by ge_ops.h, and `ai.onnx::<v>::<Op>`
// nodes (what aclgrphParseONNX keeps of operators GE has no name for) are
// IR nodes as they are. The reverse, ExportGeGraph, writes a ModelIr as a
// graph of such nodes: the parsers' (aclgrphParseONNX/TensorFlow) way of
// handing a parsed model to GE's Graph API.
//
// Thread-safety: reentrant.
#ifndef HFLOW_MODEL_GE_GRAPH_IMPORT_H_
#define HFLOW_MODEL_GE_GRAPH_IMPORT_H_

#include <map>
#include <string>

#include "hflow/status.h"
#include "model/ir.h"

namespace hflow {
namespace model {

inline constexpr char kGeGraphMagic[] = "HFGRAPH1";
inline constexpr size_t kGeGraphAlign = 64;
// The type prefix of ONNX operators kept as they are.
inline constexpr char kOnnxOpPrefix[] = "ai.onnx::";

// `params` are the load params: "input_shape" as GE's parsers read it; any
// other key is an error naming it.
Status ImportGeGraphFile(const std::string& path,
                         const std::map<std::string, std::string>& params,
                         ModelIr* out);
Status ImportGeGraphBytes(const std::string& bytes, const std::string& source,
                          const std::map<std::string, std::string>& params,
                          ModelIr* out);

// `ir` as a GE graph file (the binary container) in *bytes. Errors name
// the node whose attribute the format cannot hold.
Status ExportGeGraph(const ModelIr& ir, const std::string& name,
                     std::string* bytes);

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_GE_GRAPH_IMPORT_H_
