// The FlowFunc ret code names (see ret_codes.h).
//
// Thread-safety: constant data only.
#include "tools/ret_codes.h"

#include "flow_func/flow_func_defines.h"

namespace hflow::tools {
namespace {

struct CodeName {
  int32_t code;
  const char* name;
};

#define HFLOW_CODE(c) \
  CodeName { FlowFunc::c, #c }
constexpr CodeName kCodes[] = {
    HFLOW_CODE(FLOW_FUNC_SUCCESS),
    HFLOW_CODE(FLOW_FUNC_ERR_PARAM_INVALID),
    HFLOW_CODE(FLOW_FUNC_ERR_ATTR_NOT_EXITS),
    HFLOW_CODE(FLOW_FUNC_ERR_ATTR_TYPE_MISMATCH),
    HFLOW_CODE(FLOW_FUNC_ERR_DATA_ALIGN_FAILED),
    HFLOW_CODE(FLOW_FUNC_FAILED),
    HFLOW_CODE(FLOW_FUNC_ERR_TIME_OUT_ERROR),
    HFLOW_CODE(FLOW_FUNC_ERR_NOT_SUPPORT),
    HFLOW_CODE(FLOW_FUNC_STATUS_REDEPLOYING),
    HFLOW_CODE(FLOW_FUNC_STATUS_EXIT),
    HFLOW_CODE(FLOW_FUNC_ERR_DRV_ERROR),
    HFLOW_CODE(FLOW_FUNC_ERR_MEM_BUF_ERROR),
    HFLOW_CODE(FLOW_FUNC_ERR_QUEUE_ERROR),
    HFLOW_CODE(FLOW_FUNC_ERR_EVENT_ERROR),
};
#undef HFLOW_CODE

}  // namespace

const char* RetCodeName(int32_t code) {
  for (const CodeName& c : kCodes) {
    if (c.code == code) return c.name;
  }
  if (code >= FlowFunc::FLOW_FUNC_ERR_USER_DEFINE_START &&
      code <= FlowFunc::FLOW_FUNC_ERR_USER_DEFINE_END) {
    return "user-defined";
  }
  return "unknown";
}

}  // namespace hflow::tools
