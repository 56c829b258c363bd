// ONNX → ModelIr (see onnx_import.h).
//
// Thread-safety: reentrant.
#include "model/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <cstring>
#include <memory>
#include <set>
#include <sstream>

#include "model/mapped_file.h"
#include "model/onnx_wire.h"
#include "model/proto_file.h"

namespace hflow {
namespace model {
namespace {

Status ToDataType(int32_t onnx_type, const std::string& where, DataType* out) {
  using T = onnx::TensorProto;
  switch (onnx_type) {
    case T::FLOAT:
      *out = DataType::DT_FLOAT;
      return Status::OK();
    case T::UINT8:
      *out = DataType::DT_UINT8;
      return Status::OK();
    case T::INT8:
      *out = DataType::DT_INT8;
      return Status::OK();
    case T::UINT16:
      *out = DataType::DT_UINT16;
      return Status::OK();
    case T::INT16:
      *out = DataType::DT_INT16;
      return Status::OK();
    case T::INT32:
      *out = DataType::DT_INT32;
      return Status::OK();
    case T::INT64:
      *out = DataType::DT_INT64;
      return Status::OK();
    case T::BOOL:
      *out = DataType::DT_BOOL;
      return Status::OK();
    case T::FLOAT16:
      *out = DataType::DT_FLOAT16;
      return Status::OK();
    case T::DOUBLE:
      *out = DataType::DT_DOUBLE;
      return Status::OK();
    case T::UINT32:
      *out = DataType::DT_UINT32;
      return Status::OK();
    case T::UINT64:
      *out = DataType::DT_UINT64;
      return Status::OK();
    case T::BFLOAT16:
      *out = DataType::DT_BF16;
      return Status::OK();
    default:
      return Status::NotSupported(
          where + ": ONNX element type " + std::to_string(onnx_type) + " (" +
          T::DataType_Name(onnx_type) +
          ") is not supported; the model executor holds the numeric types "
          "and bool");
  }
}

// Typed repeated fields, for tensors without raw_data.
template <typename Field, typename T>
void AppendAs(const Field& field, std::string* bytes) {
  for (const auto& v : field) {
    T x = static_cast<T>(v);
    bytes->append(reinterpret_cast<const char*>(&x), sizeof(T));
  }
}

// Takes `p`'s data: raw data is moved, not copied (a model's weights are
// most of its bytes).
Status TakeTensor(onnx::TensorProto* mp, const std::string& where,
                  IrTensor* out) {
  const onnx::TensorProto& p = *mp;
  HFLOW_RETURN_IF_ERROR(ToDataType(p.data_type(), where, &out->dtype));
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    return Status::NotSupported(where +
                                ": tensor data stored outside the file "
                                "(external data) is not supported; export "
                                "the model as one file");
  }
  out->dims.assign(p.dims().begin(), p.dims().end());
  for (int64_t d : out->dims) {
    if (d < 0) {
      return Status::InvalidArgument(where + ": a constant has a negative dim");
    }
  }
  if (p.has_raw_data()) {
    out->bytes.swap(*mp->mutable_raw_data());
    return Status::OK();
  }
  std::string& b = out->bytes;
  switch (out->dtype) {
    case DataType::DT_FLOAT:
      AppendAs<decltype(p.float_data()), float>(p.float_data(), &b);
      break;
    case DataType::DT_DOUBLE:
      AppendAs<decltype(p.double_data()), double>(p.double_data(), &b);
      break;
    case DataType::DT_INT64:
      AppendAs<decltype(p.int64_data()), int64_t>(p.int64_data(), &b);
      break;
    case DataType::DT_UINT64:
      AppendAs<decltype(p.uint64_data()), uint64_t>(p.uint64_data(), &b);
      break;
    case DataType::DT_UINT32:
      AppendAs<decltype(p.uint64_data()), uint32_t>(p.uint64_data(), &b);
      break;
    case DataType::DT_INT32:
      AppendAs<decltype(p.int32_data()), int32_t>(p.int32_data(), &b);
      break;
    case DataType::DT_INT16:
      AppendAs<decltype(p.int32_data()), int16_t>(p.int32_data(), &b);
      break;
    case DataType::DT_UINT16:
    case DataType::DT_FLOAT16:
    case DataType::DT_BF16:
      AppendAs<decltype(p.int32_data()), uint16_t>(p.int32_data(), &b);
      break;
    case DataType::DT_INT8:
      AppendAs<decltype(p.int32_data()), int8_t>(p.int32_data(), &b);
      break;
    case DataType::DT_UINT8:
    case DataType::DT_BOOL:
      AppendAs<decltype(p.int32_data()), uint8_t>(p.int32_data(), &b);
      break;
    default:
      break;
  }
  return Status::OK();
}

Status ToTensor(const onnx::TensorProto& p, const std::string& where,
                IrTensor* out) {
  onnx::TensorProto copy = p;
  return TakeTensor(&copy, where, out);
}

Status ToAttr(const onnx::AttributeProto& a, const std::string& where,
              IrAttr* out) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT:
      out->kind = IrAttr::Kind::kInt;
      out->i = a.i();
      break;
    case A::FLOAT:
      out->kind = IrAttr::Kind::kFloat;
      out->f = a.f();
      break;
    case A::STRING:
      out->kind = IrAttr::Kind::kString;
      out->s = a.s();
      break;
    case A::INTS:
      out->kind = IrAttr::Kind::kInts;
      out->ints.assign(a.ints().begin(), a.ints().end());
      break;
    case A::FLOATS:
      out->kind = IrAttr::Kind::kFloats;
      out->floats.assign(a.floats().begin(), a.floats().end());
      break;
    case A::STRINGS:
      out->kind = IrAttr::Kind::kStrings;
      out->strings.assign(a.strings().begin(), a.strings().end());
      break;
    case A::TENSOR:
      out->kind = IrAttr::Kind::kTensor;
      return ToTensor(a.t(), where + " attribute '" + a.name() + "'", &out->t);
    default:
      return Status::NotSupported(
          where + ": attribute '" + a.name() + "' of type " +
          A::AttributeType_Name(a.type()) + " is not supported");
  }
  return Status::OK();
}

Status ToValue(const onnx::ValueInfoProto& v, const std::string& where,
               IrValue* out) {
  out->name = v.name();
  if (!v.type().has_tensor_type()) {
    return Status::NotSupported(where + " '" + v.name() +
                                "' is not a tensor (sequences and maps are "
                                "not supported)");
  }
  const auto& t = v.type().tensor_type();
  HFLOW_RETURN_IF_ERROR(
      ToDataType(t.elem_type(), where + " '" + v.name() + "'", &out->dtype));
  out->has_shape = t.has_shape();
  for (const auto& d : t.shape().dim()) {
    out->dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return Status::OK();
}

// A Constant node's value as a tensor (value, value_float(s), value_int(s)).
Status ConstantValue(const onnx::NodeProto& n, const std::string& where,
                     IrTensor* out) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") return ToTensor(a.t(), where, out);
    if (a.name() == "value_float" || a.name() == "value_floats") {
      out->dtype = DataType::DT_FLOAT;
      if (a.name() == "value_floats") out->dims = {a.floats_size()};
      if (a.name() == "value_float") {
        AppendAs<std::vector<float>, float>({a.f()}, &out->bytes);
      } else {
        AppendAs<decltype(a.floats()), float>(a.floats(), &out->bytes);
      }
      return Status::OK();
    }
    if (a.name() == "value_int" || a.name() == "value_ints") {
      out->dtype = DataType::DT_INT64;
      if (a.name() == "value_ints") out->dims = {a.ints_size()};
      if (a.name() == "value_int") {
        AppendAs<std::vector<int64_t>, int64_t>({a.i()}, &out->bytes);
      } else {
        AppendAs<decltype(a.ints()), int64_t>(a.ints(), &out->bytes);
      }
      return Status::OK();
    }
  }
  return Status::NotSupported(where + ": a Constant without a numeric value");
}

Status CheckOpset(const onnx::ModelProto& m, const std::string& source,
                  int64_t* out) {
  int64_t opset = -1;
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = o.version();
  }
  if (opset < 0) {
    return Status::InvalidArgument(source +
                                   ": the model imports no opset of the "
                                   "default ONNX domain");
  }
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset) {
    return Status::NotSupported(source + ": opset " + std::to_string(opset) +
                                " is outside the supported range " +
                                std::to_string(kMinOnnxOpset) + " to " +
                                std::to_string(kMaxOnnxOpset) +
                                "; export with opset_version in that range");
  }
  *out = opset;
  return Status::OK();
}

// Where the initializers' raw data lies when the parse left it out
// (Note [Weights from the mapped file]): spans into [data, ...), which
// `owner` keeps alive. Empty spans: the parse holds the data.
struct Weights {
  std::shared_ptr<const void> owner;
  const char* data = nullptr;
  std::vector<WireSpan> spans;
};

// Takes the initializers' data out of `m` (or views it in `weights`).
Status Convert(onnx::ModelProto* m, const std::string& source, int64_t opset,
               const Weights& weights, ModelIr* ir) {
  ir->source = source;
  const onnx::GraphProto& g = m->graph();
  std::set<std::string> constants;
  size_t index = 0;
  for (auto& init : *m->mutable_graph()->mutable_initializer()) {
    IrTensor t;
    HFLOW_RETURN_IF_ERROR(
        TakeTensor(&init, source + ": initializer '" + init.name() + "'", &t));
    if (index < weights.spans.size() && weights.spans[index].present) {
      const WireSpan& span = weights.spans[index];
      t.bytes.clear();  // the stand-in (onnx_wire.h)
      t.mapping = weights.owner;
      t.mapped = std::string_view(weights.data + span.offset, span.size);
    }
    ++index;
    ir->constants.emplace_back(init.name(), std::move(t));
    constants.insert(init.name());
  }
  for (const auto& v : g.input()) {
    if (constants.count(v.name())) continue;
    IrValue value;
    HFLOW_RETURN_IF_ERROR(ToValue(v, source + ": input", &value));
    ir->inputs.push_back(std::move(value));
  }
  for (const auto& v : g.output()) {
    IrValue value;
    HFLOW_RETURN_IF_ERROR(ToValue(v, source + ": output", &value));
    ir->outputs.push_back(std::move(value));
  }
  int unnamed = 0;
  for (const auto& n : g.node()) {
    IrNode node;
    node.op = n.op_type();
    node.name =
        n.name().empty() ? node.op + "_" + std::to_string(unnamed++) : n.name();
    const std::string where = source + ": " + node.Describe();
    if (!n.domain().empty() && n.domain() != "ai.onnx") {
      return Status::NotSupported(where + ": operators of domain '" +
                                  n.domain() + "' are not supported");
    }
    if (node.op == "Constant") {
      IrTensor t;
      HFLOW_RETURN_IF_ERROR(ConstantValue(n, where, &t));
      if (n.output_size() != 1) {
        return Status::InvalidArgument(where + ": needs one output");
      }
      ir->constants.emplace_back(n.output(0), std::move(t));
      continue;
    }
    node.inputs.assign(n.input().begin(), n.input().end());
    node.outputs.assign(n.output().begin(), n.output().end());
    for (const auto& a : n.attribute()) {
      IrAttr attr;
      HFLOW_RETURN_IF_ERROR(ToAttr(a, where, &attr));
      node.attrs[a.name()] = std::move(attr);
    }
    // Before opset 13 these saw their input as 2-D at `axis` (default 1).
    if (opset < 13 && (node.op == "Softmax" || node.op == "LogSoftmax")) {
      IrAttr coerce;
      coerce.i = 1;
      node.attrs["coerce_2d"] = coerce;
    }
    ir->nodes.push_back(std::move(node));
  }
  return Status::OK();
}

}  // namespace

Status ApplyInputShape(const std::string& spec, ModelIr* ir) {
  std::stringstream entries(spec);
  std::string entry;
  while (std::getline(entries, entry, ';')) {
    if (entry.empty()) continue;
    const size_t colon = entry.rfind(':');
    if (colon == std::string::npos) {
      return Status::InvalidArgument("load param input_shape: '" + entry +
                                     "' must read name:d0,d1,...");
    }
    const std::string name = entry.substr(0, colon);
    std::vector<int64_t> dims;
    std::stringstream ds(entry.substr(colon + 1));
    std::string d;
    while (std::getline(ds, d, ',')) {
      char* end = nullptr;
      const long long v = std::strtoll(d.c_str(), &end, 10);
      if (d.empty() || *end != '\0' || v < -1) {
        return Status::InvalidArgument("load param input_shape: '" + d +
                                       "' in '" + entry +
                                       "' is not a dim (an integer >= -1)");
      }
      dims.push_back(v);
    }
    bool found = false;
    for (IrValue& v : ir->inputs) {
      // A TensorFlow input is the tensor "node:0"; GE names it by node.
      if (v.name == name || v.name == name + ":0") {
        v.dims = dims;
        v.has_shape = true;
        found = true;
      }
    }
    if (!found) {
      std::string names;
      for (const IrValue& v : ir->inputs) names += " '" + v.name + "'";
      return Status::InvalidArgument(
          "load param input_shape: the model has "
          "no input '" +
          name + "'; its inputs:" + names);
    }
  }
  return Status::OK();
}

namespace {

Status CheckParams(const std::string& source,
                   const std::map<std::string, std::string>& params) {
  for (const auto& [key, value] : params) {
    if (key != "input_shape" && key != "input_format") {
      return Status::InvalidArgument(
          source + ": load param '" + key +
          "' is not known to the ONNX parser; give input_shape or "
          "input_format");
    }
  }
  return Status::OK();
}

// The parsed model `m` (its data taken) into `out`.
Status FromProto(onnx::ModelProto* m, const std::string& source,
                 const std::map<std::string, std::string>& params,
                 const Weights& weights, ModelIr* out) {
  int64_t opset = 0;
  HFLOW_RETURN_IF_ERROR(CheckOpset(*m, source, &opset));
  try {
    onnx::checker::check_model(*m);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(
        source + ": the ONNX checker rejects the model: " + e.what());
  }
  ModelIr ir;
  HFLOW_RETURN_IF_ERROR(Convert(m, source, opset, weights, &ir));
  if (auto it = params.find("input_shape"); it != params.end()) {
    HFLOW_RETURN_IF_ERROR(
        ApplyInputShape(it->second, &ir).WithContext(source + ": "));
  }
  HFLOW_RETURN_IF_ERROR(CheckIr(ir));
  *out = std::move(ir);
  return Status::OK();
}

constexpr char kNotAModel[] =
    ": not an ONNX model (the file is empty, truncated or not a ModelProto)";

// The model in [data, data + size), which `owner` keeps alive: parsed
// without its weights, which the constants view where they lie (Note
// [Weights from the mapped file]), or whole when the walk gives up.
Status ImportOnnxArray(std::shared_ptr<const void> owner, const char* data,
                       size_t size, const std::string& source,
                       const std::map<std::string, std::string>& params,
                       ModelIr* out) {
  HFLOW_RETURN_IF_ERROR(CheckParams(source, params));
  onnx::ModelProto m;
  Weights weights;
  std::string skeleton;
  bool parsed = false;
  if (SplitInitializerData(data, size, &skeleton, &weights.spans)) {
    parsed = m.ParseFromString(skeleton);
    weights.owner = std::move(owner);
    weights.data = data;
  } else if (size > 0 && size < INT_MAX) {
    weights.spans.clear();
    parsed = m.ParseFromArray(data, static_cast<int>(size));
  }
  if (!parsed) return Status::InvalidArgument(source + kNotAModel);
  return FromProto(&m, source, params, weights, out);
}

}  // namespace

Status ImportOnnxBytes(const std::string& bytes, const std::string& source,
                       const std::map<std::string, std::string>& params,
                       ModelIr* out) {
  // The caller's bytes may not outlive the model: the weights keep a copy.
  auto owned = std::make_shared<const std::string>(bytes);
  return ImportOnnxArray(owned, owned->data(), owned->size(), source, params,
                         out);
}

// Mapped, not read: the constants view their weights in the mapping, and
// the upload copies them once, from the file to the device.
Status ImportOnnxFile(const std::string& path,
                      const std::map<std::string, std::string>& params,
                      ModelIr* out) {
  HFLOW_RETURN_IF_ERROR(CheckParams(path, params));
  std::shared_ptr<const MappedFile> file;
  HFLOW_RETURN_IF_ERROR(MappedFile::Open(path, &file));
  if (file != nullptr) {
    return ImportOnnxArray(file, file->data(), file->size(), path, params, out);
  }
  // Not mappable as one array (2 GiB and up, not a regular file).
  onnx::ModelProto m;
  bool parsed = false;
  HFLOW_RETURN_IF_ERROR(ParseProtoFile(path, &m, &parsed));
  if (!parsed) return Status::InvalidArgument(path + kNotAModel);
  return FromProto(&m, path, params, Weights(), out);
}

}  // namespace model
}  // namespace hflow
