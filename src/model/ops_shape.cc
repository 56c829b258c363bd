// Shape and data-movement operators (Reshape, Shape, Gather, Slice,
// Concat, Split, Transpose, Expand, Pad, ...) and reductions on ATen, with
// ONNX's semantics. Operators whose axes moved from an attribute to an
// input (Squeeze, Unsqueeze, Split, ReduceSum at opset 13) take either.
//
// Thread-safety: see kernels.h.
#include <ATen/ExpandUtils.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "model/kernels.h"

namespace hflow {
namespace model {
namespace {

// ONNX Reshape: 0 copies the input's dim (unless allowzero), -1 is
// inferred.
Status Reshape(const IrNode& n, Kernel* k) {
  int64_t allowzero = 0;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "allowzero", 0, &allowzero));
  *k = [allowzero](const Tensors& in, Tensors* out) {
    std::vector<int64_t> shape = IntsOf(in[1]);
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allowzero) shape[i] = in[0].size(int64_t(i));
    }
    (*out)[0] = in[0].reshape(shape);
  };
  return Status::OK();
}

Status Flatten(const IrNode& n, Kernel* k) {
  int64_t axis = 0;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "axis", 1, &axis));
  *k = [axis](const Tensors& in, Tensors* out) {
    const at::Tensor& x = in[0];
    const int64_t a = axis < 0 ? axis + x.dim() : axis;
    int64_t outer = 1;
    for (int64_t d = 0; d < a; ++d) outer *= x.size(d);
    (*out)[0] = x.reshape({outer, outer == 0 ? 0 : x.numel() / outer});
  };
  return Status::OK();
}

Status Shape(const IrNode& n, Kernel* k) {
  int64_t start = 0, end = 0;
  const bool has_end = HasAttr(n, "end");
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "start", 0, &start));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "end", 0, &end));
  *k = [=](const Tensors& in, Tensors* out) {
    const int64_t rank = in[0].dim();
    auto clamp = [rank](int64_t v) {
      if (v < 0) v += rank;
      return std::min(std::max<int64_t>(v, 0), rank);
    };
    const int64_t b = clamp(start), e = has_end ? clamp(end) : rank;
    std::vector<int64_t> dims(in[0].sizes().begin() + b,
                              in[0].sizes().begin() + std::max(b, e));
    (*out)[0] = at::tensor(dims, at::kLong);
  };
  return Status::OK();
}

Status Size(const IrNode& n, Kernel* k) {
  *k = [](const Tensors& in, Tensors* out) {
    (*out)[0] = at::scalar_tensor(in[0].numel(), at::kLong);
  };
  return Status::OK();
}

Status Gather(const IrNode& n, Kernel* k) {
  int64_t axis = 0;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "axis", 0, &axis));
  *k = [axis](const Tensors& in, Tensors* out) {
    const at::Tensor& x = in[0];
    const int64_t a = NormAxis(axis, x.dim());
    at::Tensor idx = in[1].to(at::kLong);
    idx = at::where(idx < 0, idx + x.size(a), idx);
    // index_select on the flattened indices, then the indices' shape in
    // place of the axis.
    at::Tensor y = at::index_select(x, a, idx.reshape({-1}));
    std::vector<int64_t> shape(x.sizes().begin(), x.sizes().begin() + a);
    for (int64_t d : idx.sizes()) shape.push_back(d);
    shape.insert(shape.end(), x.sizes().begin() + a + 1, x.sizes().end());
    (*out)[0] = y.reshape(shape);
  };
  return Status::OK();
}

// Axes from the attribute or, when given, the second input.
std::vector<int64_t> AxesOf(const Tensors& in, const std::vector<int64_t>& attr,
                            size_t input = 1) {
  if (in.size() > input && in[input].defined()) return IntsOf(in[input]);
  return attr;
}

Status Unsqueeze(const IrNode& n, Kernel* k) {
  std::vector<int64_t> attr;
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "axes", {}, &attr));
  *k = [attr](const Tensors& in, Tensors* out) {
    std::vector<int64_t> axes = AxesOf(in, attr);
    const int64_t rank = in[0].dim() + int64_t(axes.size());
    for (int64_t& a : axes) a = NormAxis(a, rank);
    std::sort(axes.begin(), axes.end());
    at::Tensor y = in[0];
    for (int64_t a : axes) y = y.unsqueeze(a);
    (*out)[0] = y;
  };
  return Status::OK();
}

Status Squeeze(const IrNode& n, Kernel* k) {
  std::vector<int64_t> attr;
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "axes", {}, &attr));
  *k = [attr](const Tensors& in, Tensors* out) {
    std::vector<int64_t> axes = AxesOf(in, attr);
    if (axes.empty()) {
      (*out)[0] = in[0].squeeze();
      return;
    }
    for (int64_t& a : axes) a = NormAxis(a, in[0].dim());
    std::sort(axes.rbegin(), axes.rend());
    at::Tensor y = in[0];
    for (int64_t a : axes) y = y.squeeze(a);
    (*out)[0] = y;
  };
  return Status::OK();
}

Status Concat(const IrNode& n, Kernel* k) {
  int64_t axis = 0;
  if (!HasAttr(n, "axis")) return NodeError(n, "attribute 'axis' is required");
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "axis", 0, &axis));
  *k = [axis](const Tensors& in, Tensors* out) {
    (*out)[0] = at::cat(in, NormAxis(axis, in[0].dim()));
  };
  return Status::OK();
}

Status Transpose(const IrNode& n, Kernel* k) {
  std::vector<int64_t> perm;
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "perm", {}, &perm));
  *k = [perm](const Tensors& in, Tensors* out) {
    std::vector<int64_t> p = perm;
    if (p.empty()) {
      for (int64_t d = in[0].dim() - 1; d >= 0; --d) p.push_back(d);
    }
    (*out)[0] = in[0].permute(p);
  };
  return Status::OK();
}

// Slice (opset 10 on): starts, ends, axes, steps as inputs, clamped as
// ONNX says (ends past the dim, INT64_MAX and INT64_MIN included).
Status Slice(const IrNode& n, Kernel* k) {
  if (n.inputs.size() < 3) {
    return NodeError(n, "needs starts and ends as inputs (opset 10 on)");
  }
  *k = [](const Tensors& in, Tensors* out) {
    const at::Tensor& x = in[0];
    std::vector<int64_t> starts = IntsOf(in[1]), ends = IntsOf(in[2]);
    std::vector<int64_t> axes, steps(starts.size(), 1);
    if (in.size() > 3 && in[3].defined()) {
      axes = IntsOf(in[3]);
    } else {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
    }
    if (in.size() > 4 && in[4].defined()) steps = IntsOf(in[4]);
    at::Tensor y = x;
    for (size_t i = 0; i < starts.size(); ++i) {
      const int64_t a = NormAxis(axes[i], x.dim()), dim = x.size(a);
      const int64_t step = steps[i];
      int64_t s = starts[i], e = ends[i];
      if (s < 0) s += dim;
      if (e < 0 && e > std::numeric_limits<int64_t>::min() + dim) e += dim;
      if (step > 0) {
        s = std::min(std::max<int64_t>(s, 0), dim);
        e = std::min(std::max<int64_t>(e, 0), dim);
        y = y.slice(a, s, std::max(s, e), step);
      } else {
        // A negative step: flip, then slice forwards.
        s = std::min(std::max<int64_t>(s, -1), dim - 1);
        e = e == std::numeric_limits<int64_t>::min()
                ? -1
                : std::min(std::max<int64_t>(e, -1), dim - 1);
        y = y.flip(a).slice(a, dim - 1 - s, std::max(dim - 1 - s, dim - 1 - e),
                            -step);
      }
    }
    (*out)[0] = y;
  };
  return Status::OK();
}

Status Split(const IrNode& n, Kernel* k) {
  int64_t axis = 0;
  std::vector<int64_t> attr;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "axis", 0, &axis));
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "split", {}, &attr));
  const int64_t parts = static_cast<int64_t>(n.outputs.size());
  *k = [axis, attr, parts](const Tensors& in, Tensors* out) {
    const int64_t a = NormAxis(axis, in[0].dim());
    std::vector<int64_t> sizes = AxesOf(in, attr);
    if (sizes.empty()) {
      const int64_t dim = in[0].size(a), each = (dim + parts - 1) / parts;
      for (int64_t i = 0; i < parts; ++i) {
        sizes.push_back(std::min(each, dim - i * each));
      }
    }
    std::vector<at::Tensor> ys = at::split_with_sizes(in[0], sizes, a);
    for (size_t i = 0; i < ys.size() && i < out->size(); ++i) (*out)[i] = ys[i];
  };
  return Status::OK();
}

// Expand: numpy broadcasting of the input and the shape (either may be
// larger in a dim of 1).
Status Expand(const IrNode& n, Kernel* k) {
  *k = [](const Tensors& in, Tensors* out) {
    const std::vector<int64_t> shape = IntsOf(in[1]);
    (*out)[0] = in[0].expand(at::infer_size(in[0].sizes(), shape));
  };
  return Status::OK();
}

Status ConstantOfShape(const IrNode& n, Kernel* k) {
  auto it = n.attrs.find("value");
  at::Tensor value = at::zeros({1}, at::kFloat);
  if (it != n.attrs.end()) {
    if (it->second.kind != IrAttr::Kind::kTensor ||
        it->second.t.NumElements() != 1 ||
        ElementSize(it->second.t.dtype) == 0) {
      return NodeError(n, "attribute 'value' must be a one-element tensor");
    }
    const IrTensor& t = it->second.t;
    value = at::empty({1}, ToScalarType(t.dtype));
    std::memcpy(value.data_ptr(), t.data().data(), t.data().size());
  }
  *k = [value](const Tensors& in, Tensors* out) {
    const std::vector<int64_t> shape = IntsOf(in[0]);
    (*out)[0] = shape.empty() ? value.reshape({}).clone()
                              : value.expand(shape).contiguous();
  };
  return Status::OK();
}

Status Range(const IrNode& n, Kernel* k) {
  *k = [](const Tensors& in, Tensors* out) {
    (*out)[0] =
        at::arange(in[0].item(), in[1].item(), in[2].item(), in[0].options());
  };
  return Status::OK();
}

Status Tile(const IrNode& n, Kernel* k) {
  *k = [](const Tensors& in, Tensors* out) {
    (*out)[0] = in[0].repeat(IntsOf(in[1]));
  };
  return Status::OK();
}

// Pad (opset 11 on): pads as an input, all begins then all ends; modes
// constant, reflect, edge.
Status Pad(const IrNode& n, Kernel* k) {
  std::string mode;
  HFLOW_RETURN_IF_ERROR(AttrString(n, "mode", "constant", &mode));
  if (mode != "constant" && mode != "reflect" && mode != "edge") {
    return NodeError(
        n, "attribute 'mode': '" + mode + "' is not constant, reflect or edge");
  }
  if (n.inputs.size() < 2) return NodeError(n, "needs pads as an input");
  *k = [mode](const Tensors& in, Tensors* out) {
    const std::vector<int64_t> pads = IntsOf(in[1]);
    const int64_t rank = in[0].dim();
    std::vector<int64_t> torch_pads;  // last dim first
    for (int64_t d = rank - 1; d >= 0; --d) {
      torch_pads.push_back(pads[d]);
      torch_pads.push_back(pads[rank + d]);
    }
    if (mode == "constant") {
      const double v =
          in.size() > 2 && in[2].defined() ? in[2].item().toDouble() : 0.0;
      (*out)[0] = at::constant_pad_nd(in[0], torch_pads, v);
      return;
    }
    // reflect/edge pad spatial dims only in ATen: drop leading zero pairs.
    while (torch_pads.size() > 2 && torch_pads.back() == 0 &&
           torch_pads[torch_pads.size() - 2] == 0) {
      torch_pads.resize(torch_pads.size() - 2);
    }
    (*out)[0] = at::pad(in[0], torch_pads, mode == "edge" ? "replicate" : mode);
  };
  return Status::OK();
}

enum class Reduce { kSum, kMean, kMax, kMin, kProd, kL2, kSumSquare };

template <Reduce R>
Status Reduction(const IrNode& n, Kernel* k) {
  std::vector<int64_t> attr;
  int64_t keep = 1, noop = 0;
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "axes", {}, &attr));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "keepdims", 1, &keep));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "noop_with_empty_axes", 0, &noop));
  *k = [attr, keep, noop](const Tensors& in, Tensors* out) {
    const at::Tensor& x = in[0];
    std::vector<int64_t> axes = AxesOf(in, attr);
    if (axes.empty()) {
      if (noop) {
        (*out)[0] = x;
        return;
      }
      for (int64_t d = 0; d < x.dim(); ++d) axes.push_back(d);
    }
    for (int64_t& a : axes) a = NormAxis(a, x.dim());
    at::Tensor y;
    switch (R) {
      case Reduce::kSum:
        y = at::sum(x, axes, keep);
        break;
      case Reduce::kMean:
        y = at::mean(x, axes, keep);
        break;
      case Reduce::kMax:
        y = at::amax(x, axes, keep);
        break;
      case Reduce::kMin:
        y = at::amin(x, axes, keep);
        break;
      case Reduce::kL2:
        y = at::sqrt(at::sum(x * x, axes, keep));
        break;
      case Reduce::kSumSquare:
        y = at::sum(x * x, axes, keep);
        break;
      case Reduce::kProd: {
        std::sort(axes.rbegin(), axes.rend());
        y = x;
        for (int64_t a : axes) y = at::prod(y, a, keep);
        break;
      }
    }
    (*out)[0] = y.to(x.scalar_type());
  };
  return Status::OK();
}

template <bool kMax>
Status ArgReduce(const IrNode& n, Kernel* k) {
  int64_t axis = 0, keep = 1, last = 0;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "axis", 0, &axis));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "keepdims", 1, &keep));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "select_last_index", 0, &last));
  if (last) return NodeError(n, "select_last_index=1 is not supported");
  *k = [axis, keep](const Tensors& in, Tensors* out) {
    const int64_t a = NormAxis(axis, in[0].dim());
    (*out)[0] = kMax ? at::argmax(in[0], a, keep) : at::argmin(in[0], a, keep);
  };
  return Status::OK();
}

}  // namespace

void AddShapeKernels(KernelTable* t) {
  const char* g = "shape";
  (*t)["Reshape"] = {Reshape, g};
  (*t)["Flatten"] = {Flatten, g};
  (*t)["Shape"] = {Shape, g};
  (*t)["Size"] = {Size, g};
  (*t)["Gather"] = {Gather, g};
  (*t)["Unsqueeze"] = {Unsqueeze, g};
  (*t)["Squeeze"] = {Squeeze, g};
  (*t)["Concat"] = {Concat, g};
  (*t)["Transpose"] = {Transpose, g};
  (*t)["Slice"] = {Slice, g};
  (*t)["Split"] = {Split, g};
  (*t)["Expand"] = {Expand, g};
  (*t)["ConstantOfShape"] = {ConstantOfShape, g};
  (*t)["Range"] = {Range, g};
  (*t)["Tile"] = {Tile, g};
  (*t)["Pad"] = {Pad, g};
  const char* r = "reduction";
  (*t)["ReduceSum"] = {Reduction<Reduce::kSum>, r};
  (*t)["ReduceMean"] = {Reduction<Reduce::kMean>, r};
  (*t)["ReduceMax"] = {Reduction<Reduce::kMax>, r};
  (*t)["ReduceMin"] = {Reduction<Reduce::kMin>, r};
  (*t)["ReduceProd"] = {Reduction<Reduce::kProd>, r};
  (*t)["ReduceL2"] = {Reduction<Reduce::kL2>, r};
  (*t)["ReduceSumSquare"] = {Reduction<Reduce::kSumSquare>, r};
  (*t)["ArgMax"] = {ArgReduce<true>, r};
  (*t)["ArgMin"] = {ArgReduce<false>, r};
}

}  // namespace model
}  // namespace hflow
