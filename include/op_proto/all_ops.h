// A few of GE's operator prototypes (namespace ge::op), so programs that
// describe model graphs for GraphPp nodes (Data, Const, Add, Sub, Mul,
// Identity, Cast) compile unchanged. They build ge::Graph structure only:
// hflow does not run model graphs yet, and a DataFlow graph with a GraphPp
// node fails at build naming the node.
//
// Each class follows GE's generated prototypes: set_input_<name>(src[,
// output]) links an input, set_attr_<name>(value) sets an attribute, and
// both return the operator for chaining.
//
// Thread-safety: as ge::Operator.
#ifndef HFLOW_GE_OP_PROTO_ALL_OPS_H_
#define HFLOW_GE_OP_PROTO_ALL_OPS_H_

#include <cstdint>

#include "graph/operator.h"
#include "graph/tensor.h"

namespace ge {
namespace op {

class Data : public Operator {
 public:
  explicit Data(const char* name) : Operator(name, "Data") {
    InputRegister("x");
    OutputRegister("y");
    SetAttr("index", static_cast<int64_t>(0));
  }
  Data& set_input_x(const Operator& src) {
    SetInput("x", src);
    return *this;
  }
  Data& set_attr_index(int64_t index) {
    SetAttr("index", index);
    return *this;
  }
};

class Const : public Operator {
 public:
  explicit Const(const char* name) : Operator(name, "Const") {
    OutputRegister("y");
  }
  Const& set_attr_value(const Tensor& value) {
    SetAttr("value", value);
    return *this;
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
  Self& set_input_x1(const Operator& src) {
    SetInput("x1", src);
    return static_cast<Self&>(*this);
  }
  Self& set_input_x1(const Operator& src, const char* src_output) {
    SetInput("x1", src, src_output);
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
};

class Add : public BinaryOp<Add> {
 public:
  explicit Add(const char* name) : BinaryOp<Add>(name, "Add") {}
};
class Sub : public BinaryOp<Sub> {
 public:
  explicit Sub(const char* name) : BinaryOp<Sub>(name, "Sub") {}
};
class Mul : public BinaryOp<Mul> {
 public:
  explicit Mul(const char* name) : BinaryOp<Mul>(name, "Mul") {}
};

class Identity : public Operator {
 public:
  explicit Identity(const char* name) : Operator(name, "Identity") {
    InputRegister("x");
    OutputRegister("y");
  }
  Identity& set_input_x(const Operator& src) {
    SetInput("x", src);
    return *this;
  }
};

class Cast : public Operator {
 public:
  explicit Cast(const char* name) : Operator(name, "Cast") {
    InputRegister("x");
    OutputRegister("y");
  }
  Cast& set_input_x(const Operator& src) {
    SetInput("x", src);
    return *this;
  }
  Cast& set_attr_dst_type(int64_t dst_type) {
    SetAttr("dst_type", dst_type);
    return *this;
  }
};

}  // namespace op
}  // namespace ge

#endif  // HFLOW_GE_OP_PROTO_ALL_OPS_H_
