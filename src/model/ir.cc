// ModelIr helpers: element sizes, names and the structural check.
//
// Thread-safety: reentrant.
#include "model/ir.h"

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
    if (n < 0 || uint64_t(n) > t.bytes.size() / es) {
      return Status::InvalidArgument(
          ir.source + ": constant '" + name + "' " + ShapeText(t.dims) +
          " has more elements than its " + std::to_string(t.bytes.size()) +
          " bytes hold (a truncated or corrupt file?)");
    }
    if (t.bytes.size() != size_t(n) * es) {
      return Status::InvalidArgument(
          ir.source + ": constant '" + name + "' " + ShapeText(t.dims) +
          " holds " + std::to_string(t.bytes.size()) + " bytes, expected " +
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

}  // namespace model
}  // namespace hflow
