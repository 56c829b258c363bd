// GE's graph status codes (graphStatus) and the visibility and deprecation
// macros GE's public headers share, for host programs written against GE.
// hflow's GE-compatible headers are C++11 and build with either libstdc++
// string ABI; the libraries under lib64/ are built with the old one, as
// GE's are, so programs must use -D_GLIBCXX_USE_CXX11_ABI=0 (GE's rule).
//
// Thread-safety: constants only.
#ifndef HFLOW_GE_GRAPH_ERROR_CODES_H_
#define HFLOW_GE_GRAPH_ERROR_CODES_H_

#include <cstddef>
#include <cstdint>

#ifndef GE_FUNC_VISIBILITY
#define GE_FUNC_VISIBILITY __attribute__((visibility("default")))
#endif
#ifndef GE_FUNC_HOST_VISIBILITY
#define GE_FUNC_HOST_VISIBILITY __attribute__((visibility("default")))
#endif
#ifndef GE_FUNC_DEV_VISIBILITY
#define GE_FUNC_DEV_VISIBILITY
#endif
#ifndef ATTRIBUTED_DEPRECATED
#ifdef NO_METADEF_ABI_COMPATIABLE
#define ATTRIBUTED_DEPRECATED(replacement)
#else
#define ATTRIBUTED_DEPRECATED(replacement) \
  __attribute__((deprecated("Please use " #replacement " instead.")))
#endif
#endif

namespace ge {
using graphStatus = uint32_t;
const graphStatus GRAPH_FAILED = 0xFFFFFFFF;
const graphStatus GRAPH_SUCCESS = 0;
const graphStatus GRAPH_NOT_CHANGED = 1343242304;
const graphStatus GRAPH_PARAM_INVALID = 50331649;
const graphStatus GRAPH_NODE_WITHOUT_CONST_INPUT = 50331648;
const graphStatus GRAPH_PARAM_OUT_OF_RANGE = 50331644;
const graphStatus GRAPH_MEM_OPERATE_FAILED = 50331539;
const graphStatus GRAPH_NULL_PTR = 50331538;
}  // namespace ge

#endif  // HFLOW_GE_GRAPH_ERROR_CODES_H_
