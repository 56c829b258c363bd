// FlowMsgQueue: an input queue handed to stream-style UDF procs (those
// registered with PROC_FUNC_WITH_CONTEXT_Q), which dequeue at their own pace.
#ifndef HFLOW_FLOW_FUNC_FLOW_MSG_QUEUE_H_
#define HFLOW_FLOW_FUNC_FLOW_MSG_QUEUE_H_

#include <cstdint>
#include <memory>

#include "flow_func_defines.h"
#include "flow_msg.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY FlowMsgQueue {
 public:
  FlowMsgQueue() = default;
  virtual ~FlowMsgQueue() = default;

  // timeout in milliseconds: -1 waits forever, 0 only tries.
  virtual int32_t Dequeue(std::shared_ptr<FlowMsg>& flowMsg,
                          int32_t timeout = -1) = 0;
  // Capacity of the queue.
  virtual int32_t Depth() const = 0;
  // Messages currently queued.
  virtual int32_t Size() const = 0;
};

}  // namespace FlowFunc

#endif  // HFLOW_FLOW_FUNC_FLOW_MSG_QUEUE_H_
