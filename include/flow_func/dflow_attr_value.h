// Compatibility name for attr_value.h used by newer DataFlow UDF sources.
#ifndef HFLOW_FLOW_FUNC_DFLOW_ATTR_VALUE_H_
#define HFLOW_FLOW_FUNC_DFLOW_ATTR_VALUE_H_

#include "attr_value.h"

#endif  // HFLOW_FLOW_FUNC_DFLOW_ATTR_VALUE_H_
