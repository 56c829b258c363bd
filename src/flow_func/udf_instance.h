// UdfInstance: one deployed instance of a FunctionPp's UDF. It creates the
// user's function object(s) from the registry (a single-function
// MetaFlowFunc, or the procs of a multi-function class sharing one
// instance), runs Init once and Proc per input set, and turns every failure
// (a non-zero code, a C++ exception escaping user code) into a clear status
// or code. Init and Proc take the caller's binding token: the instance's
// device must be bound (invariant 1). While user code runs, the instance
// says so (InCall, for a stop that times out) and the thread's crash record
// names it (util/crash_report.h).
//
// Thread-safety: Init/Proc/ResetState of one instance must not run
// concurrently (the executor serialises them); ProcQueues of a stream
// function runs on its own thread, concurrently with the others (never with
// ResetState: the runner is stopped then); InCall may be called from any
// thread at any time; distinct instances are independent.
#ifndef HFLOW_FLOW_FUNC_UDF_INSTANCE_H_
#define HFLOW_FLOW_FUNC_UDF_INSTANCE_H_

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/compile_config.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/instance.h"
#include "flow_func/lib/flow_func_internal.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"
#include "flow_func/udf_context.h"
#include "rt/device_binding.h"
#include "util/crash_report.h"

namespace hflow {
namespace flow_func {

class UdfInstance final : public Instance {
 public:
  // `funcs` are the FunctionPp's functions (one for a single-function UDF).
  static Status Create(std::vector<FuncDesc> funcs, InstanceEnv env,
                       std::unique_ptr<UdfInstance>* out);
  ~UdfInstance() override;

  Status Init(const rt::ScopedDevice& bound) override;
  // Runs function `index` of funcs() on `inputs` (of transaction `trans`,
  // for reports); returns the UDF's code (FLOW_FUNC_FAILED if it threw).
  int32_t Proc(const rt::ScopedDevice& bound, size_t index,
               const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs,
               uint64_t trans = 0) override;
  // Runs stream function `index` (func_list[].stream_input, a queue proc)
  // once on the live input `queues`; returns the UDF's code. Unlike Proc it
  // may run concurrently with the instance's other functions (GE has no
  // instance-wide lock for stream procs): docs/udf_api.md.
  int32_t ProcQueues(const rt::ScopedDevice& bound, size_t index,
                     const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>&
                         queues) override;

  // Brings the instance back to its state after Init: ResetFlowFuncState,
  // or, when that does not succeed, a new object and Init (Note [Resetting
  // an instance] in the .cc). `recreated` (may be null) says which. No Proc
  // of the instance may run meanwhile.
  Status ResetState(const rt::ScopedDevice& bound, bool* recreated) override;

  // Whether user code of this instance is running now (Init or Proc); if
  // so, `what` (may be null) gets "node 'n' function 'F' (replica r) on
  // device d in Proc of transaction t" (or "in Init", or "in its stream
  // Proc"), one such part per function in a call, joined by "; ".
  bool InCall(std::string* what) const override;

  const std::vector<FuncDesc>& funcs() const override { return funcs_; }
  const InstanceEnv& env() const { return core_->env(); }
  bool is_multi() const { return multi_ != nullptr; }

 private:
  UdfInstance() = default;
  Status CreateSingle();
  Status CreateMulti();
  std::string Where(size_t index) const;
  // Every function's stream_input matches its registration (queue proc).
  Status CheckStreamInput() const;
  // Marks user code of function `index` running (phase) or done (kNone).
  void Enter(size_t index, util::UdfPhase phase, uint64_t trans);
  void Leave();

  std::vector<FuncDesc> funcs_;
  std::shared_ptr<ContextCore> core_;
  std::string log_header_;                         // "[node@deviceN] "
  FlowFunc::internal::TensorAllocator allocator_;  // FlowBufferFactory's
  std::shared_ptr<MetaContextImpl> context_;
  std::shared_ptr<FlowFunc::MetaParams> params_;
  std::shared_ptr<FlowFunc::MetaRunContext> run_context_;
  std::shared_ptr<FlowFunc::MetaFlowFunc> single_;
  std::shared_ptr<FlowFunc::MetaMultiFunc> multi_;
  std::map<FlowFunc::AscendString, FlowFunc::PROC_FUNC_WITH_CONTEXT> procs_;
  std::map<FlowFunc::AscendString, FlowFunc::PROC_FUNC_WITH_CONTEXT_Q> procs_q_;
  // Per function: what the crash report names (points into funcs_ and env).
  std::vector<util::UdfSite> sites_;
  // Per function, the call in progress, for InCall from other threads: its
  // phase (util::UdfPhase) and transaction. One slot per function: a stream
  // function runs alongside the instance's others.
  struct CallSlot {
    std::atomic<uint32_t> phase{0};
    std::atomic<uint64_t> trans{0};
  };
  std::unique_ptr<CallSlot[]> calls_;
};

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_UDF_INSTANCE_H_
