// GE's indexing operators lowered onto the IR (ge_ops.h): Gather, Slice,
// StridedSlice and Pad. ONNX's Slice takes starts and ends where GE's takes
// offsets and sizes, and ONNX's Pad lists all begins, then all ends, where
// GE's paddings are [[begin, end], ...]: constant inputs are rearranged
// once here, others by a few IR operators at run time.
//
// Thread-safety: reentrant.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/ge_ops_lower.h"

namespace hflow {
namespace model {
namespace ge_lower {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Reads x and y.
Status XY(Lowering* l, std::string* x, std::string* y) {
  HFLOW_RETURN_IF_ERROR(l->Need("x", x));
  return l->Out(0, y);
}

// Pad, PadV2 (constant_values), PadV3 (mode; paddings_contiguous false
// lists all begins, then all ends, as ONNX does). GE's paddings are
// [rank, 2], [[begin, end], ...]; ONNX's all begins, then all ends.
Status Pad(Lowering* l) {
  std::string x, y, paddings, mode = "constant";
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  HFLOW_RETURN_IF_ERROR(l->Need("paddings", &paddings));
  std::vector<std::string> in{x, ""};
  bool contiguous = true;
  if (l->op().type == "PadV2") {
    in.emplace_back();
    HFLOW_RETURN_IF_ERROR(l->Need("constant_values", &in[2]));
  } else if (l->op().type == "PadV3") {
    HFLOW_RETURN_IF_ERROR(l->Str("mode", "constant", &mode));
    HFLOW_RETURN_IF_ERROR(l->Bool("paddings_contiguous", true, &contiguous));
    if (mode != "constant" && mode != "reflect" && mode != "edge") {
      return l->Unsupported(
          "attribute 'mode' must be constant, reflect or edge, got '" + mode +
          "'");
    }
    if (!l->In("constant_values").empty())
      in.push_back(l->In("constant_values"));
  }
  if (l->Constant(paddings) != nullptr) {  // rearranged once
    std::vector<int64_t> v;
    HFLOW_RETURN_IF_ERROR(l->ConstInts("paddings", &v));
    if (v.size() % 2 != 0) {
      return l->Error("input 'paddings' must hold [rank, 2] integers");
    }
    std::vector<int64_t> pads = v;
    const size_t rank = v.size() / 2;
    for (size_t d = 0; contiguous && d < rank; ++d) {
      pads[d] = v[2 * d];
      pads[rank + d] = v[2 * d + 1];
    }
    in[1] = l->AddInts("pads", pads);
  } else {
    std::string p = paddings;
    if (contiguous) {
      p = l->Emit1("Transpose", {p}, l->Tmp("paddings_t"),
                   {{"perm", IntsAttr({1, 0})}});
    }
    in[1] = l->Emit1("Reshape", {p, l->AddInts("flat", {-1})}, l->Tmp("pads"));
  }
  l->Emit1("Pad", in, y, {{"mode", StringAttr(mode)}});
  return Status::OK();
}

// GatherV2 (input axis), GatherV2D (attribute axis), Gather (axis 0).
Status Gather(Lowering* l) {
  std::string x, indices, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  HFLOW_RETURN_IF_ERROR(l->Need("indices", &indices));
  const std::string& type = l->op().type;
  int64_t axis = 0, batch_dims = 0;
  if (type == "GatherV2") HFLOW_RETURN_IF_ERROR(l->ConstInt("axis", &axis));
  if (type == "GatherV2D") HFLOW_RETURN_IF_ERROR(l->RequiredInt("axis", &axis));
  HFLOW_RETURN_IF_ERROR(l->Int("batch_dims", 0, &batch_dims));
  if (batch_dims != 0) {
    return l->Unsupported("attribute 'batch_dims' must be 0, got " +
                          std::to_string(batch_dims));
  }
  l->Emit1("Gather", {x, indices}, y, {{"axis", IntAttr(axis)}});
  return Status::OK();
}

// Slice and SliceD: `size` elements from `offsets`, -1 meaning to the end;
// ONNX's Slice takes ends.
Status Slice(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  std::vector<int64_t> off, size;
  const bool d_form = l->op().type == "SliceD";
  const bool fixed = d_form || (l->Constant(l->In("offsets")) != nullptr &&
                                l->Constant(l->In("size")) != nullptr);
  if (d_form) {
    HFLOW_RETURN_IF_ERROR(l->RequiredInts("offsets", &off));
    HFLOW_RETURN_IF_ERROR(l->RequiredInts("size", &size));
  } else if (fixed) {
    HFLOW_RETURN_IF_ERROR(l->ConstInts("offsets", &off));
    HFLOW_RETURN_IF_ERROR(l->ConstInts("size", &size));
  }
  if (fixed) {
    if (off.size() != size.size()) {
      return l->Error("'offsets' and 'size' must have as many entries");
    }
    std::vector<int64_t> ends;
    for (size_t i = 0; i < off.size(); ++i) {
      int64_t end = kMax;
      if (size[i] != -1 && __builtin_add_overflow(off[i], size[i], &end)) {
        return l->Error("'offsets' + 'size' overflows");
      }
      ends.push_back(end);
    }
    l->Emit1("Slice", {x, l->AddInts("starts", off), l->AddInts("ends", ends)},
             y);
    return Status::OK();
  }
  // At run time: ends = size == -1 ? INT64_MAX : offsets + size.
  std::string o, s;
  HFLOW_RETURN_IF_ERROR(l->Need("offsets", &o));
  HFLOW_RETURN_IF_ERROR(l->Need("size", &s));
  const Attrs i64{{"to", IntAttr(7)}};
  o = l->Emit1("Cast", {o}, l->Tmp("starts"), i64);
  s = l->Emit1("Cast", {s}, l->Tmp("size64"), i64);
  const std::string sum = l->Emit1("Add", {o, s}, l->Tmp("offsets_plus_size"));
  const std::string all = l->Emit1("Equal", {s, l->AddInts("minus_one", {-1})},
                                   l->Tmp("to_the_end"));
  const std::string ends = l->Emit1(
      "Where", {all, l->AddInts("int64_max", {kMax}), sum}, l->Tmp("ends"));
  l->Emit1("Slice", {x, o, ends}, y);
  return Status::OK();
}

// StridedSlice (Const inputs begin, end, strides) and StridedSliceD
// (attributes): begin_mask, end_mask and shrink_axis_mask; not
// ellipsis_mask or new_axis_mask.
Status StridedSlice(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(XY(l, &x, &y));
  std::vector<int64_t> begin, end, strides;
  const char* names[3] = {"begin", "end", "strides"};
  std::vector<int64_t>* lists[3] = {&begin, &end, &strides};
  for (int i = 0; i < 3; ++i) {
    HFLOW_RETURN_IF_ERROR(l->op().type == "StridedSliceD"
                              ? l->RequiredInts(names[i], lists[i])
                              : l->ConstInts(names[i], lists[i]));
  }
  if (begin.size() != end.size() || begin.size() != strides.size()) {
    return l->Error("'begin', 'end' and 'strides' must have as many entries");
  }
  int64_t masks[5] = {};
  const char* mask_names[5] = {"begin_mask", "end_mask", "shrink_axis_mask",
                               "ellipsis_mask", "new_axis_mask"};
  for (int i = 0; i < 5; ++i) {
    HFLOW_RETURN_IF_ERROR(l->Int(mask_names[i], 0, &masks[i]));
  }
  if (masks[3] != 0 || masks[4] != 0) {
    return l->Unsupported(
        "attributes 'ellipsis_mask' and 'new_axis_mask' must be 0");
  }
  if (begin.size() > 64) {  // the masks are 64-bit
    return l->Error("'begin' has more than 64 entries");
  }
  std::vector<int64_t> axes, shrink;
  for (size_t i = 0; i < begin.size(); ++i) {
    const bool up = strides[i] > 0;
    if (strides[i] == 0) return l->Error("'strides' holds a 0");
    if (masks[0] >> i & 1) begin[i] = up ? 0 : kMax;
    if (masks[1] >> i & 1) end[i] = up ? kMax : kMin;
    if (masks[2] >> i & 1) {  // one element, the axis then dropped
      end[i] = begin[i] == -1 || begin[i] == kMax ? kMax : begin[i] + 1;
      strides[i] = 1;
      shrink.push_back(int64_t(i));
    }
    axes.push_back(int64_t(i));
  }
  const std::string s =
      l->Emit1("Slice",
               {x, l->AddInts("starts", begin), l->AddInts("ends", end),
                l->AddInts("axes", axes), l->AddInts("steps", strides)},
               shrink.empty() ? y : l->Tmp("sliced"));
  if (!shrink.empty()) {
    l->Emit1("Squeeze", {s, l->AddInts("shrink_axes", shrink)}, y);
  }
  return Status::OK();
}

}  // namespace

void AddSliceLowerings(LowerTable* t) {
  for (const char* op : {"Pad", "PadV2", "PadV3"}) (*t)[op] = Pad;
  for (const char* op : {"GatherV2", "GatherV2D", "Gather"}) (*t)[op] = Gather;
  (*t)["Slice"] = Slice;
  (*t)["SliceD"] = Slice;
  (*t)["StridedSlice"] = StridedSlice;
  (*t)["StridedSliceD"] = StridedSlice;
}

}  // namespace ge_lower
}  // namespace model
}  // namespace hflow
