// The DataFlow graph API in one include: flow attributes, process points and
// the flow graph (FlowData, FlowNode, FlowGraph).
//
// Thread-safety: see the headers it includes.
#ifndef HFLOW_GE_FLOW_GRAPH_DATA_FLOW_H_
#define HFLOW_GE_FLOW_GRAPH_DATA_FLOW_H_

#include "flow_graph/flow_attr.h"
#include "flow_graph/flow_graph.h"
#include "flow_graph/process_point.h"

#endif  // HFLOW_GE_FLOW_GRAPH_DATA_FLOW_H_
