// The TensorFlow importer's operators (tf_importer.h): each TensorFlow
// operator as IR nodes, NHWC operators wrapped in transposes (Note
// [TensorFlow's layouts] in tf_import.cc).
//
// Thread-safety: an Importer belongs to one import.
#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/onnx_import.h"
#include "model/tf_importer.h"

namespace hflow {
namespace model {
namespace tf_import_internal {

// Operators whose IR counterpart takes the same inputs and meaning.
Status Importer::Same(const tf::NodeDef& n) {
  static const std::map<std::string, std::pair<const char*, int>> kOps = {
      {"Identity", {"Identity", 1}},
      {"Add", {"Add", 2}},
      {"AddV2", {"Add", 2}},
      {"Sub", {"Sub", 2}},
      {"Mul", {"Mul", 2}},
      {"RealDiv", {"Div", 2}},
      {"Relu", {"Relu", 1}},
      {"Sigmoid", {"Sigmoid", 1}},
      {"Tanh", {"Tanh", 1}},
      {"Softmax", {"Softmax", 1}},
      {"ExpandDims", {"Unsqueeze", 2}}};
  const auto& [op, count] = kOps.at(n.op());
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, count));
  std::vector<std::string> in;
  for (int i = 0; i < count; ++i) in.push_back(In(n, i));
  Emit(op, n.name(), in);
  return Status::OK();
}

Status Importer::MatMul(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 2));
  const tf::AttrValue* ta = Attr(n, "transpose_a");
  const tf::AttrValue* tb = Attr(n, "transpose_b");
  Emit(
      "Gemm", n.name(), {In(n, 0), In(n, 1)},
      {{"transA", IntAttr(ta && ta->b())}, {"transB", IntAttr(tb && tb->b())}});
  return Status::OK();
}

Status Importer::BiasAdd(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 2));
  if (Nhwc(n)) {  // the bias broadcasts along the last dim
    Emit("Add", n.name(), {In(n, 0), In(n, 1)});
    return Status::OK();
  }
  const IrTensor* b;
  HFLOW_RETURN_IF_ERROR(ConstInput(n, 1, &b));
  IrTensor c = *b;
  c.dims = {b->NumElements(), 1, 1};
  Emit("Add", n.name(), {In(n, 0), AddConst(n.name() + "/bias_chw", c)});
  return Status::OK();
}

Status Importer::Nchw(const tf::NodeDef& n, const std::string& op,
                      const std::vector<std::string>& extra,
                      std::map<std::string, IrAttr> attrs) {
  if (!Nhwc(n)) {
    std::vector<std::string> in{In(n, 0)};
    in.insert(in.end(), extra.begin(), extra.end());
    Emit(op, n.name(), in, std::move(attrs));
    return Status::OK();
  }
  std::string x = Emit("Transpose", n.name() + "/to_nchw", {In(n, 0)},
                       {{"perm", IntsAttr({0, 3, 1, 2})}});
  std::vector<std::string> in{x};
  in.insert(in.end(), extra.begin(), extra.end());
  x = Emit(op, n.name() + "/nchw", in, std::move(attrs));
  Emit("Transpose", n.name(), {x}, {{"perm", IntsAttr({0, 2, 3, 1})}});
  return Status::OK();
}

Status Importer::Padding(const tf::NodeDef& n,
                         std::map<std::string, IrAttr>* attrs) {
  const std::string p = Str(n, "padding", "VALID");
  if (p == "SAME") {
    (*attrs)["auto_pad"] = StringAttr("SAME_UPPER");
  } else if (p == "VALID") {
    (*attrs)["auto_pad"] = StringAttr("VALID");
  } else if (p == "EXPLICIT") {
    const std::vector<int64_t> e = Ints(n, "explicit_paddings");
    if (e.size() != 8) return Error(n, "explicit_paddings needs 8 values");
    const int h = Nhwc(n) ? 1 : 2, w = Nhwc(n) ? 2 : 3;
    (*attrs)["pads"] =
        IntsAttr({e[2 * h], e[2 * w], e[2 * h + 1], e[2 * w + 1]});
  } else {
    return Error(n, "padding '" + p + "' is not SAME, VALID or EXPLICIT");
  }
  return Status::OK();
}

Status Importer::Conv(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 2));
  const IrTensor* f;
  HFLOW_RETURN_IF_ERROR(ConstInput(n, 1, &f));
  if (f->dims.size() != 4) return Error(n, "the filter must be 4-D");
  std::map<std::string, IrAttr> attrs;
  HFLOW_RETURN_IF_ERROR(Padding(n, &attrs));
  attrs["strides"] = IntsAttr(Spatial(n, "strides"));
  attrs["dilations"] = IntsAttr(Spatial(n, "dilations"));
  IrTensor w;
  if (n.op() == "Conv2D") {  // HWIO -> OIHW
    w = Permute(*f, {3, 2, 0, 1});
  } else {  // HWCM -> (C*M)1HW, one group per input channel
    w = Permute(*f, {2, 3, 0, 1});
    const int64_t c = f->dims[2], m = f->dims[3];
    w.dims = {c * m, 1, f->dims[0], f->dims[1]};
    attrs["group"] = IntAttr(c);
  }
  return Nchw(n, "Conv", {AddConst(n.name() + "/filter_oihw", std::move(w))},
              std::move(attrs));
}

Status Importer::Pool(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 1));
  std::map<std::string, IrAttr> attrs;
  HFLOW_RETURN_IF_ERROR(Padding(n, &attrs));
  attrs["kernel_shape"] = IntsAttr(Spatial(n, "ksize"));
  attrs["strides"] = IntsAttr(Spatial(n, "strides"));
  // TensorFlow's AvgPool averages over the window's real pixels only.
  return Nchw(n, n.op() == "MaxPool" ? "MaxPool" : "AveragePool", {},
              std::move(attrs));
}

Status Importer::BatchNorm(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 5));
  const tf::AttrValue* training = Attr(n, "is_training");
  if (training && training->b()) {
    return Error(n, "is_training=true: freeze the graph for inference");
  }
  const tf::AttrValue* eps = Attr(n, "epsilon");
  return Nchw(n, "BatchNormalization", {In(n, 1), In(n, 2), In(n, 3), In(n, 4)},
              {{"epsilon", FloatAttr(eps ? eps->f() : 1e-4)}});
}

Status Importer::Relu6(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 1));
  Emit("Clip", n.name(), {In(n, 0)},
       {{"min", FloatAttr(0.0)}, {"max", FloatAttr(6.0)}});
  return Status::OK();
}

// TensorFlow's 0 in a shape is an empty dim, not "copy" (allowzero).
Status Importer::Reshape(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 2));
  Emit("Reshape", n.name(), {In(n, 0), In(n, 1)}, {{"allowzero", IntAttr(1)}});
  return Status::OK();
}

Status Importer::Squeeze(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 1));
  std::map<std::string, IrAttr> attrs;
  std::vector<int64_t> axes = Ints(n, "squeeze_dims");
  if (!axes.empty()) attrs["axes"] = IntsAttr(axes);
  Emit("Squeeze", n.name(), {In(n, 0)}, std::move(attrs));
  return Status::OK();
}

Status Importer::Concat(const tf::NodeDef& n) {
  int data = 0;
  for (const auto& in : n.input()) data += in[0] != '^';
  if (data < 2) return Error(n, "needs values and an axis");
  const IrTensor* axis;
  HFLOW_RETURN_IF_ERROR(ConstInput(n, data - 1, &axis));
  std::vector<std::string> in;
  for (int i = 0; i < data - 1; ++i) in.push_back(In(n, i));
  const std::vector<int64_t> a = IntsOfConst(*axis);
  if (a.size() != 1) return Error(n, "the axis must be one integer");
  Emit("Concat", n.name(), in, {{"axis", IntAttr(a[0])}});
  return Status::OK();
}

Status Importer::Reduce(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 2));
  const tf::AttrValue* keep = Attr(n, "keep_dims");
  Emit(n.op() == "Mean" ? "ReduceMean" : "ReduceSum", n.name(),
       {In(n, 0), In(n, 1)}, {{"keepdims", IntAttr(keep && keep->b())}});
  return Status::OK();
}

Status Importer::Cast(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 1));
  const tf::AttrValue* to = Attr(n, "DstT");
  DataType t;
  HFLOW_RETURN_IF_ERROR(ToDataType(to ? to->type() : 0, Where(n), &t));
  Emit("Cast", n.name(), {In(n, 0)}, {{"to", IntAttr(OnnxTypeOf(t))}});
  return Status::OK();
}

// TensorFlow's paddings [[b0,e0],[b1,e1],...] -> ONNX's [b0,b1,...,e0,e1,...].
Status Importer::Pad(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 2));
  const IrTensor* p;
  HFLOW_RETURN_IF_ERROR(ConstInput(n, 1, &p));
  const std::vector<int64_t> v = IntsOfConst(*p);
  if (v.empty() || v.size() % 2 != 0) {
    return Error(n, "paddings must be an integer [rank, 2] constant");
  }
  std::vector<int64_t> pads(v.size());
  const size_t rank = v.size() / 2;
  for (size_t d = 0; d < rank; ++d) {
    pads[d] = v[2 * d];
    pads[rank + d] = v[2 * d + 1];
  }
  IrTensor t;
  t.dtype = DataType::DT_INT64;
  t.dims = {int64_t(pads.size())};
  t.bytes.assign(reinterpret_cast<const char*>(pads.data()), pads.size() * 8);
  Emit("Pad", n.name(), {In(n, 0), AddConst(n.name() + "/pads", std::move(t))});
  return Status::OK();
}

Status Importer::Transpose(const tf::NodeDef& n) {
  HFLOW_RETURN_IF_ERROR(NeedInputs(n, 2));
  const IrTensor* perm;
  HFLOW_RETURN_IF_ERROR(ConstInput(n, 1, &perm));
  Emit("Transpose", n.name(), {In(n, 0)},
       {{"perm", IntsAttr(IntsOfConst(*perm))}});
  return Status::OK();
}

}  // namespace tf_import_internal
}  // namespace model
}  // namespace hflow
