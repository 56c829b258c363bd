// DataFlow's input attributes (FlowNode::MapInput): CountBatch and TimeBatch
// gather messages of one node input into batches before the UDF sees them.
// The layout is GE's (reserved bytes included), so the structs pass through
// DataFlowInputAttr's untyped pointer as GE's do. As in GE, CountBatch uses
// batch_size, slide_stride, timeout and padding (it stacks messages along a
// new leading dimension), and TimeBatch uses time_window, batch_dim and
// drop_remainder; the other fields are accepted and unused.
//
// Thread-safety: plain data.
#ifndef HFLOW_GE_FLOW_GRAPH_FLOW_ATTR_H_
#define HFLOW_GE_FLOW_GRAPH_FLOW_ATTR_H_

#include <cstdint>

namespace ge {
namespace dflow {
struct CountBatch {
  int64_t batch_size = 0L;
  int64_t slide_stride = 0L;
  int64_t timeout = 0L;  // ms; 0 waits until the batch is full
  int64_t batch_dim = 0L;
  int32_t flag = 0;  // flow flags of the batch (EOS/SEG)
  bool padding = false;
  bool drop_remainder = false;
  int8_t rsv[90] = {};
};

struct TimeBatch {
  int64_t time_window = 0L;  // ms; -1 takes whole segments
  int64_t time_interval = 0L;
  int64_t timeout = 0L;
  int64_t batch_dim = -1;
  int32_t flag = 0;
  bool padding = false;
  bool drop_remainder = false;
  int8_t rsv[90] = {};
};

enum class DataFlowAttrType {
  COUNT_BATCH = 0,
  TIME_BATCH = 1,
  INVALID = 2,
};

// One input attribute: attr_value points at a CountBatch or a TimeBatch.
struct DataFlowInputAttr {
  DataFlowAttrType attr_type;
  void* attr_value;
};
}  // namespace dflow
}  // namespace ge

#endif  // HFLOW_GE_FLOW_GRAPH_FLOW_ATTR_H_
