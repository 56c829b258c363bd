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
#include <functional>
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

// One call of a ProcBatch: the inputs and transaction of a Proc, and the
// code it returned.
struct ProcCall {
  const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* inputs = nullptr;
  uint64_t trans = 0;
  int32_t rc = 0;
};

// ProcBatch's caller's part of call `i`: it runs `deliver` (which hands
// call i's outputs to the instance's output function and sets its rc)
// inside whatever that call's outputs need around them (the executor's
// current transaction), then handles the rc.
using DeliverScope =
    std::function<void(size_t i, const std::function<void()>& deliver)>;

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
  // How many calls ProcBatch gains from taking at once (1: none; Proc one
  // by one is as fast).
  virtual size_t BatchLimit() const { return 1; }
  // Function `index` on each of `calls`, in order, as that many Proc
  // calls would run it; call i's outputs are delivered inside scope(i, ..),
  // calls in order, each exactly once. An instance in a worker process
  // sends them all before it waits (Note [Batched calls] in
  // worker/remote_batch.cc).
  virtual void ProcBatch(const rt::ScopedDevice& bound, size_t index,
                         std::vector<ProcCall>* calls,
                         const DeliverScope& scope) {
    for (size_t i = 0; i < calls->size(); ++i) {
      ProcCall& c = (*calls)[i];
      scope(i, [&] { c.rc = Proc(bound, index, *c.inputs, c.trans); });
    }
  }
  // Stream function `index` once on the live input queues.
  virtual int32_t ProcQueues(
      const rt::ScopedDevice& bound, size_t index,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>& queues) = 0;
  virtual Status ResetState(const rt::ScopedDevice& bound, bool* recreated) = 0;
  virtual bool InCall(std::string* what) const = 0;
  virtual const std::vector<FuncDesc>& funcs() const = 0;
  // Lets this instance hand what its UDF sets on output `output` straight
  // to function `func` of `to`, where both run (an island of a worker
  // process: Note [Islands] in exec/graph_runner_islands.cc), instead of
  // through the caller's queues; `to` then gets no call from the caller
  // for those messages, and this instance delivers `to`'s outputs that
  // leave the island through `to`'s own output function. False when they
  // cannot meet so (nothing changes). Before the first Proc; again for the
  // same output replaces the link.
  virtual bool LinkOutput(uint32_t output, Instance* to, size_t func) {
    (void)output;
    (void)to;
    (void)func;
    return false;
  }
  // Whether this instance takes an input set that carries a failure (a
  // message with a ret code from upstream) in a Proc call, passing the
  // failure on itself through its outputs, as the executor would, instead
  // of the executor doing it without a call: an island's first stage,
  // whose later stages get their messages in its worker, so the failure
  // keeps its place among the transactions there (Note [Failures into an
  // island] in worker/worker_chain.cc). Its Proc then returns SUCCESS
  // once the failure is passed on.
  virtual bool TakesFailures() const { return false; }
  // Whether this instance copies every input it is given, from any
  // device, into memory of its own (an instance in a worker process: into
  // its segment). The router then leaves a message from another device
  // as it is rather than copying it to the queue's device first, a copy
  // the instance would copy again (Note [One copy into a worker] in
  // exec/router.cc).
  virtual bool CopiesInputs() const { return false; }
  // Ends the call in progress by force, for a stop that timed out: an
  // instance in a worker process kills the worker, so the call returns
  // (failed); user code on the caller's own thread cannot be ended, and
  // this does nothing. Any thread.
  virtual void Cancel() {}
};

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_INSTANCE_H_
