// Compatibility name for flow_func_ascend_string.h: some UDF sources include
// "flow_func/ascend_string.h" instead.
#ifndef HFLOW_FLOW_FUNC_ASCEND_STRING_H_
#define HFLOW_FLOW_FUNC_ASCEND_STRING_H_

#include "flow_func_ascend_string.h"

#endif  // HFLOW_FLOW_FUNC_ASCEND_STRING_H_
