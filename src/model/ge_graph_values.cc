// GeValueReader (ge_graph_values.h): a GE graph file's tensors and
// attributes. Every size is checked before it is used: the file may be
// hostile (fuzz/ge_graph_fuzz.cc).
//
// Thread-safety: reentrant.
#include "model/ge_graph_values.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "flow_func/lib/flow_func_internal.h"

namespace hflow {
namespace model {

using Json = GeValueReader::Json;

Status GeValueReader::Tensor(const Json& t, const std::string& where,
                             IrTensor* out) const {
  if (!t.is_object()) return Error(where + ": a tensor must be an object");
  const FlowFunc::internal::DataTypeInfo* info =
      FlowFunc::internal::FindDataTypeByGeName(t.value("dtype", ""));
  if (info == nullptr || ElementSize(info->dtype) == 0) {
    return Error(where + ": \"dtype\" '" + t.value("dtype", "") +
                 "' is not a data type a model runs on");
  }
  out->dtype = info->dtype;
  if (t.contains("dims") && t["dims"].is_array()) {
    for (const Json& d : t["dims"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) {
        return Error(where + ": \"dims\" must be integers >= 0");
      }
      out->dims.push_back(d.get<int64_t>());
    }
  }
  const int64_t n = out->NumElements();
  size_t size = 0;
  if (n < 0 || __builtin_mul_overflow(static_cast<size_t>(n),
                                      ElementSize(out->dtype), &size)) {
    return Error(where + ": \"dims\" overflow");
  }
  if (t.contains("values")) return Values(t["values"], where, n, out);
  if (!t.contains("offset") || !t["offset"].is_number_unsigned() ||
      !t.contains("size") || !t["size"].is_number_unsigned()) {
    return Error(where +
                 ": a tensor needs \"offset\" and \"size\" (bytes "
                 "in the data section) or inline \"values\"");
  }
  const uint64_t off = t["offset"].get<uint64_t>();
  const uint64_t len = t["size"].get<uint64_t>();
  if (len != size) {
    return Error(where + ": \"size\" is " + std::to_string(len) +
                 " bytes, its dtype and dims make " + std::to_string(size));
  }
  if (off > bytes_.size() || data_start_ + off > bytes_.size() ||
      len > bytes_.size() - data_start_ - off) {
    return Error(where + ": bytes [" + std::to_string(off) + ", " +
                 std::to_string(off + len) +
                 ") run past the end of the data section (truncated file?)");
  }
  out->mapping = owner_;
  out->mapped = bytes_.substr(data_start_ + off, len);
  return Status::OK();
}

// One inline value as a double (float dtypes) and an integer (integer
// dtypes), refusing what the dtype cannot hold: a cast out of range is
// undefined.
Status GeValueReader::Number(const Json& x, DataType dt,
                             const std::string& where, double* d,
                             int64_t* i) const {
  const bool integral = dt != DataType::DT_FLOAT && dt != DataType::DT_DOUBLE &&
                        dt != DataType::DT_FLOAT16 && dt != DataType::DT_BF16;
  if (x.is_boolean()) {
    *i = x.get<bool>() ? 1 : 0;
    *d = static_cast<double>(*i);
  } else if (x.is_number_integer()) {
    *i = x.get<int64_t>();
    *d = static_cast<double>(*i);
  } else {
    *d = x.get<double>();
    if (integral) {
      if (!(*d >= -9.0e18 && *d <= 9.0e18) || *d != std::trunc(*d)) {
        return Error(where + ": \"values\" of " + DataTypeName(dt) +
                     " must be integers");
      }
      *i = static_cast<int64_t>(*d);
    }
  }
  if (dt == DataType::DT_FLOAT && std::isfinite(*d) &&
      std::fabs(*d) > std::numeric_limits<float>::max()) {
    return Error(where + ": a value is out of float32's range");
  }
  return Status::OK();
}

Status GeValueReader::Values(const Json& v, const std::string& where, int64_t n,
                             IrTensor* out) const {
  if (!v.is_array() || static_cast<int64_t>(v.size()) != n) {
    return Error(where + ": \"values\" must list " + std::to_string(n) +
                 " numbers (the product of dims)");
  }
  out->bytes.resize(static_cast<size_t>(n) * ElementSize(out->dtype));
  char* p = out->bytes.data();
  for (const Json& x : v) {
    if (!x.is_number() && !x.is_boolean()) {
      return Error(where + ": \"values\" must be numbers");
    }
    double d = 0;
    int64_t i = 0;
    HFLOW_RETURN_IF_ERROR(Number(x, out->dtype, where, &d, &i));
    switch (out->dtype) {
#define HFLOW_PUT(DT, T, V)          \
  case DataType::DT: {               \
    const T val = static_cast<T>(V); \
    std::memcpy(p, &val, sizeof(T)); \
    p += sizeof(T);                  \
    break;                           \
  }
      HFLOW_PUT(DT_FLOAT, float, d)
      HFLOW_PUT(DT_DOUBLE, double, d)
      HFLOW_PUT(DT_INT8, int8_t, i)
      HFLOW_PUT(DT_UINT8, uint8_t, i)
      HFLOW_PUT(DT_INT16, int16_t, i)
      HFLOW_PUT(DT_INT32, int32_t, i)
      HFLOW_PUT(DT_INT64, int64_t, i)
      HFLOW_PUT(DT_BOOL, uint8_t, i != 0)
#undef HFLOW_PUT
      default:
        return Error(where + ": inline \"values\" are not supported for " +
                     DataTypeName(out->dtype) +
                     "; store it in the data "
                     "section");
    }
  }
  return Status::OK();
}

Status GeValueReader::Attr(const Json& a, const std::string& where,
                           IrAttr* out) const {
  if (!a.is_object() || a.size() != 1) {
    return Error(where +
                 ": an attribute is an object with one key "
                 "(int, float, bool, string, ints, floats, dtype "
                 "or tensor)");
  }
  // Not `*a.items().begin()`: that proxy dies with the full expression.
  const std::string k = a.begin().key();
  const Json& v = a.begin().value();
  using K = IrAttr::Kind;
  if (k == "int" && v.is_number_integer()) {
    out->kind = K::kInt;
    out->i = v.get<int64_t>();
  } else if (k == "bool" && v.is_boolean()) {
    out->kind = K::kInt;
    out->i = v.get<bool>() ? 1 : 0;
  } else if (k == "float" && v.is_number() && std::isfinite(v.get<double>())) {
    out->kind = K::kFloat;
    out->f = v.get<double>();
  } else if (k == "string" && v.is_string()) {
    out->kind = K::kString;
    out->s = v.get<std::string>();
  } else if (k == "ints" && v.is_array()) {
    out->kind = K::kInts;
    for (const Json& x : v) {
      if (!x.is_number_integer()) return Error(where + ": ints must be ints");
      out->ints.push_back(x.get<int64_t>());
    }
  } else if (k == "floats" && v.is_array()) {
    out->kind = K::kFloats;
    for (const Json& x : v) {
      if (!x.is_number() || !std::isfinite(x.get<double>())) {
        return Error(where + ": floats must be finite numbers");
      }
      out->floats.push_back(x.get<double>());
    }
  } else if (k == "dtype" && v.is_string()) {
    const auto* info =
        FlowFunc::internal::FindDataTypeByGeName(v.get<std::string>());
    if (info == nullptr) {
      return Error(where + ": '" + v.get<std::string>() +
                   "' is not one of GE's DT_* names");
    }
    out->kind = K::kInt;
    out->i = static_cast<int64_t>(info->dtype);
  } else if (k == "tensor") {
    out->kind = K::kTensor;
    return Tensor(v, where, &out->t);
  } else {
    return Error(where + ": '" + k +
                 "' is not an attribute kind, or its "
                 "value has the wrong JSON type");
  }
  return Status::OK();
}

}  // namespace model
}  // namespace hflow
