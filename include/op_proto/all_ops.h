// GE's operator prototypes (namespace ge::op) for the operators hflow's
// model executor runs, with GE's names: the op types, inputs and outputs
// in GE's order, attributes and their defaults (set at construction, so a
// saved graph carries them). GE graphs built from these classes run as
// GraphPp nodes of a DataFlow graph and through ge::Session::RunGraph;
// the user guide's "Model nodes" section lists the operators and how
// each maps onto the executor's.
//
// Each class follows GE's generated prototypes: constructors from a name
// (const char* or AscendString) and a default one; set_input_<name>(src[,
// output name or index]) links an input; for a dynamic input,
// create_dynamic_input_<name>(n) makes entries <name>0..<name>n-1 and
// set_dynamic_input_<name>(i, src[, output]) links one;
// create_dynamic_output_<name>(n) makes dynamic outputs;
// set_attr_<name>(value) sets an attribute. Setters return the operator
// for chaining. Optional inputs are registered like the others and left
// unlinked when not set.
//
// Thread-safety: as ge::Operator.
#ifndef HFLOW_GE_OP_PROTO_ALL_OPS_H_
#define HFLOW_GE_OP_PROTO_ALL_OPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/ascend_string.h"
#include "graph/operator.h"
#include "graph/tensor.h"
#include "graph/types.h"

namespace ge {
namespace op {

typedef std::vector<int64_t> ListInt;
typedef std::vector<float> ListFloat;

// A registration token. Each HFLOW_GE_INPUT, _OUTPUT and _ATTR item of a
// class below declares one as a private member whose initializer registers
// the input or output, or sets the attribute's default, when the operator
// is constructed; members initialize in declaration order, so the items
// register in the order the class lists them (GE's). The constructor is
// user-provided so that compilers do not take the members for unused.
class OpItem {
 public:
  OpItem() {}
};

// The name of entry `index` of dynamic input or output `name`.
inline std::string DynamicName(const char* name, uint32_t index) {
  return std::string(name) + std::to_string(index);
}

// Opens an operator class: GE's three constructors. Ends with a member
// declaration, as every item below, so that each takes a semicolon.
#define HFLOW_GE_OP(Op)                                                      \
 public:                                                                     \
  explicit Op(const char* name) : Operator(name, #Op) {}                     \
  explicit Op(const AscendString& name) : Operator(name.GetString(), #Op) {} \
  Op() : Operator(#Op) {}                                                    \
                                                                             \
 private:                                                                    \
  typedef Op ThisOp

#define HFLOW_GE_INPUT(x)                                              \
 public:                                                               \
  ThisOp& set_input_##x(const Operator& src) {                         \
    SetInput(#x, src);                                                 \
    return *this;                                                      \
  }                                                                    \
  ThisOp& set_input_##x(const Operator& src, const char* src_output) { \
    SetInput(#x, src, src_output);                                     \
    return *this;                                                      \
  }                                                                    \
  ThisOp& set_input_##x(const Operator& src, uint32_t src_index) {     \
    SetInput(#x, src, src_index);                                      \
    return *this;                                                      \
  }                                                                    \
                                                                       \
 private:                                                              \
  OpItem input_##x##_ = (InputRegister(#x), OpItem())

// GE inserts entries at the front when is_push_back is false; hflow looks
// inputs up by name, so their position does not matter.
#define HFLOW_GE_DYNAMIC_INPUT(x)                                      \
 public:                                                               \
  ThisOp& create_dynamic_input_##x(uint32_t num,                       \
                                   bool /*is_push_back*/ = true) {     \
    DynamicInputRegister(#x, num);                                     \
    return *this;                                                      \
  }                                                                    \
  ThisOp& set_dynamic_input_##x(uint32_t index, const Operator& src) { \
    SetInput(DynamicName(#x, index).c_str(), src);                     \
    return *this;                                                      \
  }                                                                    \
  ThisOp& set_dynamic_input_##x(uint32_t index, const Operator& src,   \
                                const char* src_output) {              \
    SetInput(DynamicName(#x, index).c_str(), src, src_output);         \
    return *this;                                                      \
  }                                                                    \
  static_assert(true, "")

#define HFLOW_GE_OUTPUT(y) \
 private:                  \
  OpItem output_##y##_ = (OutputRegister(#y), OpItem())

#define HFLOW_GE_DYNAMIC_OUTPUT(y)                                  \
 public:                                                            \
  ThisOp& create_dynamic_output_##y(uint32_t num,                   \
                                    bool /*is_push_back*/ = true) { \
    DynamicOutputRegister(#y, num);                                 \
    return *this;                                                   \
  }                                                                 \
  static_assert(true, "")

// An attribute of C++ type `Type` without a default (GE's REQUIRED_ATTR).
#define HFLOW_GE_REQUIRED_ATTR(x, Type)     \
 public:                                    \
  ThisOp& set_attr_##x(const Type& value) { \
    SetAttr(#x, value);                     \
    return *this;                           \
  }                                         \
  static_assert(true, "")

// An attribute with GE's default (the remaining arguments, brace-
// initializing a `Type`; none for an empty list).
#define HFLOW_GE_ATTR(x, Type, ...) \
  HFLOW_GE_REQUIRED_ATTR(x, Type);  \
                                    \
 private:                           \
  OpItem attr_##x##_ = (SetAttr(#x, Type{__VA_ARGS__}), OpItem())

#define HFLOW_GE_REQUIRED_STRING_ATTR(x)           \
 public:                                           \
  ThisOp& set_attr_##x(const char* value) {        \
    SetAttr(#x, value);                            \
    return *this;                                  \
  }                                                \
  ThisOp& set_attr_##x(const std::string& value) { \
    SetAttr(#x, value.c_str());                    \
    return *this;                                  \
  }                                                \
  static_assert(true, "")

#define HFLOW_GE_STRING_ATTR(x, def) \
  HFLOW_GE_REQUIRED_STRING_ATTR(x);  \
                                     \
 private:                            \
  OpItem attr_##x##_ = (SetAttr(#x, def), OpItem())

class Data : public Operator {
  HFLOW_GE_OP(Data);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(index, int64_t, 0);
};

// GE's default value is an empty tensor; a Const is always given one.
class Const : public Operator {
  HFLOW_GE_OP(Const);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(value, Tensor);
};

// An operator with input x and output y.
template <typename Self>
class UnaryOp : public Operator {
 public:
  UnaryOp(const char* name, const char* type) : Operator(name, type) {
    InputRegister("x");
    OutputRegister("y");
  }
  explicit UnaryOp(const char* type) : UnaryOp(type, type) {}
  Self& set_input_x(const Operator& src) {
    SetInput("x", src);
    return static_cast<Self&>(*this);
  }
  Self& set_input_x(const Operator& src, const char* src_output) {
    SetInput("x", src, src_output);
    return static_cast<Self&>(*this);
  }
  Self& set_input_x(const Operator& src, uint32_t src_index) {
    SetInput("x", src, src_index);
    return static_cast<Self&>(*this);
  }
};

// An operator with inputs x1 and x2 and output y.
template <typename Self>
class BinaryOp : public Operator {
 public:
  BinaryOp(const char* name, const char* type) : Operator(name, type) {
    InputRegister("x1");
    InputRegister("x2");
    OutputRegister("y");
  }
  explicit BinaryOp(const char* type) : BinaryOp(type, type) {}
  Self& set_input_x1(const Operator& src) {
    SetInput("x1", src);
    return static_cast<Self&>(*this);
  }
  Self& set_input_x1(const Operator& src, const char* src_output) {
    SetInput("x1", src, src_output);
    return static_cast<Self&>(*this);
  }
  Self& set_input_x1(const Operator& src, uint32_t src_index) {
    SetInput("x1", src, src_index);
    return static_cast<Self&>(*this);
  }
  Self& set_input_x2(const Operator& src) {
    SetInput("x2", src);
    return static_cast<Self&>(*this);
  }
  Self& set_input_x2(const Operator& src, const char* src_output) {
    SetInput("x2", src, src_output);
    return static_cast<Self&>(*this);
  }
  Self& set_input_x2(const Operator& src, uint32_t src_index) {
    SetInput("x2", src, src_index);
    return static_cast<Self&>(*this);
  }
};

#define HFLOW_GE_UNARY_OP(Op)                                 \
  class Op : public UnaryOp<Op> {                             \
   public:                                                    \
    explicit Op(const char* name) : UnaryOp<Op>(name, #Op) {} \
    explicit Op(const AscendString& name)                     \
        : UnaryOp<Op>(name.GetString(), #Op) {}               \
    Op() : UnaryOp<Op>(#Op) {}                                \
  }

#define HFLOW_GE_BINARY_OP(Op)                                 \
  class Op : public BinaryOp<Op> {                             \
   public:                                                     \
    explicit Op(const char* name) : BinaryOp<Op>(name, #Op) {} \
    explicit Op(const AscendString& name)                      \
        : BinaryOp<Op>(name.GetString(), #Op) {}               \
    Op() : BinaryOp<Op>(#Op) {}                                \
  }

// The operators, by GE type.
HFLOW_GE_UNARY_OP(Abs);
class AdaptiveAvgPool2d : public Operator {
  HFLOW_GE_OP(AdaptiveAvgPool2d);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(output_size, ListInt);
};
HFLOW_GE_BINARY_OP(Add);
class AddN : public Operator {
  HFLOW_GE_OP(AddN);
  HFLOW_GE_DYNAMIC_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(N, int64_t);
};
HFLOW_GE_BINARY_OP(AddV2);
class ArgMaxD : public Operator {
  HFLOW_GE_OP(ArgMaxD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(dimension, int64_t);
  HFLOW_GE_ATTR(dtype, DataType, DT_INT64);
};
class ArgMaxV2 : public Operator {
  HFLOW_GE_OP(ArgMaxV2);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(dimension);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(dtype, DataType, DT_INT64);
};
class ArgMin : public Operator {
  HFLOW_GE_OP(ArgMin);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(dimension);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(dtype, DataType, DT_INT64);
};
class ArgMinD : public Operator {
  HFLOW_GE_OP(ArgMinD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(dimension, int64_t);
  HFLOW_GE_ATTR(dtype, DataType, DT_INT64);
};
class AvgPool : public Operator {
  HFLOW_GE_OP(AvgPool);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(ksize, ListInt);
  HFLOW_GE_REQUIRED_ATTR(strides, ListInt);
  HFLOW_GE_REQUIRED_STRING_ATTR(padding);
  HFLOW_GE_STRING_ATTR(data_format, "NHWC");
};
class AvgPoolV2 : public Operator {
  HFLOW_GE_OP(AvgPoolV2);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(ksize, ListInt);
  HFLOW_GE_REQUIRED_ATTR(strides, ListInt);
  HFLOW_GE_STRING_ATTR(padding_mode, "CALCULATED");
  HFLOW_GE_ATTR(pads, ListInt, 0, 0, 0, 0);
  HFLOW_GE_STRING_ATTR(data_format, "NCHW");
  HFLOW_GE_ATTR(global_pooling, bool, false);
  HFLOW_GE_ATTR(ceil_mode, bool, false);
  HFLOW_GE_ATTR(exclusive, bool, true);
  HFLOW_GE_ATTR(divisor_override, int64_t, 0);
};
class BatchMatMul : public Operator {
  HFLOW_GE_OP(BatchMatMul);
  HFLOW_GE_INPUT(x1);
  HFLOW_GE_INPUT(x2);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(adj_x1, bool, false);
  HFLOW_GE_ATTR(adj_x2, bool, false);
};
class BatchMatMulV2 : public Operator {
  HFLOW_GE_OP(BatchMatMulV2);
  HFLOW_GE_INPUT(x1);
  HFLOW_GE_INPUT(x2);
  HFLOW_GE_INPUT(bias);      // optional
  HFLOW_GE_INPUT(offset_w);  // optional
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(adj_x1, bool, false);
  HFLOW_GE_ATTR(adj_x2, bool, false);
  HFLOW_GE_ATTR(offset_x, int64_t, 0);
};
class BatchNorm : public Operator {
  HFLOW_GE_OP(BatchNorm);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(scale);
  HFLOW_GE_INPUT(offset);
  HFLOW_GE_INPUT(mean);      // optional
  HFLOW_GE_INPUT(variance);  // optional
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_OUTPUT(batch_mean);
  HFLOW_GE_OUTPUT(batch_variance);
  HFLOW_GE_OUTPUT(reserve_space_1);
  HFLOW_GE_OUTPUT(reserve_space_2);
  HFLOW_GE_OUTPUT(reserve_space_3);
  HFLOW_GE_ATTR(epsilon, float, 0.0001f);
  HFLOW_GE_STRING_ATTR(data_format, "NHWC");
  HFLOW_GE_ATTR(is_training, bool, true);
  HFLOW_GE_ATTR(exponential_avg_factor, float, 1.0f);
};
class BiasAdd : public Operator {
  HFLOW_GE_OP(BiasAdd);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(bias);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_STRING_ATTR(data_format, "NHWC");
};
class BroadcastTo : public Operator {
  HFLOW_GE_OP(BroadcastTo);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(shape);
  HFLOW_GE_OUTPUT(y);
};
class BroadcastToD : public Operator {
  HFLOW_GE_OP(BroadcastToD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(shape, ListInt);
};
class Cast : public Operator {
  HFLOW_GE_OP(Cast);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(dst_type, int64_t);
};
HFLOW_GE_UNARY_OP(Ceil);
class ClipByValue : public Operator {
  HFLOW_GE_OP(ClipByValue);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(clip_value_min);
  HFLOW_GE_INPUT(clip_value_max);
  HFLOW_GE_OUTPUT(y);
};
class Concat : public Operator {
  HFLOW_GE_OP(Concat);
  HFLOW_GE_INPUT(concat_dim);
  HFLOW_GE_DYNAMIC_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(N, int64_t, 1);
};
class ConcatD : public Operator {
  HFLOW_GE_OP(ConcatD);
  HFLOW_GE_DYNAMIC_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(concat_dim, int64_t);
  HFLOW_GE_ATTR(N, int64_t, 1);
};
class ConcatV2 : public Operator {
  HFLOW_GE_OP(ConcatV2);
  HFLOW_GE_DYNAMIC_INPUT(x);
  HFLOW_GE_INPUT(concat_dim);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(N, int64_t, 1);
};
class ConcatV2D : public Operator {
  HFLOW_GE_OP(ConcatV2D);
  HFLOW_GE_DYNAMIC_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(concat_dim, int64_t);
  HFLOW_GE_ATTR(N, int64_t, 1);
};
class Conv2D : public Operator {
  HFLOW_GE_OP(Conv2D);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(filter);
  HFLOW_GE_INPUT(bias);      // optional
  HFLOW_GE_INPUT(offset_w);  // optional
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(strides, ListInt);
  HFLOW_GE_REQUIRED_ATTR(pads, ListInt);
  HFLOW_GE_ATTR(dilations, ListInt, 1, 1, 1, 1);
  HFLOW_GE_ATTR(groups, int64_t, 1);
  HFLOW_GE_STRING_ATTR(data_format, "NHWC");
  HFLOW_GE_ATTR(offset_x, int64_t, 0);
};
HFLOW_GE_UNARY_OP(Cos);
class DepthwiseConv2D : public Operator {
  HFLOW_GE_OP(DepthwiseConv2D);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(filter);
  HFLOW_GE_INPUT(bias);      // optional
  HFLOW_GE_INPUT(offset_w);  // optional
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(strides, ListInt);
  HFLOW_GE_ATTR(dilations, ListInt, 1, 1, 1, 1);
  HFLOW_GE_REQUIRED_ATTR(pads, ListInt);
  HFLOW_GE_STRING_ATTR(data_format, "NHWC");
  HFLOW_GE_ATTR(offset_x, int64_t, 0);
};
HFLOW_GE_BINARY_OP(Div);
class Elu : public Operator {
  HFLOW_GE_OP(Elu);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(alpha, float, 1.0f);
  HFLOW_GE_ATTR(scale, float, 1.0f);
  HFLOW_GE_ATTR(input_scale, float, 1.0f);
};
HFLOW_GE_BINARY_OP(Equal);
HFLOW_GE_UNARY_OP(Erf);
class Exp : public Operator {
  HFLOW_GE_OP(Exp);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(base, float, -1.0f);
  HFLOW_GE_ATTR(scale, float, 1.0f);
  HFLOW_GE_ATTR(shift, float, 0.0f);
};
class Expand : public Operator {
  HFLOW_GE_OP(Expand);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(shape);
  HFLOW_GE_OUTPUT(y);
};
class ExpandDims : public Operator {
  HFLOW_GE_OP(ExpandDims);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(axis);
  HFLOW_GE_OUTPUT(y);
};
class Fill : public Operator {
  HFLOW_GE_OP(Fill);
  HFLOW_GE_INPUT(dims);
  HFLOW_GE_INPUT(value);
  HFLOW_GE_OUTPUT(y);
};
class Flatten : public Operator {
  HFLOW_GE_OP(Flatten);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axis, int64_t, 1);
};
class FlattenV2 : public Operator {
  HFLOW_GE_OP(FlattenV2);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axis, int64_t, 1);
  HFLOW_GE_ATTR(end_axis, int64_t, -1);
};
HFLOW_GE_UNARY_OP(Floor);
HFLOW_GE_BINARY_OP(FloorMod);
class Gather : public Operator {
  HFLOW_GE_OP(Gather);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(indices);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(validate_indices, bool, true);
  HFLOW_GE_ATTR(batch_dims, int64_t, 0);
  HFLOW_GE_ATTR(is_preprocessed, bool, false);
  HFLOW_GE_ATTR(negative_index_support, bool, false);
};
class GatherV2 : public Operator {
  HFLOW_GE_OP(GatherV2);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(indices);
  HFLOW_GE_INPUT(axis);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(batch_dims, int64_t, 0);
  HFLOW_GE_ATTR(is_preprocessed, bool, false);
  HFLOW_GE_ATTR(negative_index_support, bool, false);
};
class GatherV2D : public Operator {
  HFLOW_GE_OP(GatherV2D);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(indices);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(axis, int64_t);
};
HFLOW_GE_UNARY_OP(Gelu);
HFLOW_GE_UNARY_OP(GlobalAveragePool);
HFLOW_GE_BINARY_OP(Greater);
HFLOW_GE_BINARY_OP(GreaterEqual);
class HardSigmoid : public Operator {
  HFLOW_GE_OP(HardSigmoid);
  HFLOW_GE_INPUT(input_x);
  HFLOW_GE_OUTPUT(output_y);
  HFLOW_GE_ATTR(alpha, float, 0.16666666f);
  HFLOW_GE_ATTR(beta, float, 0.5f);
};
HFLOW_GE_UNARY_OP(HardSwish);
HFLOW_GE_UNARY_OP(Identity);
HFLOW_GE_UNARY_OP(IsNan);
class LayerNorm : public Operator {
  HFLOW_GE_OP(LayerNorm);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(gamma);
  HFLOW_GE_INPUT(beta);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_OUTPUT(mean);
  HFLOW_GE_OUTPUT(variance);
  HFLOW_GE_ATTR(begin_norm_axis, int64_t, 0);
  HFLOW_GE_ATTR(begin_params_axis, int64_t, 0);
  HFLOW_GE_ATTR(epsilon, float, 0.0000001f);
};
class LeakyRelu : public Operator {
  HFLOW_GE_OP(LeakyRelu);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_ATTR(negative_slope, float, 0.0f);
  HFLOW_GE_OUTPUT(y);
};
HFLOW_GE_BINARY_OP(Less);
HFLOW_GE_BINARY_OP(LessEqual);
class Log : public Operator {
  HFLOW_GE_OP(Log);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(base, float, -1.0f);
  HFLOW_GE_ATTR(scale, float, 1.0f);
  HFLOW_GE_ATTR(shift, float, 0.0f);
};
class LogSoftmaxV2 : public Operator {
  HFLOW_GE_OP(LogSoftmaxV2);
  HFLOW_GE_INPUT(logits);
  HFLOW_GE_OUTPUT(logsoftmax);
  HFLOW_GE_ATTR(axes, ListInt, -1);
};
HFLOW_GE_BINARY_OP(LogicalAnd);
HFLOW_GE_UNARY_OP(LogicalNot);
HFLOW_GE_BINARY_OP(LogicalOr);
class MatMul : public Operator {
  HFLOW_GE_OP(MatMul);
  HFLOW_GE_INPUT(x1);
  HFLOW_GE_INPUT(x2);
  HFLOW_GE_INPUT(bias);  // optional
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(transpose_x1, bool, false);
  HFLOW_GE_ATTR(transpose_x2, bool, false);
};
class MatMulV2 : public Operator {
  HFLOW_GE_OP(MatMulV2);
  HFLOW_GE_INPUT(x1);
  HFLOW_GE_INPUT(x2);
  HFLOW_GE_INPUT(bias);  // optional
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_INPUT(offset_w);  // optional
  HFLOW_GE_ATTR(transpose_x1, bool, false);
  HFLOW_GE_ATTR(transpose_x2, bool, false);
  HFLOW_GE_ATTR(offset_x, int64_t, 0);
};
class MaxPool : public Operator {
  HFLOW_GE_OP(MaxPool);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(ksize, ListInt);
  HFLOW_GE_REQUIRED_ATTR(strides, ListInt);
  HFLOW_GE_REQUIRED_STRING_ATTR(padding);
  HFLOW_GE_STRING_ATTR(data_format, "NHWC");
};
class MaxPoolV3 : public Operator {
  HFLOW_GE_OP(MaxPoolV3);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(ksize, ListInt);
  HFLOW_GE_REQUIRED_ATTR(strides, ListInt);
  HFLOW_GE_STRING_ATTR(padding_mode, "CALCULATED");
  HFLOW_GE_ATTR(pads, ListInt, 0, 0, 0, 0);
  HFLOW_GE_STRING_ATTR(data_format, "NCHW");
  HFLOW_GE_ATTR(global_pooling, bool, false);
  HFLOW_GE_ATTR(ceil_mode, bool, false);
};
HFLOW_GE_BINARY_OP(Maximum);
HFLOW_GE_BINARY_OP(Minimum);
HFLOW_GE_BINARY_OP(Mod);
HFLOW_GE_BINARY_OP(Mul);
HFLOW_GE_UNARY_OP(Neg);
HFLOW_GE_BINARY_OP(NotEqual);
class Pack : public Operator {
  HFLOW_GE_OP(Pack);
  HFLOW_GE_DYNAMIC_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axis, int64_t, 0);
  HFLOW_GE_ATTR(N, int64_t, 1);
};
class Pad : public Operator {
  HFLOW_GE_OP(Pad);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(paddings);
  HFLOW_GE_OUTPUT(y);
};
class PadV2 : public Operator {
  HFLOW_GE_OP(PadV2);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(paddings);
  HFLOW_GE_INPUT(constant_values);
  HFLOW_GE_OUTPUT(y);
};
class PadV3 : public Operator {
  HFLOW_GE_OP(PadV3);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(paddings);
  HFLOW_GE_INPUT(constant_values);  // optional
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_STRING_ATTR(mode, "constant");
  HFLOW_GE_ATTR(paddings_contiguous, bool, true);
};
HFLOW_GE_BINARY_OP(Pow);
class Range : public Operator {
  HFLOW_GE_OP(Range);
  HFLOW_GE_INPUT(start);
  HFLOW_GE_INPUT(limit);
  HFLOW_GE_INPUT(delta);
  HFLOW_GE_OUTPUT(y);
};
HFLOW_GE_BINARY_OP(RealDiv);
HFLOW_GE_UNARY_OP(Reciprocal);
class ReduceMax : public Operator {
  HFLOW_GE_OP(ReduceMax);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(axes);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(keep_dims, bool, false);
};
class ReduceMaxD : public Operator {
  HFLOW_GE_OP(ReduceMaxD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(axes, ListInt);
  HFLOW_GE_ATTR(keep_dims, bool, false);
};
class ReduceMean : public Operator {
  HFLOW_GE_OP(ReduceMean);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(axes);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(keep_dims, bool, false);
  HFLOW_GE_ATTR(noop_with_empty_axes, bool, true);
};
class ReduceMeanD : public Operator {
  HFLOW_GE_OP(ReduceMeanD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(axes, ListInt);
  HFLOW_GE_ATTR(keep_dims, bool, false);
  HFLOW_GE_ATTR(noop_with_empty_axes, bool, false);
};
class ReduceMin : public Operator {
  HFLOW_GE_OP(ReduceMin);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(axes);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(keep_dims, bool, false);
};
class ReduceMinD : public Operator {
  HFLOW_GE_OP(ReduceMinD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(axes, ListInt);
  HFLOW_GE_ATTR(keep_dims, bool, false);
};
class ReduceProd : public Operator {
  HFLOW_GE_OP(ReduceProd);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(axes);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(keep_dims, bool, false);
};
class ReduceProdD : public Operator {
  HFLOW_GE_OP(ReduceProdD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(axes, ListInt);
  HFLOW_GE_ATTR(keep_dims, bool, false);
};
class ReduceSum : public Operator {
  HFLOW_GE_OP(ReduceSum);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(axes);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(keep_dims, bool, false);
};
class ReduceSumD : public Operator {
  HFLOW_GE_OP(ReduceSumD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(axes, ListInt);
  HFLOW_GE_ATTR(keep_dims, bool, false);
};
HFLOW_GE_UNARY_OP(Relu);
HFLOW_GE_UNARY_OP(Relu6);
class Reshape : public Operator {
  HFLOW_GE_OP(Reshape);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(shape);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axis, int64_t, 0);
  HFLOW_GE_ATTR(num_axes, int64_t, -1);
};
HFLOW_GE_UNARY_OP(Rint);
class Round : public Operator {
  HFLOW_GE_OP(Round);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(decimals, int64_t, 0);
};
HFLOW_GE_UNARY_OP(Rsqrt);
class Select : public Operator {
  HFLOW_GE_OP(Select);
  HFLOW_GE_INPUT(condition);
  HFLOW_GE_INPUT(x1);
  HFLOW_GE_INPUT(x2);
  HFLOW_GE_OUTPUT(y);
};
class SelectV2 : public Operator {
  HFLOW_GE_OP(SelectV2);
  HFLOW_GE_INPUT(condition);
  HFLOW_GE_INPUT(then);
  HFLOW_GE_INPUT(else);
  HFLOW_GE_OUTPUT(result);
};
class Shape : public Operator {
  HFLOW_GE_OP(Shape);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(dtype, int64_t, DT_INT32);
};
HFLOW_GE_UNARY_OP(Sigmoid);
HFLOW_GE_UNARY_OP(Sign);
HFLOW_GE_UNARY_OP(Sin);
class Size : public Operator {
  HFLOW_GE_OP(Size);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(dtype, int64_t, DT_INT32);
};
class Slice : public Operator {
  HFLOW_GE_OP(Slice);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(offsets);
  HFLOW_GE_INPUT(size);
  HFLOW_GE_OUTPUT(y);
};
class SliceD : public Operator {
  HFLOW_GE_OP(SliceD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(offsets, ListInt);
  HFLOW_GE_REQUIRED_ATTR(size, ListInt);
};
class SoftmaxV2 : public Operator {
  HFLOW_GE_OP(SoftmaxV2);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axes, ListInt, -1);
  HFLOW_GE_ATTR(half_to_float, bool, false);
};
HFLOW_GE_UNARY_OP(Softplus);
HFLOW_GE_UNARY_OP(Softsign);
class Split : public Operator {
  HFLOW_GE_OP(Split);
  HFLOW_GE_INPUT(split_dim);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_DYNAMIC_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(num_split, int64_t);
};
class SplitD : public Operator {
  HFLOW_GE_OP(SplitD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_DYNAMIC_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(split_dim, int64_t);
  HFLOW_GE_REQUIRED_ATTR(num_split, int64_t);
};
class SplitV : public Operator {
  HFLOW_GE_OP(SplitV);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(size_splits);
  HFLOW_GE_INPUT(split_dim);
  HFLOW_GE_DYNAMIC_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(num_split, int64_t);
};
class SplitVD : public Operator {
  HFLOW_GE_OP(SplitVD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_DYNAMIC_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(size_splits, ListInt);
  HFLOW_GE_REQUIRED_ATTR(split_dim, int64_t);
  HFLOW_GE_REQUIRED_ATTR(num_split, int64_t);
};
HFLOW_GE_UNARY_OP(Sqrt);
HFLOW_GE_UNARY_OP(Square);
HFLOW_GE_BINARY_OP(SquaredDifference);
class Squeeze : public Operator {
  HFLOW_GE_OP(Squeeze);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axis, ListInt, );
};
class SqueezeV2 : public Operator {
  HFLOW_GE_OP(SqueezeV2);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axis, ListInt, );
};
class SqueezeV3 : public Operator {
  HFLOW_GE_OP(SqueezeV3);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(axes);  // optional
  HFLOW_GE_OUTPUT(y);
};
class StridedSlice : public Operator {
  HFLOW_GE_OP(StridedSlice);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(begin);
  HFLOW_GE_INPUT(end);
  HFLOW_GE_INPUT(strides);
  HFLOW_GE_ATTR(begin_mask, int64_t, 0);
  HFLOW_GE_ATTR(end_mask, int64_t, 0);
  HFLOW_GE_ATTR(ellipsis_mask, int64_t, 0);
  HFLOW_GE_ATTR(new_axis_mask, int64_t, 0);
  HFLOW_GE_ATTR(shrink_axis_mask, int64_t, 0);
  HFLOW_GE_OUTPUT(y);
};
class StridedSliceD : public Operator {
  HFLOW_GE_OP(StridedSliceD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(begin, ListInt);
  HFLOW_GE_REQUIRED_ATTR(end, ListInt);
  HFLOW_GE_REQUIRED_ATTR(strides, ListInt);
  HFLOW_GE_ATTR(begin_mask, int64_t, 0);
  HFLOW_GE_ATTR(end_mask, int64_t, 0);
  HFLOW_GE_ATTR(ellipsis_mask, int64_t, 0);
  HFLOW_GE_ATTR(new_axis_mask, int64_t, 0);
  HFLOW_GE_ATTR(shrink_axis_mask, int64_t, 0);
};
HFLOW_GE_BINARY_OP(Sub);
class Swish : public Operator {
  HFLOW_GE_OP(Swish);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(scale, float, 1.0f);
};
HFLOW_GE_UNARY_OP(Tanh);
class Tile : public Operator {
  HFLOW_GE_OP(Tile);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(multiples);
  HFLOW_GE_OUTPUT(y);
};
class TileD : public Operator {
  HFLOW_GE_OP(TileD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(multiples, ListInt);
};
class Transpose : public Operator {
  HFLOW_GE_OP(Transpose);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(perm);
  HFLOW_GE_OUTPUT(y);
};
class TransposeD : public Operator {
  HFLOW_GE_OP(TransposeD);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(perm, ListInt);
};
class Unpack : public Operator {
  HFLOW_GE_OP(Unpack);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_DYNAMIC_OUTPUT(y);
  HFLOW_GE_REQUIRED_ATTR(num, int64_t);
  HFLOW_GE_ATTR(axis, int64_t, 0);
};
class Unsqueeze : public Operator {
  HFLOW_GE_OP(Unsqueeze);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axes, ListInt, );
};
class UnsqueezeV2 : public Operator {
  HFLOW_GE_OP(UnsqueezeV2);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_OUTPUT(y);
  HFLOW_GE_ATTR(axis, ListInt, );
};
class UnsqueezeV3 : public Operator {
  HFLOW_GE_OP(UnsqueezeV3);
  HFLOW_GE_INPUT(x);
  HFLOW_GE_INPUT(axes);
  HFLOW_GE_OUTPUT(y);
};

}  // namespace op
}  // namespace ge

// The item macros are this header's own.
#undef HFLOW_GE_OP
#undef HFLOW_GE_INPUT
#undef HFLOW_GE_DYNAMIC_INPUT
#undef HFLOW_GE_OUTPUT
#undef HFLOW_GE_DYNAMIC_OUTPUT
#undef HFLOW_GE_REQUIRED_ATTR
#undef HFLOW_GE_ATTR
#undef HFLOW_GE_REQUIRED_STRING_ATTR
#undef HFLOW_GE_STRING_ATTR
#undef HFLOW_GE_UNARY_OP
#undef HFLOW_GE_BINARY_OP

#endif  // HFLOW_GE_OP_PROTO_ALL_OPS_H_
