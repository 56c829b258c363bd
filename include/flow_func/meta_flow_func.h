// MetaFlowFunc: base class of single-function UDFs, and their registration.
// REGISTER_FLOW_FUNC runs at static-initialisation time of the UDF's shared
// object; the registry it feeds lives in libflow_func.so and is thread-safe.
#ifndef HFLOW_FLOW_FUNC_META_FLOW_FUNC_H_
#define HFLOW_FLOW_FUNC_META_FLOW_FUNC_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "flow_func_defines.h"
#include "flow_msg.h"
#include "meta_context.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaFlowFunc {
 public:
  MetaFlowFunc() = default;
  virtual ~MetaFlowFunc() = default;

  // Called by the runtime before Init; the context outlives the UDF.
  void SetContext(MetaContext* context) { context_ = context; }

  // Once per instance, at deploy time. Non-zero fails the deployment.
  virtual int32_t Init() = 0;
  // Once per complete set of inputs (one message per input).
  virtual int32_t Proc(
      const std::vector<std::shared_ptr<FlowMsg>>& inputMsgs) = 0;
  // Called before redeployment; the default (nothing to reset) succeeds.
  virtual int32_t ResetFlowFuncState();

 protected:
  MetaContext* context_ = nullptr;
};

using FLOW_FUNC_CREATOR_FUNC =
    std::function<std::shared_ptr<MetaFlowFunc>(void)>;

// Registers `func` under `flowFuncName` (NUL-terminated). False when the name
// is null/empty, the creator is empty, or the name is taken (the first
// registration stays). Never throws.
FLOW_FUNC_VISIBILITY bool RegisterFlowFunc(
    const char* flowFuncName, const FLOW_FUNC_CREATOR_FUNC& func) noexcept;

}  // namespace FlowFunc

// REGISTER_FLOW_FUNC("Name", MyFlowFunc); at namespace scope registers a
// creator of MyFlowFunc. __COUNTER__ keeps several uses in one file apart and
// lets `clazz` be a qualified name.
#define FLOW_FUNC_REGISTER_FLOW_FUNC_AT_(name, clazz, ctr)                 \
  static const bool hflowFlowFuncRegistered##ctr __attribute__((unused)) = \
      ::FlowFunc::RegisterFlowFunc(                                        \
          (name), []() -> std::shared_ptr<::FlowFunc::MetaFlowFunc> {      \
            return std::make_shared<clazz>();                              \
          })
#define FLOW_FUNC_REGISTER_FLOW_FUNC_EXPAND_(name, clazz, ctr) \
  FLOW_FUNC_REGISTER_FLOW_FUNC_AT_(name, clazz, ctr)
#define REGISTER_FLOW_FUNC(name, clazz) \
  FLOW_FUNC_REGISTER_FLOW_FUNC_EXPAND_(name, clazz, __COUNTER__)

#endif  // HFLOW_FLOW_FUNC_META_FLOW_FUNC_H_
