// GE's neural-network operators lowered onto the IR (ge_ops.h):
// convolution, pooling, normalization, matrix products and softmax.
//
// Note [GE's layouts]
// GE's image operators take data_format NHWC (TensorFlow's operators,
// GE's default for Conv2D, MaxPool, AvgPool, BatchNorm) or NCHW (the V2/V3
// pools' default, and what GE's ONNX parser writes); the IR's are NCHW.
// An NHWC operator becomes Transpose(0,3,1,2) → the NCHW operator →
// Transpose(0,2,3,1), so the graph's tensors keep GE's layout. The filter
// of an NHWC Conv2D is HWCN ([kh, kw, in/groups, out], GE's format for
// it) and of an NCHW one OIHW; a DepthwiseConv2D filter is [kh, kw, C, K]
// in both. A filter that is a Const op (as in any inference graph) is
// rearranged once here, not on every run. GE lists 4-entry pads as top,
// bottom, left, right; ONNX as all begins, then all ends.
//
// Thread-safety: reentrant.
#include <string>
#include <utility>
#include <vector>

#include "model/ge_ops_lower.h"

namespace hflow {
namespace model {
namespace ge_lower {
namespace {

Status Format(Lowering* l, const char* def, bool* nhwc) {
  std::string f;
  HFLOW_RETURN_IF_ERROR(l->Str("data_format", def, &f));
  if (f != "NHWC" && f != "NCHW") {
    return l->Unsupported(
        "attribute 'data_format' must be NHWC or NCHW, got '" + f + "'");
  }
  *nhwc = f == "NHWC";
  return Status::OK();
}

// The H and W entries of a 4-entry list in data_format order.
std::vector<int64_t> Hw(const std::vector<int64_t>& v, bool nhwc) {
  return nhwc ? std::vector<int64_t>{v[1], v[2]}
              : std::vector<int64_t>{v[2], v[3]};
}

// GE's top, bottom, left, right → ONNX's top, left, bottom, right.
std::vector<int64_t> OnnxPads(const std::vector<int64_t>& p) {
  return {p[0], p[2], p[1], p[3]};
}

// Emits `type` on x (and `extra` inputs) into y in NCHW (Note [GE's
// layouts]).
void InNchw(Lowering* l, bool nhwc, const std::string& type,
            const std::string& x, const std::vector<std::string>& extra,
            const std::string& y, Attrs attrs) {
  std::vector<std::string> in{x};
  if (!nhwc) {
    in.insert(in.end(), extra.begin(), extra.end());
    l->Emit1(type, in, y, std::move(attrs));
    return;
  }
  in[0] = l->Emit1("Transpose", {x}, l->Tmp("x_nchw"),
                   {{"perm", IntsAttr({0, 3, 1, 2})}});
  in.insert(in.end(), extra.begin(), extra.end());
  const std::string t = l->Emit1(type, in, l->Tmp("y_nchw"), std::move(attrs));
  l->Emit1("Transpose", {t}, y, {{"perm", IntsAttr({0, 2, 3, 1})}});
}

// Quantization inputs and attributes hflow does not run.
Status NoQuantization(Lowering* l) {
  if (!l->In("offset_w").empty()) {
    return l->Unsupported(
        "input 'offset_w' (int8 quantization) is not supported");
  }
  int64_t offset_x = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("offset_x", 0, &offset_x));
  if (offset_x != 0) {
    return l->Unsupported(
        "attribute 'offset_x' (int8 quantization) must be 0, got " +
        std::to_string(offset_x));
  }
  return Status::OK();
}

// Conv2D and DepthwiseConv2D.
Status Conv(Lowering* l) {
  const bool depthwise = l->op().type == "DepthwiseConv2D";
  std::string x, filter, y;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  HFLOW_RETURN_IF_ERROR(l->Need("filter", &filter));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  HFLOW_RETURN_IF_ERROR(NoQuantization(l));
  bool nhwc = true;
  HFLOW_RETURN_IF_ERROR(Format(l, "NHWC", &nhwc));
  std::vector<int64_t> strides, pads, dilations;
  HFLOW_RETURN_IF_ERROR(l->IntsOfSize(
      "strides", 4, {}, "N, C, H, W strides in data_format order", &strides));
  HFLOW_RETURN_IF_ERROR(
      l->IntsOfSize("pads", 4, {}, "top, bottom, left, right", &pads));
  HFLOW_RETURN_IF_ERROR(
      l->IntsOfSize("dilations", 4, {1, 1, 1, 1},
                    "N, C, H, W dilations in data_format order", &dilations));
  int64_t groups = 1;
  if (!depthwise) HFLOW_RETURN_IF_ERROR(l->Int("groups", 1, &groups));
  const IrTensor* f = l->Constant(filter);
  if (f != nullptr && f->dims.size() != 4) {
    return l->Error("input 'filter' must be 4-D, got " + ShapeText(f->dims));
  }
  // Rearranged below, before CheckIr looks at the constants.
  if (f != nullptr &&
      (ElementSize(f->dtype) == 0 || f->NumElements() < 0 ||
       f->data().size() != size_t(f->NumElements()) * ElementSize(f->dtype))) {
    return l->Error("input 'filter': the Const's " +
                    std::to_string(f->data().size()) +
                    " bytes do not hold its shape " + ShapeText(f->dims) +
                    " of " + DataTypeName(f->dtype));
  }
  std::string w = filter;
  if (depthwise) {
    // [kh, kw, C, K] → [C*K, 1, kh, kw]: one group per input channel.
    if (f == nullptr) {
      return l->Error(
          "input 'filter' must be a Const op (its channel count sets the "
          "IR's group count)");
    }
    IrTensor t = Permute(*f, {2, 3, 0, 1});
    groups = f->dims[2];
    int64_t out_channels = 0;
    if (__builtin_mul_overflow(f->dims[2], f->dims[3], &out_channels)) {
      return l->Error("input 'filter': its dims overflow");
    }
    t.dims = {out_channels, 1, f->dims[0], f->dims[1]};
    w = l->AddConst("filter_oihw", std::move(t));
  } else if (nhwc && f != nullptr) {  // HWCN → OIHW, once
    w = l->AddConst("filter_oihw", Permute(*f, {3, 2, 0, 1}));
  } else if (nhwc) {
    w = l->Emit1("Transpose", {filter}, l->Tmp("filter_oihw"),
                 {{"perm", IntsAttr({3, 2, 0, 1})}});
  }
  std::vector<std::string> extra{w};
  if (!l->In("bias").empty()) extra.push_back(l->In("bias"));
  InNchw(l, nhwc, "Conv", x, extra, y,
         {{"strides", IntsAttr(Hw(strides, nhwc))},
          {"dilations", IntsAttr(Hw(dilations, nhwc))},
          {"pads", IntsAttr(OnnxPads(pads))},
          {"group", IntAttr(groups)}});
  return Status::OK();
}

Status Window(Lowering* l, bool nhwc, Attrs* attrs) {
  std::vector<int64_t> ksize, strides;
  HFLOW_RETURN_IF_ERROR(l->IntsOfSize(
      "ksize", 4, {}, "N, C, H, W window sizes in data_format order", &ksize));
  HFLOW_RETURN_IF_ERROR(l->IntsOfSize(
      "strides", 4, {}, "N, C, H, W strides in data_format order", &strides));
  (*attrs)["kernel_shape"] = IntsAttr(Hw(ksize, nhwc));
  (*attrs)["strides"] = IntsAttr(Hw(strides, nhwc));
  return Status::OK();
}

// SAME puts the odd pixel at the end, as TensorFlow: ONNX's SAME_UPPER.
Status AutoPad(Lowering* l, const char* attr, const std::string& mode,
               Attrs* attrs) {
  if (mode == "SAME") {
    (*attrs)["auto_pad"] = StringAttr("SAME_UPPER");
  } else if (mode == "VALID") {
    (*attrs)["auto_pad"] = StringAttr("VALID");
  } else {
    return l->Error(std::string("attribute '") + attr +
                    "' must be SAME or VALID, got '" + mode + "'");
  }
  return Status::OK();
}

// MaxPool and AvgPool: TensorFlow's, padding SAME or VALID; the average
// counts the window's real pixels only.
Status TfPool(Lowering* l) {
  const bool max = l->op().type == "MaxPool";
  std::string x, y, padding;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  bool nhwc = true;
  HFLOW_RETURN_IF_ERROR(Format(l, "NHWC", &nhwc));
  Attrs attrs;
  HFLOW_RETURN_IF_ERROR(Window(l, nhwc, &attrs));
  HFLOW_RETURN_IF_ERROR(l->RequiredStr("padding", &padding));
  HFLOW_RETURN_IF_ERROR(AutoPad(l, "padding", padding, &attrs));
  if (!max) attrs["count_include_pad"] = IntAttr(0);
  InNchw(l, nhwc, max ? "MaxPool" : "AveragePool", x, {}, y, std::move(attrs));
  return Status::OK();
}

// MaxPoolV3 and AvgPoolV2: padding_mode CALCULATED (explicit pads, floor
// or ceil output size), SAME or VALID; global_pooling pools all of H, W.
Status PoolV2(Lowering* l) {
  const bool max = l->op().type == "MaxPoolV3";
  std::string x, y, mode;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  bool nhwc = false, global = false, ceil = false, exclusive = true;
  HFLOW_RETURN_IF_ERROR(Format(l, "NCHW", &nhwc));
  HFLOW_RETURN_IF_ERROR(l->Bool("global_pooling", false, &global));
  if (global) {
    InNchw(l, nhwc, max ? "GlobalMaxPool" : "GlobalAveragePool", x, {}, y, {});
    return Status::OK();
  }
  Attrs attrs;
  HFLOW_RETURN_IF_ERROR(Window(l, nhwc, &attrs));
  HFLOW_RETURN_IF_ERROR(l->Str("padding_mode", "CALCULATED", &mode));
  HFLOW_RETURN_IF_ERROR(l->Bool("ceil_mode", false, &ceil));
  if (mode == "CALCULATED") {
    std::vector<int64_t> pads;
    HFLOW_RETURN_IF_ERROR(l->IntsOfSize("pads", 4, {0, 0, 0, 0},
                                        "top, bottom, left, right", &pads));
    attrs["pads"] = IntsAttr(OnnxPads(pads));
    attrs["ceil_mode"] = IntAttr(ceil);
  } else {
    HFLOW_RETURN_IF_ERROR(AutoPad(l, "padding_mode", mode, &attrs));
  }
  if (!max) {
    int64_t divisor = 0;
    HFLOW_RETURN_IF_ERROR(l->Bool("exclusive", true, &exclusive));
    HFLOW_RETURN_IF_ERROR(l->Int("divisor_override", 0, &divisor));
    if (divisor != 0) {
      return l->Unsupported("attribute 'divisor_override' must be 0, got " +
                            std::to_string(divisor));
    }
    attrs["count_include_pad"] = IntAttr(!exclusive);
  }
  InNchw(l, nhwc, max ? "MaxPool" : "AveragePool", x, {}, y, std::move(attrs));
  return Status::OK();
}

// GlobalAveragePool (NCHW), and AdaptiveAvgPool2d to a 1x1 output.
Status GlobalAvg(Lowering* l) {
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  if (l->op().type == "AdaptiveAvgPool2d") {
    std::vector<int64_t> size;
    HFLOW_RETURN_IF_ERROR(l->RequiredInts("output_size", &size));
    if (size != std::vector<int64_t>{1, 1}) {
      return l->Unsupported(
          "attribute 'output_size' must be [1, 1] (a global average), got " +
          ShapeText(size));
    }
  }
  l->Emit1("GlobalAveragePool", {x}, y);
  return Status::OK();
}

// Inference only (is_training=false): GE's default, true, normalizes with
// the batch's own statistics, a training computation.
Status BatchNorm(Lowering* l) {
  std::string x, scale, offset, mean, variance, y;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  HFLOW_RETURN_IF_ERROR(l->Need("scale", &scale));
  HFLOW_RETURN_IF_ERROR(l->Need("offset", &offset));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  bool training = true, nhwc = true;
  HFLOW_RETURN_IF_ERROR(l->Bool("is_training", true, &training));
  if (training) {
    return l->Unsupported(
        "attribute 'is_training' is true (GE's default), which normalizes "
        "with the batch's own statistics (training); set is_training=false "
        "for inference with the 'mean' and 'variance' inputs");
  }
  HFLOW_RETURN_IF_ERROR(l->Need("mean", &mean));
  HFLOW_RETURN_IF_ERROR(l->Need("variance", &variance));
  double eps = 0;
  HFLOW_RETURN_IF_ERROR(l->Float("epsilon", 1e-4, &eps));
  HFLOW_RETURN_IF_ERROR(Format(l, "NHWC", &nhwc));
  InNchw(l, nhwc, "BatchNormalization", x, {scale, offset, mean, variance}, y,
         {{"epsilon", FloatAttr(eps)}});
  // At inference GE passes the statistics through: batch_mean and
  // reserve_space_1 are the mean, batch_variance and reserve_space_2 the
  // variance (reserve_space_3 holds nothing).
  for (size_t i = 1; i <= 4 && i < l->OutputCount(); ++i) {
    if (!l->op().outputs[i].empty()) {
      l->Emit1("Identity", {i % 2 ? mean : variance}, l->op().outputs[i]);
    }
  }
  return Status::OK();
}

// y only: the IR's LayerNormalization gives no mean and variance.
Status LayerNorm(Lowering* l) {
  std::string x, gamma, beta, y;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  HFLOW_RETURN_IF_ERROR(l->Need("gamma", &gamma));
  HFLOW_RETURN_IF_ERROR(l->Need("beta", &beta));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  int64_t norm = 0, params = 0;
  double eps = 0;
  HFLOW_RETURN_IF_ERROR(l->Int("begin_norm_axis", 0, &norm));
  HFLOW_RETURN_IF_ERROR(l->Int("begin_params_axis", 0, &params));
  HFLOW_RETURN_IF_ERROR(l->Float("epsilon", 1e-7, &eps));
  const int64_t rank = l->RankOf(x);
  auto norm_axis = [rank](int64_t a) {
    return a < 0 && rank > 0 ? a + rank : a;
  };
  if (norm_axis(norm) != norm_axis(params)) {
    return l->Unsupported(
        "attributes 'begin_norm_axis' (" + std::to_string(norm) +
        ") and 'begin_params_axis' (" + std::to_string(params) +
        ") must name the same axis: gamma and beta must cover the "
        "normalized dims");
  }
  l->Emit1("LayerNormalization", {x, gamma, beta}, y,
           {{"axis", IntAttr(norm)}, {"epsilon", FloatAttr(eps)}});
  return Status::OK();
}

// MatMul and MatMulV2: 2-D, bias optional.
Status MatMul(Lowering* l) {
  std::string x1, x2, y;
  HFLOW_RETURN_IF_ERROR(l->Need("x1", &x1));
  HFLOW_RETURN_IF_ERROR(l->Need("x2", &x2));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  HFLOW_RETURN_IF_ERROR(NoQuantization(l));
  bool ta = false, tb = false;
  HFLOW_RETURN_IF_ERROR(l->Bool("transpose_x1", false, &ta));
  HFLOW_RETURN_IF_ERROR(l->Bool("transpose_x2", false, &tb));
  std::vector<std::string> in{x1, x2};
  if (!l->In("bias").empty()) in.push_back(l->In("bias"));
  l->Emit1("Gemm", in, y, {{"transA", IntAttr(ta)}, {"transB", IntAttr(tb)}});
  return Status::OK();
}

// BatchMatMul and BatchMatMulV2: numpy-style batched products; adj_x*
// swap an operand's last two dims, which takes its rank (the IR's
// Transpose lists every dim).
Status BatchMatMul(Lowering* l) {
  std::string in[2], y;
  HFLOW_RETURN_IF_ERROR(l->Need("x1", &in[0]));
  HFLOW_RETURN_IF_ERROR(l->Need("x2", &in[1]));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  HFLOW_RETURN_IF_ERROR(NoQuantization(l));
  const char* names[2] = {"x1", "x2"};
  for (int i = 0; i < 2; ++i) {
    bool adj = false;
    HFLOW_RETURN_IF_ERROR(l->Bool(i == 0 ? "adj_x1" : "adj_x2", false, &adj));
    if (!adj) continue;
    const int64_t rank = l->RankOf(in[i]);
    if (rank < 2) {
      return l->Unsupported(
          std::string("adj_") + names[i] + "=true needs input '" + names[i] +
          "' to have a known rank >= 2 (a Data op with a shape, or a Const "
          "op)");
    }
    std::vector<int64_t> perm;
    for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
    std::swap(perm[rank - 1], perm[rank - 2]);
    in[i] = l->Emit1("Transpose", {in[i]}, l->Tmp(std::string(names[i]) + "_t"),
                     {{"perm", IntsAttr(perm)}});
  }
  const std::string bias = l->In("bias");
  if (bias.empty()) {
    l->Emit1("MatMul", {in[0], in[1]}, y);
  } else {
    l->Emit1("Add",
             {l->Emit1("MatMul", {in[0], in[1]}, l->Tmp("product")), bias}, y);
  }
  return Status::OK();
}

// The bias along the channel axis: the last for NHWC, 1 for NCHW.
Status BiasAdd(Lowering* l) {
  std::string x, bias, y, f;
  HFLOW_RETURN_IF_ERROR(l->Need("x", &x));
  HFLOW_RETURN_IF_ERROR(l->Need("bias", &bias));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  HFLOW_RETURN_IF_ERROR(l->Str("data_format", "NHWC", &f));
  if (f == "NCHW" || f == "NCDHW") {
    std::vector<int64_t> shape(f.size() - 1, 1);  // [C, 1, 1(, 1)]
    shape[0] = -1;
    bias = l->Emit1("Reshape", {bias, l->AddInts("bias_shape", shape)},
                    l->Tmp("bias_c11"));
  } else if (f != "NHWC" && f != "NDHWC" && f != "ND") {
    return l->Unsupported(
        "attribute 'data_format' must be NHWC, NCHW, NDHWC or NCDHW, got '" +
        f + "'");
  }
  l->Emit1("Add", {x, bias}, y);
  return Status::OK();
}

// SoftmaxV2 and LogSoftmaxV2, over one axis.
Status Softmax(Lowering* l) {
  const bool log = l->op().type == "LogSoftmaxV2";
  std::string x, y;
  HFLOW_RETURN_IF_ERROR(l->Need(log ? "logits" : "x", &x));
  HFLOW_RETURN_IF_ERROR(l->Out(0, &y));
  std::vector<int64_t> axes;
  HFLOW_RETURN_IF_ERROR(l->Ints("axes", {-1}, &axes));
  if (axes.size() != 1) {
    return l->Unsupported("attribute 'axes' must have 1 entry, got " +
                          std::to_string(axes.size()));
  }
  bool to_float = false;
  if (!log) HFLOW_RETURN_IF_ERROR(l->Bool("half_to_float", false, &to_float));
  const char* type = log ? "LogSoftmax" : "Softmax";
  const Attrs attrs{{"axis", IntAttr(axes[0])}};
  if (!to_float) {
    l->Emit1(type, {x}, y, attrs);
  } else {  // a float16 input gives float32
    l->Emit1("Cast", {l->Emit1(type, {x}, l->Tmp("softmax"), attrs)}, y,
             {{"to", IntAttr(1)}});
  }
  return Status::OK();
}

}  // namespace

void AddNnLowerings(LowerTable* t) {
  (*t)["Conv2D"] = Conv;
  (*t)["DepthwiseConv2D"] = Conv;
  (*t)["MaxPool"] = TfPool;
  (*t)["AvgPool"] = TfPool;
  (*t)["MaxPoolV3"] = PoolV2;
  (*t)["AvgPoolV2"] = PoolV2;
  (*t)["GlobalAveragePool"] = GlobalAvg;
  (*t)["AdaptiveAvgPool2d"] = GlobalAvg;
  (*t)["BatchNorm"] = BatchNorm;
  (*t)["LayerNorm"] = LayerNorm;
  (*t)["MatMul"] = MatMul;
  (*t)["MatMulV2"] = MatMul;
  (*t)["BatchMatMul"] = BatchMatMul;
  (*t)["BatchMatMulV2"] = BatchMatMul;
  (*t)["BiasAdd"] = BiasAdd;
  (*t)["SoftmaxV2"] = Softmax;
  (*t)["LogSoftmaxV2"] = Softmax;
}

}  // namespace ge_lower
}  // namespace model
}  // namespace hflow
