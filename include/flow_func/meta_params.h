// MetaParams: deploy-time parameters of a multi-function UDF instance (name,
// attributes, arity, work path, placement), passed to MetaMultiFunc::Init.
// Implemented by the runtime; immutable after deployment, so readable from
// any proc thread.
#ifndef HFLOW_FLOW_FUNC_META_PARAMS_H_
#define HFLOW_FLOW_FUNC_META_PARAMS_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "attr_value.h"
#include "flow_func_defines.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaParams {
 public:
  MetaParams() = default;
  virtual ~MetaParams() = default;

  virtual const char* GetName() const = 0;
  // Null when the node has no attribute of that name.
  virtual std::shared_ptr<const AttrValue> GetAttr(
      const char* attrName) const = 0;

  // FLOW_FUNC_ERR_ATTR_NOT_EXITS when absent, else AttrValue::GetVal's code.
  template <class T>
  int32_t GetAttr(const char* attrName, T& value) const {
    std::shared_ptr<const AttrValue> attr = GetAttr(attrName);
    if (attr == nullptr) {
      return FLOW_FUNC_ERR_ATTR_NOT_EXITS;
    }
    return attr->GetVal(value);
  }

  virtual size_t GetInputNum() const = 0;
  virtual size_t GetOutputNum() const = 0;
  virtual const char* GetWorkPath() const = 0;
  virtual int32_t GetRunningDeviceId() const = 0;

  // Library defaults describe a single instance: id 0 of 1.
  virtual int32_t GetRunningInstanceId() const;
  virtual int32_t GetRunningInstanceNum() const;
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_META_PARAMS_H_
