// GE's older name for graph/error_codes.h, kept so programs that include it
// compile unchanged.
//
// Thread-safety: constants only.
#ifndef HFLOW_GE_GRAPH_GE_ERROR_CODES_H_
#define HFLOW_GE_GRAPH_GE_ERROR_CODES_H_

#include "graph/error_codes.h"

#endif  // HFLOW_GE_GRAPH_GE_ERROR_CODES_H_
