// Neural-network operators on ATen: convolution, pooling, normalization,
// Gemm/MatMul, Softmax and friends, with ONNX's attributes (pads listed as
// all begins then all ends; auto_pad; NCHW layout).
//
// Thread-safety: see kernels.h.
#include <limits>

#include "model/kernels.h"

namespace hflow {
namespace model {
namespace {

// Spatial geometry shared by Conv and the pools, read once at load.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: 2 * dims
  std::string auto_pad = "NOTSET";
};

Status ReadWindow(const IrNode& n, bool needs_kernel, Window* w) {
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "kernel_shape", {}, &w->kernel));
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "strides", {}, &w->strides));
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "dilations", {}, &w->dilations));
  HFLOW_RETURN_IF_ERROR(AttrInts(n, "pads", {}, &w->pads));
  HFLOW_RETURN_IF_ERROR(AttrString(n, "auto_pad", "NOTSET", &w->auto_pad));
  if (needs_kernel && w->kernel.empty()) {
    return NodeError(n, "attribute 'kernel_shape' is required");
  }
  if (w->auto_pad != "NOTSET" && w->auto_pad != "VALID" &&
      w->auto_pad != "SAME_UPPER" && w->auto_pad != "SAME_LOWER") {
    return NodeError(n, "attribute 'auto_pad': '" + w->auto_pad +
                            "' is not NOTSET, VALID, SAME_UPPER or SAME_LOWER");
  }
  if (!w->pads.empty() && w->pads.size() % 2 != 0) {
    return NodeError(n,
                     "attribute 'pads' must list a begin and an end per "
                     "spatial dim");
  }
  return Status::OK();
}

// The window filled in for `dims` spatial dims of input `x` (kernel from
// the weight when the attribute is absent); pads resolved for auto_pad.
Window Resolve(const Window& w, const at::Tensor& x, int64_t dims,
               const std::vector<int64_t>& kernel) {
  Window r = w;
  r.kernel = kernel;
  if (r.strides.empty()) r.strides.assign(dims, 1);
  if (r.dilations.empty()) r.dilations.assign(dims, 1);
  if (r.pads.empty()) r.pads.assign(2 * dims, 0);
  if (w.auto_pad == "VALID") r.pads.assign(2 * dims, 0);
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER") {
    for (int64_t i = 0; i < dims; ++i) {
      const int64_t in = x.size(2 + i);
      const int64_t out = (in + r.strides[i] - 1) / r.strides[i];
      const int64_t eff = (r.kernel[i] - 1) * r.dilations[i] + 1;
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * r.strides[i] + eff - in);
      const int64_t small = total / 2, big = total - small;
      r.pads[i] = w.auto_pad == "SAME_UPPER" ? small : big;
      r.pads[dims + i] = w.auto_pad == "SAME_UPPER" ? big : small;
    }
  }
  return r;
}

// Pads ATen cannot express (different begin and end) applied to the
// input; returns the symmetric part for the op itself.
std::vector<int64_t> SplitPads(const Window& w, int64_t dims, at::Tensor* x,
                               double value) {
  std::vector<int64_t> sym(dims), extra;
  bool asym = false;
  for (int64_t i = 0; i < dims; ++i) {
    sym[i] = std::min(w.pads[i], w.pads[dims + i]);
    asym |= w.pads[i] != w.pads[dims + i];
  }
  if (asym) {
    for (int64_t i = dims - 1; i >= 0; --i) {
      extra.push_back(w.pads[i] - sym[i]);
      extra.push_back(w.pads[dims + i] - sym[i]);
    }
    *x = at::constant_pad_nd(*x, extra, value);
  }
  return sym;
}

Status Conv(const IrNode& n, Kernel* k) {
  Window w;
  HFLOW_RETURN_IF_ERROR(ReadWindow(n, false, &w));
  int64_t group = 1;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "group", 1, &group));
  *k = [w, group](const Tensors& in, Tensors* out) {
    at::Tensor x = in[0];
    const at::Tensor& weight = in[1];
    const int64_t dims = weight.dim() - 2;
    std::vector<int64_t> kernel(weight.sizes().begin() + 2,
                                weight.sizes().end());
    Window r = Resolve(w, x, dims, kernel);
    std::vector<int64_t> pads = SplitPads(r, dims, &x, 0.0);
    at::Tensor bias = in.size() > 2 ? in[2] : at::Tensor();
    (*out)[0] = at::convolution(x, weight, bias, r.strides, pads, r.dilations,
                                false, std::vector<int64_t>(dims, 0), group);
  };
  return Status::OK();
}

template <bool kMax>
Status Pool(const IrNode& n, Kernel* k) {
  Window w;
  HFLOW_RETURN_IF_ERROR(ReadWindow(n, true, &w));
  int64_t ceil = 0, include_pad = 0;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "ceil_mode", 0, &ceil));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "count_include_pad", 0, &include_pad));
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) {
    return NodeError(n, "the Indices output is not supported");
  }
  const int64_t dims = static_cast<int64_t>(w.kernel.size());
  if (dims < 1 || dims > 3) return NodeError(n, "pools 1 to 3 spatial dims");
  *k = [w, dims, ceil, include_pad](const Tensors& in, Tensors* out) {
    at::Tensor x = in[0];
    Window r = Resolve(w, x, dims, w.kernel);
    const double fill = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
    std::vector<int64_t> pads = SplitPads(r, dims, &x, fill);
    auto pool = [&](const at::Tensor& t) {
      if (kMax) {
        if (dims == 1)
          return at::max_pool1d(t, r.kernel, r.strides, pads, r.dilations,
                                ceil);
        if (dims == 2)
          return at::max_pool2d(t, r.kernel, r.strides, pads, r.dilations,
                                ceil);
        return at::max_pool3d(t, r.kernel, r.strides, pads, r.dilations, ceil);
      }
      if (dims == 1)
        return at::avg_pool1d(t, r.kernel, r.strides, pads, ceil, include_pad);
      if (dims == 2)
        return at::avg_pool2d(t, r.kernel, r.strides, pads, ceil, include_pad);
      return at::avg_pool3d(t, r.kernel, r.strides, pads, ceil, include_pad);
    };
    at::Tensor y = pool(x);
    if (!kMax && !include_pad && x.sizes() != in[0].sizes()) {
      // SplitPads padded one side explicitly, and those zeros count as
      // pixels for ATen: divide by the share of real pixels in each window.
      at::Tensor real = at::ones_like(in[0]);
      SplitPads(r, dims, &real, 0.0);
      y = y / pool(real);
    }
    (*out)[0] = y;
  };
  return Status::OK();
}

template <bool kMax>
Status GlobalPool(const IrNode& n, Kernel* k) {
  *k = [](const Tensors& in, Tensors* out) {
    std::vector<int64_t> axes;
    for (int64_t d = 2; d < in[0].dim(); ++d) axes.push_back(d);
    (*out)[0] =
        kMax ? at::amax(in[0], axes, true) : at::mean(in[0], axes, true);
  };
  return Status::OK();
}

Status BatchNorm(const IrNode& n, Kernel* k) {
  double eps = 0;
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "epsilon", 1e-5, &eps));
  if (n.inputs.size() != 5) return NodeError(n, "needs 5 inputs");
  *k = [eps](const Tensors& in, Tensors* out) {
    (*out)[0] = at::batch_norm(in[0], in[1], in[2], in[3], in[4], false, 0.0,
                               eps, false);
  };
  return Status::OK();
}

Status InstanceNorm(const IrNode& n, Kernel* k) {
  double eps = 0;
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "epsilon", 1e-5, &eps));
  *k = [eps](const Tensors& in, Tensors* out) {
    (*out)[0] =
        at::instance_norm(in[0], in[1], in[2], {}, {}, true, 0.0, eps, false);
  };
  return Status::OK();
}

Status LayerNorm(const IrNode& n, Kernel* k) {
  double eps = 0;
  int64_t axis = 0;
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "epsilon", 1e-5, &eps));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "axis", -1, &axis));
  if (n.outputs.size() > 1) {
    for (size_t i = 1; i < n.outputs.size(); ++i) {
      if (!n.outputs[i].empty()) {
        return NodeError(n, "the Mean and InvStdDev outputs are not supported");
      }
    }
  }
  *k = [eps, axis](const Tensors& in, Tensors* out) {
    const at::Tensor& x = in[0];
    const int64_t a = NormAxis(axis, x.dim());
    std::vector<int64_t> shape(x.sizes().begin() + a, x.sizes().end());
    at::Tensor bias = in.size() > 2 ? in[2] : at::Tensor();
    (*out)[0] = at::layer_norm(x, shape, in[1], bias, eps);
  };
  return Status::OK();
}

Status Gemm(const IrNode& n, Kernel* k) {
  double alpha = 0, beta = 0;
  int64_t ta = 0, tb = 0;
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "alpha", 1.0, &alpha));
  HFLOW_RETURN_IF_ERROR(AttrFloat(n, "beta", 1.0, &beta));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "transA", 0, &ta));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "transB", 0, &tb));
  *k = [=](const Tensors& in, Tensors* out) {
    at::Tensor a = ta ? in[0].t() : in[0];
    at::Tensor b = tb ? in[1].t() : in[1];
    if (in.size() > 2 && in[2].defined()) {
      (*out)[0] = at::addmm(in[2], a, b, beta, alpha);
    } else {
      at::Tensor y = at::mm(a, b);
      (*out)[0] = alpha == 1.0 ? y : y * alpha;
    }
  };
  return Status::OK();
}

Status MatMul(const IrNode& n, Kernel* k) {
  if (n.inputs.size() != 2) return NodeError(n, "needs 2 inputs");
  *k = [](const Tensors& in, Tensors* out) {
    (*out)[0] = at::matmul(in[0], in[1]);
  };
  return Status::OK();
}

// Softmax, LogSoftmax: along `axis` (opset 13 on); the ONNX importer marks
// older models' nodes with "coerce_2d", the earlier meaning (the input seen
// as 2-D at `axis`, the softmax over the trailing part).
template <bool kLog>
Status Softmax(const IrNode& n, Kernel* k) {
  int64_t axis = 0, coerce = 0;
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "coerce_2d", 0, &coerce));
  HFLOW_RETURN_IF_ERROR(AttrInt(n, "axis", coerce ? 1 : -1, &axis));
  *k = [axis, coerce](const Tensors& in, Tensors* out) {
    const at::Tensor& x = in[0];
    const int64_t a = NormAxis(axis, x.dim());
    if (coerce) {
      int64_t outer = 1;
      for (int64_t d = 0; d < a; ++d) outer *= x.size(d);
      at::Tensor y = x.reshape({outer, -1});
      y = kLog ? at::log_softmax(y, 1) : at::softmax(y, 1);
      (*out)[0] = y.reshape(x.sizes());
      return;
    }
    (*out)[0] = kLog ? at::log_softmax(x, a) : at::softmax(x, a);
  };
  return Status::OK();
}

}  // namespace

void AddNnKernels(KernelTable* t) {
  const char* g = "nn";
  (*t)["Conv"] = {Conv, g};
  (*t)["MaxPool"] = {Pool<true>, g};
  (*t)["AveragePool"] = {Pool<false>, g};
  (*t)["GlobalMaxPool"] = {GlobalPool<true>, g};
  (*t)["GlobalAveragePool"] = {GlobalPool<false>, g};
  (*t)["BatchNormalization"] = {BatchNorm, g};
  (*t)["InstanceNormalization"] = {InstanceNorm, g};
  (*t)["LayerNormalization"] = {LayerNorm, g};
  (*t)["Gemm"] = {Gemm, g};
  (*t)["MatMul"] = {MatMul, g};
  (*t)["Softmax"] = {Softmax<false>, g};
  (*t)["LogSoftmax"] = {Softmax<true>, g};
}

}  // namespace model
}  // namespace hflow
