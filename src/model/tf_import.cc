// TensorFlow GraphDef → ModelIr (see tf_import.h).
//
// Note [TensorFlow's layouts]
// TensorFlow's image operators default to NHWC, ATen's (and the IR's) are
// NCHW. Each NHWC operator becomes Transpose(0,3,1,2) → the NCHW operator →
// Transpose(0,2,3,1), so the model's inputs and outputs keep TensorFlow's
// layout; a filter that is a constant (as in every frozen graph) is
// rearranged once at import (HWIO → OIHW; depthwise HWCM → (C*M)1HW), not
// on every run. TensorFlow's SAME padding puts the odd pixel at the end:
// ONNX's SAME_UPPER.
//
// Thread-safety: reentrant.
#include "model/tf_import.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include "model/onnx_import.h"
#include "model/proto/tf_graph.pb.h"
#include "model/proto_file.h"

namespace hflow {
namespace model {
namespace {

using AttrMap = google::protobuf::Map<std::string, tf::AttrValue>;

Status ToDataType(int t, const std::string& where, DataType* out) {
  switch (t) {
    case tf::DT_FLOAT:
      *out = DataType::DT_FLOAT;
      return Status::OK();
    case tf::DT_DOUBLE:
      *out = DataType::DT_DOUBLE;
      return Status::OK();
    case tf::DT_INT32:
      *out = DataType::DT_INT32;
      return Status::OK();
    case tf::DT_UINT8:
      *out = DataType::DT_UINT8;
      return Status::OK();
    case tf::DT_INT16:
      *out = DataType::DT_INT16;
      return Status::OK();
    case tf::DT_INT8:
      *out = DataType::DT_INT8;
      return Status::OK();
    case tf::DT_INT64:
      *out = DataType::DT_INT64;
      return Status::OK();
    case tf::DT_BOOL:
      *out = DataType::DT_BOOL;
      return Status::OK();
    case tf::DT_HALF:
      *out = DataType::DT_FLOAT16;
      return Status::OK();
    case tf::DT_BFLOAT16:
      *out = DataType::DT_BF16;
      return Status::OK();
    default:
      return Status::NotSupported(where + ": TensorFlow type " +
                                  std::to_string(t) +
                                  " is not supported; the model executor "
                                  "holds the numeric types and bool");
  }
}

// ONNX's element type number of `t`, for Cast's "to".
int64_t OnnxTypeOf(DataType t) {
  switch (t) {
    case DataType::DT_FLOAT:
      return 1;
    case DataType::DT_UINT8:
      return 2;
    case DataType::DT_INT8:
      return 3;
    case DataType::DT_INT16:
      return 5;
    case DataType::DT_INT32:
      return 6;
    case DataType::DT_INT64:
      return 7;
    case DataType::DT_BOOL:
      return 9;
    case DataType::DT_FLOAT16:
      return 10;
    case DataType::DT_DOUBLE:
      return 11;
    case DataType::DT_BF16:
      return 16;
    default:
      return 0;
  }
}

template <typename T, typename Field>
void Fill(const Field& vals, int64_t n, std::string* bytes) {
  // TensorFlow's rule: fewer values than elements repeat the last one.
  for (int64_t i = 0; i < n; ++i) {
    T v = vals.empty()
              ? T()
              : static_cast<T>(vals[std::min<int64_t>(i, vals.size() - 1)]);
    bytes->append(reinterpret_cast<const char*>(&v), sizeof v);
  }
}

Status ToTensor(const tf::TensorProto& p, const std::string& where,
                IrTensor* out) {
  HFLOW_RETURN_IF_ERROR(ToDataType(p.dtype(), where, &out->dtype));
  for (const auto& d : p.tensor_shape().dim()) {
    if (d.size() < 0) return Status::InvalidArgument(where + ": a dim < 0");
    out->dims.push_back(d.size());
  }
  const int64_t n = out->NumElements();
  if (n < 0 || n > (int64_t(1) << 31)) {
    return Status::InvalidArgument(where + ": the constant is too large");
  }
  if (!p.tensor_content().empty()) {
    out->bytes = p.tensor_content();
    // Checked here, not only by CheckIr: filters are rearranged at import.
    if (out->bytes.size() != size_t(n) * ElementSize(out->dtype)) {
      return Status::InvalidArgument(
          where + ": the constant's " + std::to_string(out->bytes.size()) +
          " bytes do not hold its shape " + ShapeText(out->dims) +
          " (a truncated or corrupt file?)");
    }
    return Status::OK();
  }
  std::string& b = out->bytes;
  switch (out->dtype) {
    case DataType::DT_FLOAT:
      Fill<float>(p.float_val(), n, &b);
      break;
    case DataType::DT_DOUBLE:
      Fill<double>(p.double_val(), n, &b);
      break;
    case DataType::DT_INT64:
      Fill<int64_t>(p.int64_val(), n, &b);
      break;
    case DataType::DT_INT32:
      Fill<int32_t>(p.int_val(), n, &b);
      break;
    case DataType::DT_INT16:
      Fill<int16_t>(p.int_val(), n, &b);
      break;
    case DataType::DT_INT8:
      Fill<int8_t>(p.int_val(), n, &b);
      break;
    case DataType::DT_UINT8:
      Fill<uint8_t>(p.int_val(), n, &b);
      break;
    case DataType::DT_BOOL:
      Fill<uint8_t>(p.bool_val(), n, &b);
      break;
    case DataType::DT_FLOAT16:
    case DataType::DT_BF16:
      Fill<uint16_t>(p.half_val(), n, &b);
      break;
    default:
      break;
  }
  return Status::OK();
}

// "x" -> "x:0"; "x:1" as is; "^x" (a control input) -> "".
std::string ValueOf(const std::string& input) {
  if (!input.empty() && input[0] == '^') return "";
  return input.find(':') == std::string::npos ? input + ":0" : input;
}

IrValue Output(const std::string& name) {
  IrValue v;
  v.name = name;
  v.has_shape = false;  // GraphDefs carry no output types
  return v;
}

std::string NodeOf(const std::string& input) {
  std::string s = input[0] == '^' ? input.substr(1) : input;
  return s.substr(0, s.find(':'));
}

class Importer {
 public:
  explicit Importer(std::string source) : source_(std::move(source)) {}
  Status Run(const tf::GraphDef& g, const std::string& out_nodes, ModelIr* ir);

  using Handler = Status (Importer::*)(const tf::NodeDef&);
  static const std::map<std::string, Handler>& Handlers();

 private:
  std::string Where(const tf::NodeDef& n) const {
    return source_ + ": node '" + n.name() + "' (" + n.op() + ")";
  }
  Status Error(const tf::NodeDef& n, const std::string& what) const {
    return Status::InvalidArgument(Where(n) + ": " + what);
  }
  // The attribute, or null.
  static const tf::AttrValue* Attr(const tf::NodeDef& n, const char* name) {
    auto it = n.attr().find(name);
    return it == n.attr().end() ? nullptr : &it->second;
  }
  std::string Str(const tf::NodeDef& n, const char* name,
                  const std::string& def) const {
    const tf::AttrValue* a = Attr(n, name);
    return a ? a->s() : def;
  }
  std::vector<int64_t> Ints(const tf::NodeDef& n, const char* name) const {
    const tf::AttrValue* a = Attr(n, name);
    if (!a) return {};
    return std::vector<int64_t>(a->list().i().begin(), a->list().i().end());
  }
  // Input i's value name.
  std::string In(const tf::NodeDef& n, int i) const {
    return ValueOf(n.input(i));
  }
  Status NeedInputs(const tf::NodeDef& n, int count) const {
    int data = 0;
    for (const auto& in : n.input()) data += in[0] != '^';
    return data >= count ? Status::OK()
                         : Error(n, "needs " + std::to_string(count) +
                                        " inputs, has " + std::to_string(data));
  }
  // The constant value `v` is, or an error naming what needs it.
  Status ConstInput(const tf::NodeDef& n, int i, const IrTensor** out) const {
    auto it = consts_.find(In(n, i));
    if (it == consts_.end()) {
      return Error(n, "input " + std::to_string(i) +
                          " must be a constant (a Const node) in a frozen "
                          "graph");
    }
    *out = &it->second;
    return Status::OK();
  }
  std::vector<int64_t> IntsOfConst(const IrTensor& t) const;
  std::string AddConst(const std::string& name, IrTensor t) {
    consts_[name] = t;
    ir_->constants.emplace_back(name, std::move(t));
    return name;
  }
  // Emits an IR node; returns its first output's name.
  std::string Emit(const std::string& op, const std::string& name,
                   std::vector<std::string> inputs,
                   std::map<std::string, IrAttr> attrs = {}) {
    IrNode node;
    node.op = op;
    node.name = name;
    node.inputs = std::move(inputs);
    node.outputs = {name + ":0"};
    node.attrs = std::move(attrs);
    ir_->nodes.push_back(std::move(node));
    return name + ":0";
  }
  // The NHWC output of an NCHW op `op` on NHWC `x` (Note [TensorFlow's
  // layouts]); `extra` are its other inputs.
  Status Nchw(const tf::NodeDef& n, const std::string& op,
              const std::vector<std::string>& extra,
              std::map<std::string, IrAttr> attrs);
  bool Nhwc(const tf::NodeDef& n) const {
    return Str(n, "data_format", "NHWC") == "NHWC";
  }
  // Spatial strides, dilations or ksize of a 4-entry NHWC/NCHW list.
  std::vector<int64_t> Spatial(const tf::NodeDef& n, const char* name) const {
    std::vector<int64_t> v = Ints(n, name);
    if (v.size() != 4) return {1, 1};
    return Nhwc(n) ? std::vector<int64_t>{v[1], v[2]}
                   : std::vector<int64_t>{v[2], v[3]};
  }
  Status Padding(const tf::NodeDef& n, std::map<std::string, IrAttr>* attrs);

  Status Placeholder(const tf::NodeDef& n);
  Status Const(const tf::NodeDef& n);
  Status Same(const tf::NodeDef& n);  // one IR op of the same meaning
  Status MatMul(const tf::NodeDef& n);
  Status BiasAdd(const tf::NodeDef& n);
  Status Conv(const tf::NodeDef& n);
  Status Pool(const tf::NodeDef& n);
  Status BatchNorm(const tf::NodeDef& n);
  Status Relu6(const tf::NodeDef& n);
  Status Reshape(const tf::NodeDef& n);
  Status Squeeze(const tf::NodeDef& n);
  Status Concat(const tf::NodeDef& n);
  Status Reduce(const tf::NodeDef& n);
  Status Cast(const tf::NodeDef& n);
  Status Pad(const tf::NodeDef& n);
  Status Transpose(const tf::NodeDef& n);

  const std::string source_;
  ModelIr* ir_ = nullptr;
  std::map<std::string, IrTensor> consts_;  // by value name
};

std::vector<int64_t> Importer::IntsOfConst(const IrTensor& t) const {
  std::vector<int64_t> v;
  if (t.dtype != DataType::DT_INT32 && t.dtype != DataType::DT_INT64) return v;
  const size_t es = ElementSize(t.dtype);
  for (size_t at = 0; at + es <= t.data().size(); at += es) {
    if (t.dtype == DataType::DT_INT64) {
      int64_t x;
      std::memcpy(&x, &t.data()[at], 8);
      v.push_back(x);
    } else {
      int32_t x;
      std::memcpy(&x, &t.data()[at], 4);
      v.push_back(x);
    }
  }
  return v;
}

const std::map<std::string, Importer::Handler>& Importer::Handlers() {
  static const auto* h = new std::map<std::string, Handler>{
      {"Placeholder", &Importer::Placeholder},
      {"Const", &Importer::Const},
      {"Identity", &Importer::Same},
      {"Add", &Importer::Same},
      {"AddV2", &Importer::Same},
      {"Sub", &Importer::Same},
      {"Mul", &Importer::Same},
      {"RealDiv", &Importer::Same},
      {"Relu", &Importer::Same},
      {"Sigmoid", &Importer::Same},
      {"Tanh", &Importer::Same},
      {"Softmax", &Importer::Same},
      {"ExpandDims", &Importer::Same},
      {"MatMul", &Importer::MatMul},
      {"BiasAdd", &Importer::BiasAdd},
      {"Conv2D", &Importer::Conv},
      {"DepthwiseConv2dNative", &Importer::Conv},
      {"MaxPool", &Importer::Pool},
      {"AvgPool", &Importer::Pool},
      {"FusedBatchNorm", &Importer::BatchNorm},
      {"FusedBatchNormV3", &Importer::BatchNorm},
      {"Relu6", &Importer::Relu6},
      {"Reshape", &Importer::Reshape},
      {"Squeeze", &Importer::Squeeze},
      {"ConcatV2", &Importer::Concat},
      {"Mean", &Importer::Reduce},
      {"Sum", &Importer::Reduce},
      {"Cast", &Importer::Cast},
      {"Pad", &Importer::Pad},
      {"Transpose", &Importer::Transpose},
  };
  return *h;
}

Status Importer::Placeholder(const tf::NodeDef& n) {
  IrValue v;
  v.name = n.name() + ":0";
  const tf::AttrValue* dt = Attr(n, "dtype");
  HFLOW_RETURN_IF_ERROR(
      ToDataType(dt ? dt->type() : tf::DT_FLOAT, Where(n), &v.dtype));
  const tf::AttrValue* shape = Attr(n, "shape");
  v.has_shape = shape != nullptr && !shape->shape().unknown_rank();
  if (v.has_shape) {
    for (const auto& d : shape->shape().dim()) v.dims.push_back(d.size());
  }
  ir_->inputs.push_back(std::move(v));
  return Status::OK();
}

Status Importer::Const(const tf::NodeDef& n) {
  const tf::AttrValue* value = Attr(n, "value");
  if (value == nullptr || !value->has_tensor()) {
    return Error(n, "has no tensor 'value'");
  }
  IrTensor t;
  HFLOW_RETURN_IF_ERROR(ToTensor(value->tensor(), Where(n), &t));
  AddConst(n.name() + ":0", std::move(t));
  return Status::OK();
}

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

Status Importer::Run(const tf::GraphDef& g, const std::string& out_nodes,
                     ModelIr* ir) {
  ir_ = ir;
  ir->source = source_;
  // Kahn's order over data inputs (a GraphDef need not be sorted).
  std::map<std::string, int> index;
  for (int i = 0; i < g.node_size(); ++i) {
    if (!index.emplace(g.node(i).name(), i).second) {
      return Status::InvalidArgument(source_ + ": node '" + g.node(i).name() +
                                     "' is defined twice");
    }
  }
  std::vector<int> pending(g.node_size(), 0);
  std::vector<std::vector<int>> users(g.node_size());
  std::set<std::string> read;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& in : g.node(i).input()) {
      auto it = index.find(NodeOf(in));
      if (it == index.end()) {
        return Status::InvalidArgument(Where(g.node(i)) + ": input '" + in +
                                       "' names no node");
      }
      ++pending[i];
      users[it->second].push_back(i);
      if (in[0] != '^') read.insert(ValueOf(in));
    }
  }
  std::vector<int> ready;
  for (int i = g.node_size() - 1; i >= 0; --i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::vector<std::string> missing;
  int done = 0;
  while (!ready.empty()) {
    const tf::NodeDef& n = g.node(ready.back());
    const int at = ready.back();
    ready.pop_back();
    ++done;
    auto h = Handlers().find(n.op());
    if (h == Handlers().end()) {
      if (n.op() != "NoOp")
        missing.push_back(n.op() + " (node '" + n.name() + "')");
    } else if (missing.empty()) {
      HFLOW_RETURN_IF_ERROR((this->*(h->second))(n));
    }
    for (int u : users[at]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  if (!missing.empty()) {
    std::string what;
    for (const std::string& m : missing) what += (what.empty() ? "" : "; ") + m;
    return Status::NotSupported(
        source_ + ": TensorFlow operators the front-end does not map: " + what +
        "; the supported ones are listed in the user guide's \"Model nodes\" "
        "section");
  }
  if (done != g.node_size()) {
    return Status::InvalidArgument(source_ + ": the graph has a cycle");
  }
  if (!out_nodes.empty()) {
    std::stringstream ss(out_nodes);
    std::string o;
    while (std::getline(ss, o, ';')) {
      if (!o.empty()) ir->outputs.push_back(Output(ValueOf(o)));
    }
  } else {
    for (const tf::NodeDef& n : g.node()) {
      const std::string v = n.name() + ":0";
      if (n.op() != "Const" && n.op() != "Placeholder" && n.op() != "NoOp" &&
          read.count(v) == 0) {
        ir->outputs.push_back(Output(v));
      }
    }
  }
  return Status::OK();
}

Status CheckParams(const std::string& source,
                   const std::map<std::string, std::string>& params) {
  for (const auto& [key, value] : params) {
    if (key != "input_shape" && key != "input_format" && key != "out_nodes") {
      return Status::InvalidArgument(
          source + ": load param '" + key +
          "' is not known to the TensorFlow parser; give input_shape, "
          "out_nodes or input_format");
    }
  }
  return Status::OK();
}

Status FromProto(const tf::GraphDef& g, const std::string& source,
                 const std::map<std::string, std::string>& params,
                 ModelIr* out) {
  ModelIr ir;
  auto it = params.find("out_nodes");
  HFLOW_RETURN_IF_ERROR(
      Importer(source).Run(g, it == params.end() ? "" : it->second, &ir));
  if (auto s = params.find("input_shape"); s != params.end()) {
    HFLOW_RETURN_IF_ERROR(
        ApplyInputShape(s->second, &ir).WithContext(source + ": "));
  }
  HFLOW_RETURN_IF_ERROR(CheckIr(ir));
  *out = std::move(ir);
  return Status::OK();
}

constexpr char kNotAGraph[] =
    ": not a TensorFlow GraphDef (the file is empty, truncated or not a "
    "frozen graph)";

}  // namespace

std::vector<std::string> TfOperators() {
  std::vector<std::string> ops;
  for (const auto& [op, h] : Importer::Handlers()) ops.push_back(op);
  return ops;
}

Status ImportTfBytes(const std::string& bytes, const std::string& source,
                     const std::map<std::string, std::string>& params,
                     ModelIr* out) {
  HFLOW_RETURN_IF_ERROR(CheckParams(source, params));
  tf::GraphDef g;
  if (bytes.empty() || !g.ParseFromString(bytes) || g.node_size() == 0) {
    return Status::InvalidArgument(source + kNotAGraph);
  }
  return FromProto(g, source, params, out);
}

Status ImportTfFile(const std::string& path,
                    const std::map<std::string, std::string>& params,
                    ModelIr* out) {
  HFLOW_RETURN_IF_ERROR(CheckParams(path, params));
  tf::GraphDef g;
  bool parsed = false;
  HFLOW_RETURN_IF_ERROR(ParseProtoFile(path, &g, &parsed));
  if (!parsed || g.node_size() == 0)
    return Status::InvalidArgument(path + kNotAGraph);
  return FromProto(g, path, params, out);
}

}  // namespace model
}  // namespace hflow
