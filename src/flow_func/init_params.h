// AttrValue implementation: the init params of a FunctionPp as the UDF sees
// them through GetAttr. Values come from the graph file's JSON (numbers,
// strings, booleans, lists of those, nested int lists, DT_* names) or from
// the C++ graph API.
//
// Thread-safety: values are immutable after construction.
#ifndef HFLOW_FLOW_FUNC_INIT_PARAMS_H_
#define HFLOW_FLOW_FUNC_INIT_PARAMS_H_

#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <variant>
#include <vector>

#include "flow_func/attr_value.h"
#include "hflow/status.h"

namespace hflow {
namespace flow_func {

using AttrMap =
    std::map<std::string, std::shared_ptr<const FlowFunc::AttrValue>>;

class AttrValueImpl final : public FlowFunc::AttrValue {
 public:
  using Value =
      std::variant<std::string, std::vector<std::string>, int64_t,
                   std::vector<int64_t>, std::vector<std::vector<int64_t>>,
                   float, std::vector<float>, bool, std::vector<bool>,
                   FlowFunc::TensorDataType,
                   std::vector<FlowFunc::TensorDataType>>;
  explicit AttrValueImpl(Value v) : value_(std::move(v)) {}
  const Value& value() const { return value_; }

  int32_t GetVal(FlowFunc::AscendString& v) const override;
  int32_t GetVal(std::vector<FlowFunc::AscendString>& v) const override;
  int32_t GetVal(int64_t& v) const override;
  int32_t GetVal(std::vector<int64_t>& v) const override;
  int32_t GetVal(std::vector<std::vector<int64_t>>& v) const override;
  int32_t GetVal(float& v) const override;
  int32_t GetVal(std::vector<float>& v) const override;
  int32_t GetVal(bool& v) const override;
  int32_t GetVal(std::vector<bool>& v) const override;
  int32_t GetVal(FlowFunc::TensorDataType& v) const override;
  int32_t GetVal(std::vector<FlowFunc::TensorDataType>& v) const override;

 private:
  Value value_;
};

// "DT_INT32" -> DT_INT32; false for unknown names.
bool ParseDataTypeName(const std::string& name, FlowFunc::TensorDataType* out);
const char* DataTypeName(FlowFunc::TensorDataType dt);

// Converts one init_params value; `where` names it in errors
// ("graph.json: nodes[2].init_params.bias").
Status AttrFromJson(const nlohmann::json& j, const std::string& where,
                    std::shared_ptr<const FlowFunc::AttrValue>* out);
Status AttrMapFromJson(const nlohmann::json& obj, const std::string& where,
                       AttrMap* out);

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_INIT_PARAMS_H_
