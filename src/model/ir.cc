// ModelIr helpers: element sizes, names and the structural check.
//
// Thread-safety: reentrant.
#include "model/ir.h"

#include <cstring>
#include <set>

#include "flow_func/lib/flow_func_internal.h"

namespace hflow {
namespace model {

// From flow_func's one dtype table (Note [One dtype table]): the types
// with a host name are the ones ATen holds.
size_t ElementSize(DataType t) {
  const FlowFunc::internal::DataTypeInfo* info =
      FlowFunc::internal::FindDataType(t);
  if (info == nullptr || info->host_name == nullptr || info->bits % 8 != 0) {
    return 0;
  }
  return info->bits / 8;
}

std::string DataTypeName(DataType t) {
  const FlowFunc::internal::DataTypeInfo* info =
      FlowFunc::internal::FindDataType(t);
  if (info == nullptr) return "DT_" + std::to_string(static_cast<int32_t>(t));
  return info->host_name != nullptr ? info->host_name : info->ge_name;
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return s + "]";
}

int64_t IrTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

std::string IrNode::Describe() const {
  return "node '" + name + "' (" + op + ")";
}

Status CheckIr(const ModelIr& ir) {
  std::set<std::string> defined;
  auto define = [&](const std::string& v, const std::string& by) -> Status {
    if (v.empty()) return Status::OK();
    if (!defined.insert(v).second) {
      return Status::InvalidArgument(ir.source + ": value '" + v +
                                     "' is defined twice (again by " + by +
                                     ")");
    }
    return Status::OK();
  };
  for (const IrValue& v : ir.inputs) {
    HFLOW_RETURN_IF_ERROR(define(v.name, "input '" + v.name + "'"));
  }
  for (const auto& [name, t] : ir.constants) {
    HFLOW_RETURN_IF_ERROR(define(name, "a constant"));
    const size_t es = ElementSize(t.dtype);
    if (es == 0) {
      return Status::NotSupported(
          ir.source + ": constant '" + name + "' has element type " +
          DataTypeName(t.dtype) + ", which the model executor does not hold");
    }
    const int64_t n = t.NumElements();
    if (n < 0 || uint64_t(n) > t.data().size() / es) {
      return Status::InvalidArgument(
          ir.source + ": constant '" + name + "' " + ShapeText(t.dims) +
          " has more elements than its " + std::to_string(t.data().size()) +
          " bytes hold (a truncated or corrupt file?)");
    }
    if (t.data().size() != size_t(n) * es) {
      return Status::InvalidArgument(
          ir.source + ": constant '" + name + "' " + ShapeText(t.dims) +
          " holds " + std::to_string(t.data().size()) + " bytes, expected " +
          std::to_string(size_t(n) * es) + " (a truncated or corrupt file?)");
    }
  }
  for (const IrNode& n : ir.nodes) {
    for (const std::string& in : n.inputs) {
      if (!in.empty() && defined.count(in) == 0) {
        return Status::InvalidArgument(
            ir.source + ": " + n.Describe() + " reads '" + in +
            "', which no input, constant or earlier node defines");
      }
    }
    for (const std::string& out : n.outputs) {
      HFLOW_RETURN_IF_ERROR(define(out, n.Describe()));
    }
  }
  if (ir.outputs.empty()) {
    return Status::InvalidArgument(ir.source + ": the model has no outputs");
  }
  for (const IrValue& v : ir.outputs) {
    if (defined.count(v.name) == 0) {
      return Status::InvalidArgument(ir.source + ": output '" + v.name +
                                     "' is never computed");
    }
  }
  return Status::OK();
}

IrAttr IntAttr(int64_t v) {
  IrAttr a;
  a.kind = IrAttr::Kind::kInt;
  a.i = v;
  return a;
}
IrAttr IntsAttr(std::vector<int64_t> v) {
  IrAttr a;
  a.kind = IrAttr::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
IrAttr FloatAttr(double v) {
  IrAttr a;
  a.kind = IrAttr::Kind::kFloat;
  a.f = v;
  return a;
}
IrAttr StringAttr(std::string v) {
  IrAttr a;
  a.kind = IrAttr::Kind::kString;
  a.s = std::move(v);
  return a;
}
IrAttr TensorAttr(IrTensor t) {
  IrAttr a;
  a.kind = IrAttr::Kind::kTensor;
  a.t = std::move(t);
  return a;
}

IrTensor Permute(const IrTensor& t, const std::vector<int64_t>& perm) {
  const size_t es = ElementSize(t.dtype);
  const size_t rank = perm.size();
  IrTensor r;
  r.dtype = t.dtype;
  for (int64_t p : perm) r.dims.push_back(t.dims[p]);
  r.bytes.resize(t.data().size());
  // Nothing to move; and with a zero dim the other dims' product (the
  // strides) may not fit in int64.
  if (r.NumElements() <= 0) return r;
  std::vector<int64_t> stride(rank, 1);  // of the source, per source dim
  for (size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * t.dims[i];
  std::vector<int64_t> idx(rank, 0);  // position in the result
  const int64_t n = r.NumElements();
  for (int64_t at = 0; at < n; ++at) {
    int64_t src = 0;
    for (size_t k = 0; k < rank; ++k) src += idx[k] * stride[perm[k]];
    std::memcpy(&r.bytes[size_t(at) * es], &t.data()[size_t(src) * es], es);
    for (size_t k = rank; k-- > 0;) {  // odometer over the result's dims
      if (++idx[k] < r.dims[k]) break;
      idx[k] = 0;
    }
  }
  return r;
}

}  // namespace model
}  // namespace hflow
