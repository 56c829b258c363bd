// AttrValueImpl and JSON conversion (see init_params.h).
// Thread-safety: immutable values; conversion is reentrant.
#include "flow_func/init_params.h"

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "flow_func/flow_func_defines.h"
#include "flow_func/lib/flow_func_internal.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::TensorDataType;
using Json = nlohmann::json;

constexpr int32_t kMismatch = FlowFunc::FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH;

// Exact type match, else a mismatch code.
template <typename T, typename V>
int32_t Get(const V& value, T* out) {
  if (const T* p = std::get_if<T>(&value)) {
    *out = *p;
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  return kMismatch;
}

Status Bad(const std::string& where, const std::string& what) {
  return Status::InvalidArgument(where + ": " + what);
}

// Numbers an attribute can hold: integers within int64 (JSON also carries
// unsigned values up to 2^64-1, which would wrap) and floats within float's
// range (1e300 would become infinity). Anything else is refused, not bent.
bool FitsInt64(const Json& e) {
  return e.is_number_integer() &&
         !(e.is_number_unsigned() &&
           e.get<uint64_t>() >
               static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
}
bool FitsFloat(const Json& e) {
  double d = e.get<double>();
  return std::isfinite(d) && std::fabs(d) <= std::numeric_limits<float>::max();
}
Status CheckNumbers(const Json& j, const std::string& where) {
  if (j.is_array()) {
    for (const auto& e : j) HFLOW_RETURN_IF_ERROR(CheckNumbers(e, where));
    return Status::OK();
  }
  if (j.is_number_integer() && !FitsInt64(j)) {
    return Bad(where, "integer " + j.dump() + " is outside the int64 range");
  }
  if (j.is_number_float() && !FitsFloat(j)) {
    return Bad(where, "number " + j.dump() + " is outside the float range");
  }
  return Status::OK();
}

// Lists: all elements of one kind (an empty list is an empty int list, and
// converts to any list type on GetVal).
Status ListFromJson(const Json& j, const std::string& where,
                    AttrValueImpl::Value* out) {
  if (j.empty()) {
    *out = std::vector<int64_t>{};
    return Status::OK();
  }
  const Json& first = j.front();
  auto all = [&](auto pred) {
    for (const auto& e : j) {
      if (!pred(e)) return false;
    }
    return true;
  };
  TensorDataType dt;
  if (all([](const Json& e) { return e.is_boolean(); })) {
    *out = j.get<std::vector<bool>>();
  } else if (all([](const Json& e) { return e.is_number_integer(); })) {
    *out = j.get<std::vector<int64_t>>();
  } else if (all([](const Json& e) { return e.is_number(); })) {
    *out = j.get<std::vector<float>>();
  } else if (first.is_string() && all([&](const Json& e) {
               return e.is_string() &&
                      ParseDataTypeName(e.get<std::string>(), &dt);
             })) {
    std::vector<TensorDataType> v;
    for (const auto& e : j) {
      ParseDataTypeName(e.get<std::string>(), &dt);
      v.push_back(dt);
    }
    *out = v;
  } else if (all([](const Json& e) { return e.is_string(); })) {
    *out = j.get<std::vector<std::string>>();
  } else if (all([](const Json& e) {
               if (!e.is_array()) return false;
               for (const auto& x : e) {
                 if (!x.is_number_integer()) return false;
               }
               return true;
             })) {
    *out = j.get<std::vector<std::vector<int64_t>>>();
  } else {
    return Bad(where,
               "a list must hold only integers, only numbers, only "
               "booleans, only strings, only DT_* names or only "
               "integer lists");
  }
  return Status::OK();
}

}  // namespace

bool ParseDataTypeName(const std::string& name, TensorDataType* out) {
  const auto* d = FlowFunc::internal::FindDataTypeByGeName(name);
  if (d == nullptr) return false;
  *out = d->dtype;
  return true;
}

const char* DataTypeName(TensorDataType dt) {
  const auto* d = FlowFunc::internal::FindDataType(dt);
  return d == nullptr ? "DT_UNDEFINED" : d->ge_name;
}

int32_t AttrValueImpl::GetVal(FlowFunc::AscendString& v) const {
  std::string s;
  int32_t rc = Get(value_, &s);
  if (rc == FlowFunc::FLOW_FUNC_SUCCESS)
    v = FlowFunc::AscendString(s.c_str(), s.size());
  return rc;
}

int32_t AttrValueImpl::GetVal(std::vector<FlowFunc::AscendString>& v) const {
  std::vector<std::string> s;
  if (auto* e = std::get_if<std::vector<int64_t>>(&value_); e && e->empty()) {
    v.clear();
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t rc = Get(value_, &s);
  if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
  v.clear();
  for (const auto& x : s) v.emplace_back(x.c_str(), x.size());
  return rc;
}

int32_t AttrValueImpl::GetVal(int64_t& v) const { return Get(value_, &v); }
int32_t AttrValueImpl::GetVal(std::vector<int64_t>& v) const {
  return Get(value_, &v);
}

// The empty list converts to every list type: JSON cannot say which it is.
#define HFLOW_EMPTY_LIST_OK(v)                                                 \
  if (auto* e = std::get_if<std::vector<int64_t>>(&value_); e && e->empty()) { \
    (v).clear();                                                               \
    return FlowFunc::FLOW_FUNC_SUCCESS;                                        \
  }

int32_t AttrValueImpl::GetVal(std::vector<std::vector<int64_t>>& v) const {
  HFLOW_EMPTY_LIST_OK(v);
  return Get(value_, &v);
}

int32_t AttrValueImpl::GetVal(float& v) const {
  // An integer literal is a fine float ("scale": 2).
  if (auto* i = std::get_if<int64_t>(&value_)) {
    v = static_cast<float>(*i);
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  return Get(value_, &v);
}

int32_t AttrValueImpl::GetVal(std::vector<float>& v) const {
  if (auto* i = std::get_if<std::vector<int64_t>>(&value_)) {
    v.assign(i->begin(), i->end());
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  return Get(value_, &v);
}

int32_t AttrValueImpl::GetVal(bool& v) const { return Get(value_, &v); }
int32_t AttrValueImpl::GetVal(std::vector<bool>& v) const {
  HFLOW_EMPTY_LIST_OK(v);
  return Get(value_, &v);
}
int32_t AttrValueImpl::GetVal(TensorDataType& v) const {
  return Get(value_, &v);
}
int32_t AttrValueImpl::GetVal(std::vector<TensorDataType>& v) const {
  HFLOW_EMPTY_LIST_OK(v);
  return Get(value_, &v);
}
#undef HFLOW_EMPTY_LIST_OK

Status AttrFromJson(const Json& j, const std::string& where,
                    std::shared_ptr<const FlowFunc::AttrValue>* out) {
  AttrValueImpl::Value v;
  TensorDataType dt;
  HFLOW_RETURN_IF_ERROR(CheckNumbers(j, where));
  if (j.is_boolean()) {
    v = j.get<bool>();
  } else if (j.is_number_integer()) {
    v = j.get<int64_t>();
  } else if (j.is_number()) {
    v = j.get<float>();
  } else if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (ParseDataTypeName(s, &dt)) {
      v = dt;
    } else {
      v = s;
    }
  } else if (j.is_array()) {
    HFLOW_RETURN_IF_ERROR(ListFromJson(j, where, &v));
  } else {
    return Bad(where,
               "must be a number, string, boolean, DT_* name or a "
               "list of those (objects and null are not attributes)");
  }
  *out = std::make_shared<AttrValueImpl>(std::move(v));
  return Status::OK();
}

Status AttrMapFromJson(const Json& obj, const std::string& where,
                       AttrMap* out) {
  if (!obj.is_object()) return Bad(where, "must be an object of attributes");
  for (const auto& [key, value] : obj.items()) {
    std::shared_ptr<const FlowFunc::AttrValue> attr;
    HFLOW_RETURN_IF_ERROR(AttrFromJson(value, where + "." + key, &attr));
    (*out)[key] = std::move(attr);
  }
  return Status::OK();
}

}  // namespace flow_func
}  // namespace hflow
