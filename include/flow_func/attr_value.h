// AttrValue: read access to one attribute of a FlowFunc node (its
// init_params). The runtime subclasses it per stored type. Every GetVal is
// pure virtual yet has a library-provided body returning
// FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH, so an implementation overrides the
// overload(s) its type supports and forwards the rest to AttrValue::GetVal.
// Implementations are immutable after construction and safe to share.
#ifndef HFLOW_FLOW_FUNC_ATTR_VALUE_H_
#define HFLOW_FLOW_FUNC_ATTR_VALUE_H_

#include <cstdint>
#include <vector>

#include "flow_func_ascend_string.h"
#include "flow_func_defines.h"
#include "tensor_data_type.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY AttrValue {
 public:
  AttrValue() = default;
  virtual ~AttrValue() = default;

  AttrValue(const AttrValue&) = delete;
  AttrValue(AttrValue&&) = delete;
  AttrValue& operator=(const AttrValue&) = delete;
  AttrValue& operator=(AttrValue&&) = delete;

  // Each returns FLOW_FUNC_SUCCESS and fills `value`, or
  // FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH leaving `value` untouched.
  virtual int32_t GetVal(AscendString& value) const = 0;
  virtual int32_t GetVal(std::vector<AscendString>& value) const = 0;
  virtual int32_t GetVal(int64_t& value) const = 0;
  virtual int32_t GetVal(std::vector<int64_t>& value) const = 0;
  virtual int32_t GetVal(std::vector<std::vector<int64_t>>& value) const = 0;
  virtual int32_t GetVal(float& value) const = 0;
  virtual int32_t GetVal(std::vector<float>& value) const = 0;
  virtual int32_t GetVal(bool& value) const = 0;
  virtual int32_t GetVal(std::vector<bool>& value) const = 0;
  virtual int32_t GetVal(TensorDataType& value) const = 0;
  virtual int32_t GetVal(std::vector<TensorDataType>& value) const = 0;
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_ATTR_VALUE_H_
