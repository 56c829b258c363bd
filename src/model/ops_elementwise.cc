// Element-wise operators on ATen: unary maths and activations, binary
// arithmetic and comparisons with ONNX (numpy) broadcasting, variadic
// Sum/Mean/Max/Min, Where, Clip, Cast.
//
// Thread-safety: see kernels.h.
#include <cmath>
#include <limits>

#include "model/kernels.h"

namespace hflow {
namespace model {
namespace {

using UnaryFn = at::Tensor (*)(const at::Tensor&);

template <UnaryFn F>
Status Unary(const IrNode& n, Kernel* k) {
  *k = [](const Tensors& in, Tensors* out) { (*out)[0] = F(in[0]); };
  return Status::OK();
}

at::Tensor IdentityOf(const at::Tensor& x) { return x; }
at::Tensor ReluOf(const at::Tensor& x) { return at::relu(x); }
at::Tensor SigmoidOf(const at::Tensor& x) { return at::sigmoid(x); }
at::Tensor TanhOf(const at::Tensor& x) { return at::tanh(x); }
at::Tensor ExpOf(const at::Tensor& x) { return at::exp(x); }
at::Tensor LogOf(const at::Tensor& x) { return at::log(x); }
at::Tensor SqrtOf(const at::Tensor& x) { return at::sqrt(x); }
at::Tensor NegOf(const at::Tensor& x) { return at::neg(x); }
at::Tensor AbsOf(const at::Tensor& x) { return at::abs(x); }
at::Tensor ReciprocalOf(const at::Tensor& x) { return at::reciprocal(x); }
at::Tensor ErfOf(const at::Tensor& x) { return at::erf(x); }
at::Tensor FloorOf(const at::Tensor& x) { return at::floor(x); }
at::Tensor CeilOf(const at::Tensor& x) { return at::ceil(x); }
at::Tensor RoundOf(const at::Tensor& x) { return at::round(x); }
at::Tensor SignOf(const at::Tensor& x) { return at::sign(x); }
at::Tensor SinOf(const at::Tensor& x) { return at::sin(x); }
at::Tensor CosOf(const at::Tensor& x) { return at::cos(x); }
at::Tensor NotOf(const at::Tensor& x) { return at::logical_not(x); }
at::Tensor IsNaNOf(const at::Tensor& x) { return at::isnan(x); }
at::Tensor SoftplusOf(const at::Tensor& x) { return at::softplus(x); }
at::Tensor SoftsignOf(const at::Tensor& x) { return x / (at::abs(x) + 1); }
at::Tensor HardSwishOf(const at::Tensor& x) { return at::hardswish(x); }

using BinaryFn = at::Tensor (*)(const at::Tensor&, const at::Tensor&);

template <BinaryFn F>
Status Binary(const IrNode& n, Kernel* k) {
  if (n.inputs.size() != 2) return NodeError(n, "needs 2 inputs");
  *k = [](const Tensors& in, Tensors* out) { (*out)[0] = F(in[0], in[1]); };
  return Status::OK();
}

at::Tensor AddOf(const at::Tensor& a, const at::Tensor& b) {
  return at::add(a, b);
}
at::Tensor SubOf(const at::Tensor& a, const at::Tensor& b) {
  return at::sub(a, b);
}
at::Tensor MulOf(const at::Tensor& a, const at::Tensor& b) {
  return at::mul(a, b);
}
// ONNX divides integers as C does (towards zero); ATen's true division
// would give floats.
at::Tensor DivOf(const at::Tensor& a, const at::Tensor& b) {
  if (at::isIntegralType(a.scalar_type(), /*includeBool=*/false)) {
    return at::div(a, b, "trunc");
  }
  return at::div(a, b);
}
// ONNX's Pow keeps the base's type.
at::Tensor PowOf(const at::Tensor& a, const at::Tensor& b) {
  return at::pow(a, b).to(a.scalar_type());
}
at::Tensor EqualOf(const at::Tensor& a, const at::Tensor& b) {
  return at::eq(a, b);
}
at::Tensor LessOf(const at::Tensor& a, const at::Tensor& b) {
  return at::lt(a, b);
}
at::Tensor LessEqOf(const at::Tensor& a, const at::Tensor& b) {
  return at::le(a, b);
}
at::Tensor GreaterOf(const at::Tensor& a, const at::Tensor& b) {
  return at::gt(a, b);
}
at::Tensor GreaterEqOf(const at::Tensor& a, const at::Tensor& b) {
  return at::ge(a, b);
}
at::Tensor AndOf(const at::Tensor& a, const at::Tensor& b) {
  return at::logical_and(a, b);
}
at::Tensor OrOf(const at::Tensor& a, const at::Tensor& b) {
  return at::logical_or(a, b);
}
at::Tensor XorOf(const at::Tensor& a, const at::Tensor& b) {
  return at::logical_xor(a, b);
}
at::Tensor PReluOf(const at::Tensor& x, const at::Tensor& slope) {
  return at::where(x >= 0, x, x * slope);
}

// Sum, Mean, Max, Min: any number of inputs, broadcast together.
template <BinaryFn F, bool kMean>
Status Variadic(const IrNode& n, Kernel* k) {
  if (n.inputs.empty()) return NodeError(n, "needs at least one input");
  *k = [](const Tensors& in, Tensors* out) {
    at::Tensor acc = in[0];
    for (size_t i = 1; i < in.size(); ++i) acc = F(acc, in[i]);
    if (kMean) acc = acc / static_cast<double>(in.size());
    (*out)[0] = acc;
  };
  return Status::OK();
}
at::Tensor MaxOf(const at::Tensor& a, const at::Tensor& b) {
  return at::maximum(a, b);
}
at::Tensor MinOf(const at::Tensor& a, const at::Tensor& b) {
  return at::minimum(a, b);
}

Status Mod(const IrNode& n, Kernel* k) {
  int64_t fmod = 0;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "fmod", 0, &fmod));
  *k = [fmod](const Tensors& in, Tensors* out) {
    (*out)[0] = fmod ? at::fmod(in[0], in[1]) : at::remainder(in[0], in[1]);
  };
  return Status::OK();
}

Status Where(const IrNode& n, Kernel* k) {
  if (n.inputs.size() != 3) return NodeError(n, "needs 3 inputs");
  *k = [](const Tensors& in, Tensors* out) {
    (*out)[0] = at::where(in[0].to(at::kBool), in[1], in[2]);
  };
  return Status::OK();
}

Status LeakyRelu(const IrNode& n, Kernel* k) {
  double alpha = 0;
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "alpha", 0.01, &alpha));
  *k = [alpha](const Tensors& in, Tensors* out) {
    (*out)[0] = at::leaky_relu(in[0], alpha);
  };
  return Status::OK();
}

Status Elu(const IrNode& n, Kernel* k) {
  double alpha = 0;
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "alpha", 1.0, &alpha));
  *k = [alpha](const Tensors& in, Tensors* out) {
    (*out)[0] = at::elu(in[0], alpha);
  };
  return Status::OK();
}

Status HardSigmoid(const IrNode& n, Kernel* k) {
  double alpha = 0, beta = 0;
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "alpha", 0.2, &alpha));
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "beta", 0.5, &beta));
  *k = [alpha, beta](const Tensors& in, Tensors* out) {
    (*out)[0] = at::clamp(in[0] * alpha + beta, 0.0, 1.0);
  };
  return Status::OK();
}

// Clip: bounds as optional inputs (opset 11 on) or attributes (before).
Status Clip(const IrNode& n, Kernel* k) {
  double lo = 0, hi = 0;
  const bool has_lo = HasAttr(n, "min"), has_hi = HasAttr(n, "max");
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "min", 0, &lo));
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "max", 0, &hi));
  *k = [=](const Tensors& in, Tensors* out) {
    at::Tensor y = in[0];
    if (in.size() > 1 && in[1].defined()) {
      y = at::clamp_min(y, in[1].item());
    } else if (has_lo) {
      y = at::clamp_min(y, lo);
    }
    if (in.size() > 2 && in[2].defined()) {
      y = at::clamp_max(y, in[2].item());
    } else if (has_hi) {
      y = at::clamp_max(y, hi);
    }
    (*out)[0] = y;
  };
  return Status::OK();
}

// ONNX's TensorProto element type numbers.
Status OnnxType(const IrNode& n, int64_t onnx, at::ScalarType* out) {
  switch (onnx) {
    case 1:
      *out = at::kFloat;
      return Status::OK();
    case 2:
      *out = at::kByte;
      return Status::OK();
    case 3:
      *out = at::kChar;
      return Status::OK();
    case 5:
      *out = at::kShort;
      return Status::OK();
    case 6:
      *out = at::kInt;
      return Status::OK();
    case 7:
      *out = at::kLong;
      return Status::OK();
    case 9:
      *out = at::kBool;
      return Status::OK();
    case 10:
      *out = at::kHalf;
      return Status::OK();
    case 11:
      *out = at::kDouble;
      return Status::OK();
    case 16:
      *out = at::kBFloat16;
      return Status::OK();
    default:
      return NodeError(n, "attribute 'to': element type " +
                              std::to_string(onnx) + " is not supported");
  }
}

Status Cast(const IrNode& n, Kernel* k) {
  int64_t to = 0;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "to", -1, &to));
  at::ScalarType t = at::ScalarType::Undefined;
  HFLOW_RETURN_IF_ERROR(OnnxType(n, to, &t));
  *k = [t](const Tensors& in, Tensors* out) { (*out)[0] = in[0].to(t); };
  return Status::OK();
}

// Dropout at inference: the input, and a mask of ones when asked.
Status Dropout(const IrNode& n, Kernel* k) {
  *k = [](const Tensors& in, Tensors* out) {
    (*out)[0] = in[0];
    if (out->size() > 1) (*out)[1] = at::ones_like(in[0], at::kBool);
  };
  return Status::OK();
}

}  // namespace

void AddElementwiseKernels(KernelTable* t) {
  const char* g = "elementwise";
  (*t)["Identity"] = {Unary<IdentityOf>, g};
  (*t)["Relu"] = {Unary<ReluOf>, g};
  (*t)["Sigmoid"] = {Unary<SigmoidOf>, g};
  (*t)["Tanh"] = {Unary<TanhOf>, g};
  (*t)["Exp"] = {Unary<ExpOf>, g};
  (*t)["Log"] = {Unary<LogOf>, g};
  (*t)["Sqrt"] = {Unary<SqrtOf>, g};
  (*t)["Neg"] = {Unary<NegOf>, g};
  (*t)["Abs"] = {Unary<AbsOf>, g};
  (*t)["Reciprocal"] = {Unary<ReciprocalOf>, g};
  (*t)["Erf"] = {Unary<ErfOf>, g};
  (*t)["Floor"] = {Unary<FloorOf>, g};
  (*t)["Ceil"] = {Unary<CeilOf>, g};
  (*t)["Round"] = {Unary<RoundOf>, g};
  (*t)["Sign"] = {Unary<SignOf>, g};
  (*t)["Sin"] = {Unary<SinOf>, g};
  (*t)["Cos"] = {Unary<CosOf>, g};
  (*t)["Not"] = {Unary<NotOf>, g};
  (*t)["IsNaN"] = {Unary<IsNaNOf>, g};
  (*t)["Softplus"] = {Unary<SoftplusOf>, g};
  (*t)["Softsign"] = {Unary<SoftsignOf>, g};
  (*t)["HardSwish"] = {Unary<HardSwishOf>, g};
  (*t)["Add"] = {Binary<AddOf>, g};
  (*t)["Sub"] = {Binary<SubOf>, g};
  (*t)["Mul"] = {Binary<MulOf>, g};
  (*t)["Div"] = {Binary<DivOf>, g};
  (*t)["Pow"] = {Binary<PowOf>, g};
  (*t)["Equal"] = {Binary<EqualOf>, g};
  (*t)["Less"] = {Binary<LessOf>, g};
  (*t)["LessOrEqual"] = {Binary<LessEqOf>, g};
  (*t)["Greater"] = {Binary<GreaterOf>, g};
  (*t)["GreaterOrEqual"] = {Binary<GreaterEqOf>, g};
  (*t)["And"] = {Binary<AndOf>, g};
  (*t)["Or"] = {Binary<OrOf>, g};
  (*t)["Xor"] = {Binary<XorOf>, g};
  (*t)["PRelu"] = {Binary<PReluOf>, g};
  (*t)["Sum"] = {Variadic<AddOf, false>, g};
  (*t)["Mean"] = {Variadic<AddOf, true>, g};
  (*t)["Max"] = {Variadic<MaxOf, false>, g};
  (*t)["Min"] = {Variadic<MinOf, false>, g};
  (*t)["Mod"] = {Mod, g};
  (*t)["Where"] = {Where, g};
  (*t)["LeakyRelu"] = {LeakyRelu, g};
  (*t)["Elu"] = {Elu, g};
  (*t)["HardSigmoid"] = {HardSigmoid, g};
  (*t)["Clip"] = {Clip, g};
  (*t)["Cast"] = {Cast, g};
  (*t)["Dropout"] = {Dropout, g};
}

}  // namespace model
}  // namespace hflow
