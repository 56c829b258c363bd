// ModelIr: hflow's own model representation, what every front-end (ONNX
// files, TensorFlow GraphDefs, GE graphs) produces and the model executor
// runs. A graph of operator nodes in topological order over named values:
// the model's inputs (typed, dims -1 where dynamic), constant tensors
// (weights) and the nodes' outputs.
//
// Operators take ONNX's names and semantics (opset 17): a front-end maps
// its own operators onto them, as GE's parsers map framework operators
// onto GE's. An optional input is named "" (absent). Attributes keep the
// types ONNX gives them.
//
// No ATen here: front-ends compile without its headers.
//
// Thread-safety: plain values.
#ifndef HFLOW_MODEL_IR_H_
#define HFLOW_MODEL_IR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flow_func/tensor_data_type.h"
#include "hflow/status.h"

namespace hflow {
namespace model {

using DataType = FlowFunc::TensorDataType;

// Bytes of one element (0 for types the executor cannot hold).
size_t ElementSize(DataType t);
// "float32", "int64", ...; "DT_<n>" for others.
std::string DataTypeName(DataType t);
// "[1,3,224,224]" ("?" for a dynamic dim).
std::string ShapeText(const std::vector<int64_t>& dims);

// A constant: dense, row-major, little-endian bytes, held in `bytes` or,
// for a model file's weights, viewed where they lie in the mapped file
// that `mapping` keeps mapped (Note [Weights from the mapped file] in
// onnx_wire.h). Read them through data().
struct IrTensor {
  DataType dtype = DataType::DT_FLOAT;
  std::vector<int64_t> dims;
  std::string bytes;
  std::shared_ptr<const void> mapping;
  std::string_view mapped;
  std::string_view data() const {
    return mapping != nullptr ? mapped : std::string_view(bytes);
  }
  int64_t NumElements() const;  // -1 on a negative dim or overflow
};

struct IrAttr {
  enum class Kind { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor };
  Kind kind = Kind::kInt;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  IrTensor t;
};

struct IrNode {
  std::string op;                    // ONNX operator type ("Conv")
  std::string name;                  // the front-end's node name, for messages
  std::vector<std::string> inputs;   // value names; "" = absent optional
  std::vector<std::string> outputs;  // value names; "" = unused
  std::map<std::string, IrAttr> attrs;
  // "node 'name' (Conv)" for messages.
  std::string Describe() const;
};

struct IrValue {
  std::string name;
  DataType dtype = DataType::DT_FLOAT;
  std::vector<int64_t> dims;  // -1: dynamic
  bool has_shape = true;      // false: rank unknown
};

struct ModelIr {
  std::string source;  // the file (or graph) it came from, for messages
  std::vector<IrValue> inputs;
  std::vector<IrValue> outputs;
  std::vector<std::pair<std::string, IrTensor>> constants;
  std::vector<IrNode> nodes;  // each after the producers of its inputs
};

// Attribute values, as front-ends build them.
IrAttr IntAttr(int64_t v);
IrAttr IntsAttr(std::vector<int64_t> v);
IrAttr FloatAttr(double v);
IrAttr StringAttr(std::string v);
IrAttr TensorAttr(IrTensor t);

// A constant's elements permuted: result dim i is t.dims[perm[i]] (the
// front-ends rearrange constant filters once, at import).
IrTensor Permute(const IrTensor& t, const std::vector<int64_t>& perm);

// Every value used is defined once before its use (an input, a constant or
// an earlier node's output); every output is defined. Errors name the
// source and node.
Status CheckIr(const ModelIr& ir);

}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_IR_H_
