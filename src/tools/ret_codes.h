// Names of the FlowFunc status codes a fetched result's ret code may carry
// (include/flow_func/flow_func_defines.h), so `hflow run` can print
// "564000 (FLOW_FUNC_FAILED)" instead of a bare number. This is the one
// table of them; docs/user_guide.md lists the same codes.
//
// Thread-safety: pure function over constant data.
#ifndef HFLOW_TOOLS_RET_CODES_H_
#define HFLOW_TOOLS_RET_CODES_H_

#include <cstdint>

namespace hflow::tools {

// "FLOW_FUNC_SUCCESS", "FLOW_FUNC_FAILED", ...; "user-defined" for codes in
// the range UDFs define themselves (9900000..9999999) and "unknown" for any
// other code.
const char* RetCodeName(int32_t code);

}  // namespace hflow::tools

#endif  // HFLOW_TOOLS_RET_CODES_H_
