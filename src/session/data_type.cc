// DataType helpers of the host API (hflow/session.h).
// Thread-safety: pure functions.
#include <cstring>

#include "hflow/session.h"

namespace hflow {
namespace {
struct Entry {
  DataType dt;
  const char* name;
  size_t size;
};
const Entry kTypes[] = {
    {DataType::kFloat, "float32", 4},  {DataType::kFloat16, "float16", 2},
    {DataType::kInt8, "int8", 1},      {DataType::kInt32, "int32", 4},
    {DataType::kUint8, "uint8", 1},    {DataType::kInt16, "int16", 2},
    {DataType::kUint16, "uint16", 2},  {DataType::kUint32, "uint32", 4},
    {DataType::kInt64, "int64", 8},    {DataType::kUint64, "uint64", 8},
    {DataType::kDouble, "float64", 8}, {DataType::kBool, "bool", 1},
    {DataType::kBf16, "bfloat16", 2},
};
}  // namespace

size_t DataTypeSize(DataType dt) {
  for (const auto& e : kTypes) {
    if (e.dt == dt) return e.size;
  }
  return 0;
}

const char* DataTypeName(DataType dt) {
  for (const auto& e : kTypes) {
    if (e.dt == dt) return e.name;
  }
  return "unknown";
}

bool ParseDataTypeName(const std::string& name, DataType* out) {
  for (const auto& e : kTypes) {
    if (name == e.name) {
      *out = e.dt;
      return true;
    }
  }
  // numpy aliases
  if (name == "float") return ParseDataTypeName("float32", out);
  if (name == "double") return ParseDataTypeName("float64", out);
  if (name == "half") return ParseDataTypeName("float16", out);
  return false;
}

}  // namespace hflow
