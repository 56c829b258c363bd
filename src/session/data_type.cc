// DataType helpers of the host API (hflow/session.h), read from the one
// dtype table of libflow_func (flow_func_internal.h, Note [One dtype
// table]): the host API's DataType values are GE's TensorDataType numbers,
// and the host names are numpy's.
// Thread-safety: pure functions.
#include "flow_func/lib/flow_func_internal.h"
#include "hflow/session.h"

namespace hflow {
namespace {

// The table's entry for a host API type (one with a host name), or null.
const FlowFunc::internal::DataTypeInfo* Find(DataType dt) {
  const auto* d = FlowFunc::internal::FindDataType(
      static_cast<FlowFunc::TensorDataType>(dt));
  return d != nullptr && d->host_name != nullptr ? d : nullptr;
}

}  // namespace

size_t DataTypeSize(DataType dt) {
  const auto* d = Find(dt);
  return d == nullptr ? 0 : static_cast<size_t>(d->bits / 8);
}

const char* DataTypeName(DataType dt) {
  const auto* d = Find(dt);
  return d == nullptr ? "unknown" : d->host_name;
}

bool ParseDataTypeName(const std::string& name, DataType* out) {
  if (const auto* d = FlowFunc::internal::FindDataTypeByHostName(name)) {
    *out = static_cast<DataType>(d->dtype);
    return true;
  }
  // numpy aliases
  if (name == "float") return ParseDataTypeName("float32", out);
  if (name == "double") return ParseDataTypeName("float64", out);
  if (name == "half") return ParseDataTypeName("float16", out);
  return false;
}

}  // namespace hflow
