// Instance: what executors and the deployer call on a deployed UDF
// instance, wherever its code runs: UdfInstance runs it on the caller's
// thread; worker::RemoteInstance runs it in an hflow-worker process
// (docs/architecture.md, "Worker processes"). The calls and their contracts
// are UdfInstance's (udf_instance.h).
//
// Thread-safety: as UdfInstance: Init, Proc and ResetState of one instance
// are never concurrent; InCall may be called from any thread.
#ifndef HFLOW_FLOW_FUNC_INSTANCE_H_
#define HFLOW_FLOW_FUNC_INSTANCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/compile_config.h"
#include "flow_func/flow_msg.h"
#include "flow_func/flow_msg_queue.h"
#include "hflow/status.h"
#include "rt/device_binding.h"

namespace hflow {
namespace flow_func {

class Instance {
 public:
  virtual ~Instance() = default;

  virtual Status Init(const rt::ScopedDevice& bound) = 0;
  // Function `index` of funcs() on `inputs` of transaction `trans`; the
  // UDF's code.
  virtual int32_t Proc(
      const rt::ScopedDevice& bound, size_t index,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
      uint64_t trans = 0) = 0;
  // Stream function `index` once on the live input queues.
  virtual int32_t ProcQueues(
      const rt::ScopedDevice& bound, size_t index,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>& queues) = 0;
  virtual Status ResetState(const rt::ScopedDevice& bound, bool* recreated) = 0;
  virtual bool InCall(std::string* what) const = 0;
  virtual const std::vector<FuncDesc>& funcs() const = 0;
  // Ends the call in progress by force, for a stop that timed out: an
  // instance in a worker process kills the worker, so the call returns
  // (failed); user code on the caller's own thread cannot be ended, and
  // this does nothing. Any thread.
  virtual void Cancel() {}
};

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_INSTANCE_H_
