// GE's operators (the types include/op_proto/all_ops.h declares, with GE's
// input, output and attribute names) lowered onto the model IR's
// ONNX-named operators. The GE-graph front-end (ge_graph_import.h) reads a
// graph file, turns Data and Const ops into the IR's inputs and constants
// itself, and hands every other op to LowerGeOp.
//
// Thread-safety: reentrant (the table is immutable after first use).
#ifndef HFLOW_MODEL_GE_OPS_H_
#define HFLOW_MODEL_GE_OPS_H_

#include <map>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "model/ir.h"

namespace hflow {
namespace model {

// One operator of a GE graph, as the graph file gives it.
struct GeOp {
  std::string name;  // the node's name
  std::string type;  // GE's op type ("Conv2D")
  // The registered input names in index order (a dynamic input "x" of n
  // entries is "x0".."x<n-1>", as ge::Operator registers it).
  std::vector<std::string> input_names;
  // The IR value feeding each input index; "" where the input is not
  // linked (an optional input left out).
  std::vector<std::string> inputs;
  // The IR value name of each output index (registered output order).
  std::vector<std::string> outputs;
  // GE attributes: int and bool as kInt (bool 0/1), float as kFloat,
  // string as kString, list int as kInts, list float as kFloats, a
  // DataType as kInt holding GE's DT_* number, a tensor as kTensor.
  std::map<std::string, IrAttr> attrs;
  // "op 'name' (Conv2D)" for messages.
  std::string Describe() const;
};

// Appends the IR nodes (and any constants they need, named after `op`)
// that compute `op`'s outputs into the values op.outputs names. Errors
// name the op and the input or attribute, and what GE expects.
Status LowerGeOp(const GeOp& op, ModelIr* ir);

// Whether LowerGeOp knows `type`.
bool IsGeOperator(const std::string& type);

// The GE operator types LowerGeOp knows, sorted (the user guide's table).
std::vector<std::string> GeOperators();

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_GE_OPS_H_
