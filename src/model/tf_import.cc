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
#include "model/tf_importer.h"

namespace hflow {
namespace model {
namespace {

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

}  // namespace

namespace tf_import_internal {

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

}  // namespace tf_import_internal

namespace {

using tf_import_internal::Importer;

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
