// GE's shape, data-movement and reduction operators lowered onto the IR
// (indexing ones: ge_ops_slice.cc)
// (ge_ops.h). GE has two forms of many: one taking axes, perm or sizes as
// an input tensor (Transpose, ReduceSum, SplitV, ...) and a "D" form
// taking them as an attribute (TransposeD, ReduceSumD, SplitVD, ...).
// Where the IR operator takes a tensor input (Reshape's shape, Tile's
// multiples, ReduceSum's axes) either lowers; where it takes an attribute
// (Transpose's perm, Concat's and Gather's axis) the input must be a Const
// op, read here.
//
// Thread-safety: reentrant.
#include <cstdint>
#include <string>
#include <vector>

#include "model/ge_ops_lower.h"

namespace hflow {
namespace model {
namespace ge_lower {
namespace {

constexpr int64_t kGeInt32 = 3, kGeInt64 = 9;  // GE's DT_INT32, DT_INT64

// Reads x and y.
Status XY(Lowering* l, std::string* x, std::string* y) {
  HFLOW_RETURN_IF_ERROR(l->Need("x", x));
  return l->Out(0, y);
}

// GE's Reshape reads 0 as "copy the input's dim", ONNX's default.
Status Reshape(Lowering* l) {
  std::string x, shape, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  HFLOW_RETURN_IF_ERROR(l->Need("shape", &shape));
  int64_t axis = 0, num_axes = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("axis", 0, &axis));
  HFLOW_RETURN_IF_ERROR(l->Int("num_axes", -1, &num_axes));
  if (axis != 0 || num_axes != -1) {
    return l->Unsupported(
        "attributes 'axis' and 'num_axes' (a partial reshape) must be 0 and "
        "-1");
  }
  l->Emit1("Reshape", {x, shape}, y);
  return Status::OK();
}

Status Transpose(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  std::vector<int64_t> perm;
  if (l->op().type == "TransposeD") {
    HFLOW_RETURN_IF_ERROR(l->RequiredInts("perm", &perm));
  } else {
    HFLOW_RETURN_IF_ERROR(l->ConstInts("perm", &perm));
  }
  l->Emit1("Transpose", {x}, y, {{"perm", IntsAttr(perm)}});
  return Status::OK();
}

// Dynamic input x and its count N.
Status Values(Lowering* l, std::vector<std::string>* x) {
  HFLOW_RETURN_IF_ERROR(l->Dynamic("x", x));
  int64_t n = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("N", int64_t(x->size()), &n));
  if (n != int64_t(x->size())) {
    return l->Error("attribute 'N' is " + std::to_string(n) +
                    " but dynamic input 'x' has " + std::to_string(x->size()) +
                    " entries");
  }
  return Status::OK();
}

// ConcatV2 (x..., concat_dim), Concat (concat_dim, x...), ConcatD and
// ConcatV2D (attribute concat_dim).
Status Concat(Lowering* l) {
  std::vector<std::string> x;
  std::string y;
  HFLOW_RETURN_IF_ERROR(Values(l, &x));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  int64_t axis = 0;
  const std::string& type = l->op().type;
  if (type == "ConcatD" || type == "ConcatV2D") {
    HFLOW_RETURN_IF_ERROR(l->RequiredInt("concat_dim", &axis));
  } else {
    HFLOW_RETURN_IF_ERROR(l->ConstInt("concat_dim", &axis));
  }
  l->Emit1("Concat", x, y, {{"axis", IntAttr(axis)}});
  return Status::OK();
}

// Stacks along a new axis: each value unsqueezed, then concatenated.
Status Pack(Lowering* l) {
  std::vector<std::string> x;
  std::string y;
  HFLOW_RETURN_IF_ERROR(Values(l, &x));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  int64_t axis = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("axis", 0, &axis));
  const std::string axes = l->AddInts("axes", {axis});
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = l->Emit1("Unsqueeze", {x[i], axes},
                    l->Tmp("x" + std::to_string(i) + "_unsqueezed"));
  }
  l->Emit1("Concat", x, y, {{"axis", IntAttr(axis)}});
  return Status::OK();
}

// Splits into `num` slices of one along the axis, each squeezed.
Status Unpack(Lowering* l) {
  std::string x;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  int64_t num = 0, axis = 0;
  HFLOW_RETURN_IF_ERROR(l->RequiredInt("num", &num));
  HFLOW_RETURN_IF_ERROR(l->Int("axis", 0, &axis));
  if (num < 1 || size_t(num) != l->OutputCount()) {
    return l->Error("attribute 'num' is " + std::to_string(num) +
                    " but the op has " + std::to_string(l->OutputCount()) +
                    " outputs");
  }
  std::vector<std::string> parts;
  for (int64_t i = 0; i < num; ++i) {
    parts.push_back(l->Tmp("slice" + std::to_string(i)));
  }
  l->Emit("Split", {x}, parts, {{"axis", IntAttr(axis)}});
  const std::string axes = l->AddInts("axes", {axis});
  for (int64_t i = 0; i < num; ++i) {
    if (!l->op().outputs[i].empty()) {
      l->Emit1("Squeeze", {parts[i], axes}, l->op().outputs[i]);
    }
  }
  return Status::OK();
}

Status Flatten(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  int64_t axis = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("axis", 1, &axis));
  l->Emit1("Flatten", {x}, y, {{"axis", IntAttr(axis)}});
  return Status::OK();
}

// Dims axis..end_axis merged into one, the others kept: a Reshape to
// [0, ..., 0, -1] (0 copies a dim), so end_axis must be the last.
Status FlattenV2(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  int64_t axis = 0, end = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("axis", 1, &axis));
  HFLOW_RETURN_IF_ERROR(l->Int("end_axis", -1, &end));
  const int64_t rank = l->RankOf(x);
  if (axis < 0 && rank >= 0) axis += rank;
  if (end < 0 && rank >= 0) end += rank;
  if (axis < 0 || (end != -1 && end != rank - 1)) {
    return l->Unsupported(
        "needs 'end_axis' to be the last axis and 'axis' >= 0 (or the input's "
        "rank known)");
  }
  std::vector<int64_t> shape(size_t(axis), 0);
  shape.push_back(-1);
  l->Emit1("Reshape", {x, l->AddInts("shape", shape)}, y);
  return Status::OK();
}

// Squeeze and SqueezeV2 (attribute axis; none: every dim of 1),
// SqueezeV3 (optional input axes).
Status Squeeze(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  std::vector<std::string> in{x};
  if (l->op().type == "SqueezeV3") {
    if (!l->In("axes").empty()) in.push_back(l->In("axes"));
  } else {
    std::vector<int64_t> axes;
    HFLOW_RETURN_IF_ERROR(l->Ints("axis", {}, &axes));
    if (!axes.empty()) in.push_back(l->AddInts("axes", axes));
  }
  l->Emit1("Squeeze", in, y);
  return Status::OK();
}

// Unsqueeze (attribute axes), UnsqueezeV2 (attribute axis), UnsqueezeV3
// (input axes), ExpandDims (input axis).
Status Unsqueeze(Lowering* l) {
  std::string x, y, axes;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  const std::string& type = l->op().type;
  if (type == "UnsqueezeV3") {
    HFLOW_RETURN_IF_ERROR(l->Need("axes", &axes));
  } else if (type == "ExpandDims") {
    HFLOW_RETURN_IF_ERROR(l->Need("axis", &axes));
  } else {
    std::vector<int64_t> v;
    HFLOW_RETURN_IF_ERROR(
        l->Ints(type == "Unsqueeze" ? "axes" : "axis", {}, &v));
    axes = l->AddInts("axes", v);
  }
  l->Emit1("Unsqueeze", {x, axes}, y);
  return Status::OK();
}

// ReduceSum (input axes) and ReduceSumD (attribute axes), and so on. An
// empty axes input reduces nothing (TensorFlow's meaning, and ReduceMean's
// noop_with_empty_axes default); empty D-form axes reduce every dim.
Status Reduce(Lowering* l) {
  std::string type = l->op().type, x, y, axes;
  const bool d_form = type.back() == 'D';
  if (d_form) type.pop_back();
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  bool keep = false, noop = !d_form;
  HFLOW_RETURN_IF_ERROR(l->Bool("keep_dims", false, &keep));
  if (type == "ReduceMean") {
    HFLOW_RETURN_IF_ERROR(l->Bool("noop_with_empty_axes", noop, &noop));
  }
  if (d_form) {
    std::vector<int64_t> v;
    HFLOW_RETURN_IF_ERROR(l->RequiredInts("axes", &v));
    axes = l->AddInts("axes", v);
  } else {
    HFLOW_RETURN_IF_ERROR(l->Need("axes", &axes));
  }
  l->Emit1(
      type, {x, axes}, y,
      {{"keepdims", IntAttr(keep)}, {"noop_with_empty_axes", IntAttr(noop)}});
  return Status::OK();
}

// An int64 result `t` cast to GE's `dtype` attribute (int32 or int64)
// into y.
Status IndexType(Lowering* l, int64_t def, const std::string& t,
                 const std::string& y) {
  int64_t dtype = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("dtype", def, &dtype));
  if (dtype == kGeInt64) {
    l->Emit1("Identity", {t}, y);
  } else if (dtype == kGeInt32) {
    l->Emit1("Cast", {t}, y, {{"to", IntAttr(6)}});
  } else {
    return l->Error(
        "attribute 'dtype' must be DT_INT32 (3) or DT_INT64 (9), got " +
        std::to_string(dtype));
  }
  return Status::OK();
}

// ArgMaxV2, ArgMin (input dimension), ArgMaxD, ArgMinD (attribute).
Status Arg(Lowering* l) {
  const std::string& type = l->op().type;
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  int64_t axis = 0;
  if (type.back() == 'D') {
    HFLOW_RETURN_IF_ERROR(l->RequiredInt("dimension", &axis));
  } else {
    HFLOW_RETURN_IF_ERROR(l->ConstInt("dimension", &axis));
  }
  const std::string t = l->Emit1(
      type.compare(0, 6, "ArgMax") == 0 ? "ArgMax" : "ArgMin", {x},
      l->Tmp("index"), {{"axis", IntAttr(axis)}, {"keepdims", IntAttr(0)}});
  return IndexType(l, kGeInt64, t, y);
}

Status Shape(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  const bool size = l->op().type == "Size";
  return IndexType(
      l, kGeInt32,
      l->Emit1(size ? "Size" : "Shape", {x}, l->Tmp(size ? "size" : "shape")),
      y);
}

// Tile and TileD, Expand, BroadcastTo and BroadcastToD: the IR operator
// with the tensor input `input` (or the D form's attribute `attr`).
Status WithShape(Lowering* l, const char* ir_type, const char* input,
                 const char* attr) {
  std::string x, y, v;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  if (l->op().type.back() == 'D') {
    std::vector<int64_t> ints;
    HFLOW_RETURN_IF_ERROR(l->RequiredInts(attr, &ints));
    v = l->AddInts(attr, ints);
  } else {
    HFLOW_RETURN_IF_ERROR(l->Need(input, &v));
  }
  l->Emit1(ir_type, {x, v}, y);
  return Status::OK();
}
Status Tile(Lowering* l) {
  return WithShape(l, "Tile", "multiples", "multiples");
}
Status Expand(Lowering* l) { return WithShape(l, "Expand", "shape", "shape"); }

// A scalar broadcast to `dims`.
Status Fill(Lowering* l) {
  std::string dims, value, y;
  HFLOW_RETURN_IF_ERROR(l->Need("dims", &dims));
  HFLOW_RETURN_IF_ERROR(l->Need("value", &value));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  l->Emit1("Expand", {value, dims}, y);
  return Status::OK();
}

Status Range(Lowering* l) {
  std::string start, limit, delta, y;
  HFLOW_RETURN_IF_ERROR(l->Need("start", &start));
  HFLOW_RETURN_IF_ERROR(l->Need("limit", &limit));
  HFLOW_RETURN_IF_ERROR(l->Need("delta", &delta));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  l->Emit1("Range", {start, limit, delta}, y);
  return Status::OK();
}

// Split (split_dim, x), SplitD, SplitV (x, size_splits, split_dim),
// SplitVD: num_split outputs y0.., equal parts unless sizes are given.
Status Split(Lowering* l) {
  const std::string& type = l->op().type;
  std::string x;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  int64_t axis = 0, num = 0;
  HFLOW_RETURN_IF_ERROR(l->RequiredInt("num_split", &num));
  if (num < 1 || size_t(num) != l->OutputCount()) {
    return l->Error("attribute 'num_split' is " + std::to_string(num) +
                    " but the op has " + std::to_string(l->OutputCount()) +
                    " outputs");
  }
  if (type.back() == 'D') {
    HFLOW_RETURN_IF_ERROR(l->RequiredInt("split_dim", &axis));
  } else {
    HFLOW_RETURN_IF_ERROR(l->ConstInt("split_dim", &axis));
  }
  std::vector<std::string> in{x};
  if (type == "SplitV" || type == "SplitVD") {
    std::vector<int64_t> sizes;
    if (type == "SplitVD") {
      HFLOW_RETURN_IF_ERROR(l->RequiredInts("size_splits", &sizes));
      in.push_back(l->AddInts("size_splits", sizes));
    } else {
      HFLOW_RETURN_IF_ERROR(l->Need("size_splits", &in.emplace_back()));
      if (l->Constant(in[1]) != nullptr) {
        HFLOW_RETURN_IF_ERROR(l->ConstInts("size_splits", &sizes));
      }
    }
    for (int64_t s : sizes) {
      if (s < 0) {
        return l->Unsupported(
            "'size_splits' must give every size (no -1 to infer one)");
      }
    }
  }
  l->Emit("Split", in, l->op().outputs, {{"axis", IntAttr(axis)}});
  return Status::OK();
}

}  // namespace

void AddShapeLowerings(LowerTable* t) {
  (*t)["Reshape"] = Reshape;
  for (const char* op : {"Transpose", "TransposeD"}) (*t)[op] = Transpose;
  for (const char* op : {"ConcatV2", "ConcatV2D", "ConcatD", "Concat"}) {
    (*t)[op] = Concat;
  }
  (*t)["Pack"] = Pack;
  (*t)["Unpack"] = Unpack;
  (*t)["Flatten"] = Flatten;
  (*t)["FlattenV2"] = FlattenV2;
  for (const char* op : {"Squeeze", "SqueezeV2", "SqueezeV3"}) {
    (*t)[op] = Squeeze;
  }
  for (const char* op :
       {"Unsqueeze", "UnsqueezeV2", "UnsqueezeV3", "ExpandDims"}) {
    (*t)[op] = Unsqueeze;
  }
  for (const char* op :
       {"ReduceMean", "ReduceMeanD", "ReduceSum", "ReduceSumD", "ReduceMax",
        "ReduceMaxD", "ReduceMin", "ReduceMinD", "ReduceProd", "ReduceProdD"}) {
    (*t)[op] = Reduce;
  }
  for (const char* op : {"ArgMaxV2", "ArgMaxD", "ArgMin", "ArgMinD"}) {
    (*t)[op] = Arg;
  }
  (*t)["Shape"] = Shape;
  (*t)["Size"] = Shape;
  (*t)["Tile"] = Tile;
  (*t)["TileD"] = Tile;
  for (const char* op : {"Expand", "BroadcastTo", "BroadcastToD"}) {
    (*t)[op] = Expand;
  }
  (*t)["Fill"] = Fill;
  (*t)["Range"] = Range;
  for (const char* op : {"Split", "SplitD", "SplitV", "SplitVD"}) {
    (*t)[op] = Split;
  }
}

}  // namespace ge_lower
}  // namespace model
}  // namespace hflow
