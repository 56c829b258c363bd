// Internal to the GE-operator lowering (ge_ops.h): the helper each lowering
// function works through, and the tables' registration functions
// (element-wise operators in ge_ops.cc, neural-network operators in
// ge_ops_nn.cc, shape and reduction operators in ge_ops_shape.cc, indexing
// operators in ge_ops_slice.cc). The helper's code is ge_ops_lower.cc.
//
// A Lowering reads one GeOp by GE's names (inputs by registered name, so
// a graph that registered them in another order still lowers; attributes
// with GE's defaults when absent) and appends IR nodes and constants,
// naming every value it adds "<op name>/<what>" so that names from
// different ops never clash.
//
// Thread-safety: a Lowering is used by one thread; the tables are
// immutable once built.
#ifndef HFLOW_MODEL_GE_OPS_LOWER_H_
#define HFLOW_MODEL_GE_OPS_LOWER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hflow/status.h"
#include "model/ge_ops.h"
#include "model/ir.h"

namespace hflow {
namespace model {
namespace ge_lower {

using Attrs = std::map<std::string, IrAttr>;

class Lowering {
 public:
  Lowering(const GeOp& op, ModelIr* ir) : op_(op), ir_(ir) {}

  const GeOp& op() const { return op_; }

  // "op 'name' (Type): <what>" as InvalidArgument / NotSupported.
  Status Error(const std::string& what) const;
  Status Unsupported(const std::string& what) const;

  // The value linked to input `name`; "" when not linked (or the op has
  // no input of that name).
  std::string In(const char* name) const;
  // As In, an error naming the input when it is not linked.
  Status Need(const char* name, std::string* value) const;
  // The values of dynamic input `name` (name0, name1, ...), in order; an
  // error when there are none or one is not linked.
  Status Dynamic(const char* name, std::vector<std::string>* values) const;
  // Output `index`'s value name; an error when the op has no such output.
  Status Out(size_t index, std::string* value) const;
  size_t OutputCount() const { return op_.outputs.size(); }

  // Attributes: the value, or `def` when absent; an attribute of another
  // kind is an error naming it. Bool accepts GE's bool (an int 0/1).
  Status Int(const char* name, int64_t def, int64_t* out) const;
  Status Bool(const char* name, bool def, bool* out) const;
  Status Float(const char* name, double def, double* out) const;
  Status Str(const char* name, const std::string& def, std::string* out) const;
  Status Ints(const char* name, const std::vector<int64_t>& def,
              std::vector<int64_t>* out) const;
  // A REQUIRED_ATTR: an error naming it when absent.
  Status RequiredInt(const char* name, int64_t* out) const;
  Status RequiredInts(const char* name, std::vector<int64_t>* out) const;
  Status RequiredStr(const char* name, std::string* out) const;
  // A list attribute of exactly `n` entries (`def` when absent; empty
  // `def` makes it required); `what` says what the entries are.
  Status IntsOfSize(const char* name, size_t n, const std::vector<int64_t>& def,
                    const char* what, std::vector<int64_t>* out) const;

  // The constant (a Const op's value) named `value`, or null.
  const IrTensor* Constant(const std::string& value) const;
  // The integers of input `name`, which must be a Const op's int32/int64
  // value (the IR takes it as an attribute).
  Status ConstInts(const char* name, std::vector<int64_t>* out) const;
  // As ConstInts, for a Const of one integer (an axis).
  Status ConstInt(const char* name, int64_t* out) const;
  // The rank of `value` when the graph fixes it (a model input with a
  // shape, or a constant); -1 otherwise.
  int64_t RankOf(const std::string& value) const;

  // "<op name>/<suffix>": an intermediate value or constant of this op.
  std::string Tmp(const std::string& suffix) const;
  // Adds constant Tmp(suffix); returns its name.
  std::string AddConst(const std::string& suffix, IrTensor t);
  // A 1-D int64 constant.
  std::string AddInts(const std::string& suffix, const std::vector<int64_t>& v);
  // A 0-D float32 constant (ATen lets a 0-D operand keep the other
  // operand's float type, so float16 graphs stay float16).
  std::string AddScalar(const std::string& suffix, float v);

  // Appends IR node `type` reading `inputs` and writing `outputs`.
  void Emit(const std::string& type, std::vector<std::string> inputs,
            std::vector<std::string> outputs, Attrs attrs = {});
  // One output `out`; returns it.
  std::string Emit1(const std::string& type, std::vector<std::string> inputs,
                    const std::string& out, Attrs attrs = {});

 private:
  int Index(const std::string& name) const;
  const IrAttr* Find(const char* name) const;
  Status Kind(const char* name, IrAttr::Kind kind, const char* what,
              const IrAttr** out) const;

  const GeOp& op_;
  ModelIr* ir_;
};

// ONNX's element type number (Cast's "to") for GE's DT_* number
// `ge_type`, read from attribute `attr` of `l`'s op.
Status OnnxTypeOf(const Lowering& l, const char* attr, int64_t ge_type,
                  int64_t* onnx);

// A lowering function: appends `l`'s op as IR nodes.
using LowerFn = Status (*)(Lowering* l);
using LowerTable = std::map<std::string, LowerFn>;

void AddElementwiseLowerings(LowerTable* table);  // ge_ops.cc
void AddNnLowerings(LowerTable* table);           // ge_ops_nn.cc
void AddShapeLowerings(LowerTable* table);        // ge_ops_shape.cc
void AddSliceLowerings(LowerTable* table);        // ge_ops_slice.cc

}  // namespace ge_lower
}  // namespace model
}  // namespace hflow

#endif  // HFLOW_MODEL_GE_OPS_LOWER_H_
