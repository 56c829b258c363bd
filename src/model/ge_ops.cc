// GE operators → ModelIr (ge_ops.h): the operator table (built from the
// tables of ge_ops_*.cc, see ge_ops_lower.h) and the element-wise
// operators. Most of those are renames (GE's Maximum is ONNX's Max, its
// inputs x1 and x2 ONNX's A and B), listed as data in Renames(); the rest
// compose a few IR operators (Relu6 as Clip, Gelu from Erf, Exp and Log
// with GE's base/scale/shift).
//
// Thread-safety: reentrant; the tables are built once, on first use.
#include "model/ge_ops.h"

#include <cmath>

#include "model/ge_ops_lower.h"

namespace hflow {
namespace model {

std::string GeOp::Describe() const {
  return "op '" + name + "' (" + type + ")";
}

namespace ge_lower {

namespace {

// A GE float attribute that becomes an IR attribute of the same meaning.
struct FloatRename {
  const char* ge;
  double def;  // GE's default
  const char* onnx;
};

// An operator whose IR counterpart has the same meaning: the GE inputs in
// the IR operator's input order.
struct Rename {
  const char* onnx;
  std::vector<const char*> inputs;
  std::vector<FloatRename> floats = {};
};

const std::map<std::string, Rename>& Renames() {
  static const auto* r = new std::map<std::string, Rename>{
      {"Identity", {"Identity", {"x"}}},
      {"Relu", {"Relu", {"x"}}},
      {"Sigmoid", {"Sigmoid", {"x"}}},
      {"Tanh", {"Tanh", {"x"}}},
      {"Sqrt", {"Sqrt", {"x"}}},
      {"Abs", {"Abs", {"x"}}},
      {"Neg", {"Neg", {"x"}}},
      {"Reciprocal", {"Reciprocal", {"x"}}},
      {"Erf", {"Erf", {"x"}}},
      {"Floor", {"Floor", {"x"}}},
      {"Ceil", {"Ceil", {"x"}}},
      {"Rint", {"Round", {"x"}}},  // both round half to even
      {"Sign", {"Sign", {"x"}}},
      {"Sin", {"Sin", {"x"}}},
      {"Cos", {"Cos", {"x"}}},
      {"Softplus", {"Softplus", {"x"}}},
      {"Softsign", {"Softsign", {"x"}}},
      {"HardSwish", {"HardSwish", {"x"}}},
      {"IsNan", {"IsNaN", {"x"}}},
      {"LogicalNot", {"Not", {"x"}}},
      {"Add", {"Add", {"x1", "x2"}}},
      {"AddV2", {"Add", {"x1", "x2"}}},
      {"Sub", {"Sub", {"x1", "x2"}}},
      {"Mul", {"Mul", {"x1", "x2"}}},
      // Integers divide towards zero in both (TensorFlow's Div and
      // RealDiv, ONNX's Div).
      {"Div", {"Div", {"x1", "x2"}}},
      {"RealDiv", {"Div", {"x1", "x2"}}},
      {"Maximum", {"Max", {"x1", "x2"}}},
      {"Minimum", {"Min", {"x1", "x2"}}},
      {"Pow", {"Pow", {"x1", "x2"}}},
      {"Equal", {"Equal", {"x1", "x2"}}},
      {"Less", {"Less", {"x1", "x2"}}},
      {"Greater", {"Greater", {"x1", "x2"}}},
      {"LessEqual", {"LessOrEqual", {"x1", "x2"}}},
      {"GreaterEqual", {"GreaterOrEqual", {"x1", "x2"}}},
      {"LogicalAnd", {"And", {"x1", "x2"}}},
      {"LogicalOr", {"Or", {"x1", "x2"}}},
      {"Select", {"Where", {"condition", "x1", "x2"}}},
      {"SelectV2", {"Where", {"condition", "then", "else"}}},
      {"LeakyRelu", {"LeakyRelu", {"x"}, {{"negative_slope", 0.0, "alpha"}}}},
      {"HardSigmoid",
       {"HardSigmoid",
        {"input_x"},
        {{"alpha", 0.16666666, "alpha"}, {"beta", 0.5, "beta"}}}},
  };
  return *r;
}

Status LowerRename(Lowering* l) {
  const Rename& r = Renames().at(l->op().type);
  std::vector<std::string> in(r.inputs.size());
  for (size_t i = 0; i < in.size(); ++i) {
    HFLOW_RETURN_IF_ERROR(l->Need(r.inputs[i], &in[i]));
  }
  Attrs attrs;
  for (const FloatRename& f : r.floats) {
    double v = 0;
    HFLOW_RETURN_IF_ERROR(l->Float(f.ge, f.def, &v));
    attrs[f.onnx] = FloatAttr(v);
  }
  std::string y;
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  l->Emit1(r.onnx, in, y, std::move(attrs));
  return Status::OK();
}

// Reads input x and output y, the shape of most unary operators.
Status Unary(Lowering* l, std::string* x, std::string* y) {
  HFLOW_RETURN_IF_ERROR(l->Need("x", x));
  return l->Out(0, y);
}

Status Binary(Lowering* l, std::string* a, std::string* b, std::string* y) {
  HFLOW_RETURN_IF_ERROR(l->Need("x1", a));
  HFLOW_RETURN_IF_ERROR(l->Need("x2", b));
  return l->Out(0, y);
}

Status Relu6(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  l->Emit1("Clip", {x}, y, {{"min", FloatAttr(0)}, {"max", FloatAttr(6)}});
  return Status::OK();
}

// GE's Exp is base^(shift + scale * x) and its Log log_base(shift + scale
// * x), base -1 meaning e.
Status ExpLog(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  double base = 0, scale = 0, shift = 0;
  HFLOW_RETURN_IF_ERROR(l->Float("base", -1.0, &base));
  HFLOW_RETURN_IF_ERROR(l->Float("scale", 1.0, &scale));
  HFLOW_RETURN_IF_ERROR(l->Float("shift", 0.0, &shift));
  if (base != -1.0 && base <= 0) {
    return l->Error("attribute 'base' must be > 0 or -1 (e), got " +
                    std::to_string(base));
  }
  if (scale != 1.0) {
    x = l->Emit1("Mul", {x, l->AddScalar("scale", float(scale))},
                 l->Tmp("scaled"));
  }
  if (shift != 0.0) {
    x = l->Emit1("Add", {x, l->AddScalar("shift", float(shift))},
                 l->Tmp("shifted"));
  }
  const bool exp = l->op().type == "Exp";
  const double ln_base = base == -1.0 ? 1.0 : std::log(base);
  if (ln_base == 1.0) {
    l->Emit1(exp ? "Exp" : "Log", {x}, y);
  } else if (exp) {  // b^t = e^(t ln b)
    x = l->Emit1("Mul", {x, l->AddScalar("ln_base", float(ln_base))},
                 l->Tmp("times_ln_base"));
    l->Emit1("Exp", {x}, y);
  } else {  // log_b t = ln t / ln b
    x = l->Emit1("Log", {x}, l->Tmp("ln"));
    l->Emit1("Div", {x, l->AddScalar("ln_base", float(ln_base))}, y);
  }
  return Status::OK();
}

Status Elu(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  double alpha = 0, scale = 0, input_scale = 0;
  HFLOW_RETURN_IF_ERROR(l->Float("alpha", 1.0, &alpha));
  HFLOW_RETURN_IF_ERROR(l->Float("scale", 1.0, &scale));
  HFLOW_RETURN_IF_ERROR(l->Float("input_scale", 1.0, &input_scale));
  if (scale != 1.0 || input_scale != 1.0) {
    return l->Unsupported(
        "attributes 'scale' and 'input_scale' other than 1.0 are not "
        "supported");
  }
  l->Emit1("Elu", {x}, y, {{"alpha", FloatAttr(alpha)}});
  return Status::OK();
}

Status Round(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  int64_t decimals = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("decimals", 0, &decimals));
  if (decimals != 0) {
    return l->Unsupported("attribute 'decimals' must be 0, got " +
                          std::to_string(decimals));
  }
  l->Emit1("Round", {x}, y);
  return Status::OK();
}

// x * Φ(x) = x * (1 + erf(x / √2)) / 2, the exact form GE's Gelu names.
Status Gelu(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  std::string t = l->Emit1("Mul", {x, l->AddScalar("rsqrt2", 0.70710678f)},
                           l->Tmp("scaled"));
  t = l->Emit1("Erf", {t}, l->Tmp("erf"));
  t = l->Emit1("Add", {t, l->AddScalar("one", 1.0f)}, l->Tmp("erf_plus_1"));
  t = l->Emit1("Mul", {x, t}, l->Tmp("times_x"));
  l->Emit1("Mul", {t, l->AddScalar("half", 0.5f)}, y);
  return Status::OK();
}

// x * sigmoid(scale * x).
Status Swish(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  double scale = 0;
  HFLOW_RETURN_IF_ERROR(l->Float("scale", 1.0, &scale));
  std::string t = x;
  if (scale != 1.0) {
    t = l->Emit1("Mul", {x, l->AddScalar("scale", float(scale))},
                 l->Tmp("scaled"));
  }
  t = l->Emit1("Sigmoid", {t}, l->Tmp("sigmoid"));
  l->Emit1("Mul", {x, t}, y);
  return Status::OK();
}

Status Square(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  l->Emit1("Mul", {x, x}, y);
  return Status::OK();
}

Status Rsqrt(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  l->Emit1("Reciprocal", {l->Emit1("Sqrt", {x}, l->Tmp("sqrt"))}, y);
  return Status::OK();
}

Status SquaredDifference(Lowering* l) {
  std::string a, b, y;
  HFLOW_RETURN_IF_ERROR(Binary(l, &a, &b, &y));
  const std::string d = l->Emit1("Sub", {a, b}, l->Tmp("diff"));
  l->Emit1("Mul", {d, d}, y);
  return Status::OK();
}

Status NotEqual(Lowering* l) {
  std::string a, b, y;
  HFLOW_RETURN_IF_ERROR(Binary(l, &a, &b, &y));
  l->Emit1("Not", {l->Emit1("Equal", {a, b}, l->Tmp("equal"))}, y);
  return Status::OK();
}

// FloorMod takes the divisor's sign (ONNX Mod, fmod=0); Mod is C's fmod,
// the dividend's sign, as TensorFlow's Mod.
Status Mod(Lowering* l) {
  std::string a, b, y;
  HFLOW_RETURN_IF_ERROR(Binary(l, &a, &b, &y));
  l->Emit1("Mod", {a, b}, y, {{"fmod", IntAttr(l->op().type == "Mod")}});
  return Status::OK();
}

Status AddN(Lowering* l) {
  std::vector<std::string> x;
  std::string y;
  HFLOW_RETURN_IF_ERROR(l->Dynamic("x", &x));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  l->Emit1("Sum", x, y);
  return Status::OK();
}

// min(max(x, lo), hi) with broadcasting, as TensorFlow's clip_by_value
// (IR Clip takes scalar bounds only).
Status ClipByValue(Lowering* l) {
  std::string x, lo, hi, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  HFLOW_RETURN_IF_ERROR(l->Need("clip_value_min", &lo));
  HFLOW_RETURN_IF_ERROR(l->Need("clip_value_max", &hi));
  l->Emit1("Min", {l->Emit1("Max", {x, lo}, l->Tmp("at_least_min")), hi}, y);
  return Status::OK();
}

Status Cast(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(Unary(l, &x, &y));
  int64_t dst = 0, to = 0;
  HFLOW_RETURN_IF_ERROR(l->RequiredInt("dst_type", &dst));
  HFLOW_RETURN_IF_ERROR(OnnxTypeOf(*l, "dst_type", dst, &to));
  l->Emit1("Cast", {x}, y, {{"to", IntAttr(to)}});
  return Status::OK();
}

}  // namespace

Status OnnxTypeOf(const Lowering& l, const char* attr, int64_t ge_type,
                  int64_t* onnx) {
  // GE's DT_* numbers (graph/types.h) → ONNX TensorProto element types.
  static const std::map<int64_t, int64_t> kTypes = {
      {0, 1},    // DT_FLOAT
      {1, 10},   // DT_FLOAT16
      {2, 3},    // DT_INT8
      {3, 6},    // DT_INT32
      {4, 2},    // DT_UINT8
      {6, 5},    // DT_INT16
      {9, 7},    // DT_INT64
      {11, 11},  // DT_DOUBLE
      {12, 9},   // DT_BOOL
      {27, 16},  // DT_BF16
  };
  auto it = kTypes.find(ge_type);
  if (it == kTypes.end()) {
    return l.Unsupported(std::string("attribute '") + attr +
                         "': GE data type " + std::to_string(ge_type) +
                         " is not one hflow's model executor holds (it holds "
                         "float16/32/64, bfloat16, int8/16/32/64, uint8 and "
                         "bool)");
  }
  *onnx = it->second;
  return Status::OK();
}

void AddElementwiseLowerings(LowerTable* t) {
  for (const auto& [type, r] : Renames()) (*t)[type] = LowerRename;
  (*t)["Relu6"] = Relu6;
  (*t)["Exp"] = ExpLog;
  (*t)["Log"] = ExpLog;
  (*t)["Elu"] = Elu;
  (*t)["Round"] = Round;
  (*t)["Gelu"] = Gelu;
  (*t)["Swish"] = Swish;
  (*t)["Square"] = Square;
  (*t)["Rsqrt"] = Rsqrt;
  (*t)["SquaredDifference"] = SquaredDifference;
  (*t)["NotEqual"] = NotEqual;
  (*t)["Mod"] = Mod;
  (*t)["FloorMod"] = Mod;
  (*t)["AddN"] = AddN;
  (*t)["ClipByValue"] = ClipByValue;
  (*t)["Cast"] = Cast;
}

namespace {

const LowerTable& Table() {
  static const LowerTable* t = [] {
    auto* table = new LowerTable;
    AddElementwiseLowerings(table);
    AddNnLowerings(table);
    AddShapeLowerings(table);
    AddSliceLowerings(table);
    return table;
  }();
  return *t;
}

}  // namespace
}  // namespace ge_lower

Status LowerGeOp(const GeOp& op, ModelIr* ir) {
  auto it = ge_lower::Table().find(op.type);
  if (it == ge_lower::Table().end()) {
    return Status::NotSupported(
        op.Describe() +
        ": not a GE operator hflow runs; the user guide's \"Model nodes\" "
        "section lists the GE operators hflow runs");
  }
  ge_lower::Lowering l(op, ir);
  return it->second(&l);
}

bool IsGeOperator(const std::string& type) {
  return ge_lower::Table().count(type) != 0;
}

std::vector<std::string> GeOperators() {
  std::vector<std::string> ops;
  for (const auto& [type, fn] : ge_lower::Table()) ops.push_back(type);
  return ops;
}

}  // namespace model
}  // namespace hflow
