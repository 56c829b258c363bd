// Multi-function UDFs: one class (a MetaMultiFunc) offers several procs, each
// registered under its own function name. The runtime creates one instance
// per deployed node and calls the creators of all the node's function names
// in turn with the same instance slot: the first creates the object, later
// ones reuse it, so every proc of one node runs on one shared object.
// Registration happens at static-initialisation time; the registry lives in
// libflow_func.so and is thread-safe. A FlowFuncRegistrar is filled during
// static initialisation and only read afterwards.
#ifndef HFLOW_FLOW_FUNC_META_MULTI_FUNC_H_
#define HFLOW_FLOW_FUNC_META_MULTI_FUNC_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <vector>

#include "flow_func_ascend_string.h"
#include "flow_func_defines.h"
#include "flow_msg.h"
#include "flow_msg_queue.h"
#include "meta_params.h"
#include "meta_run_context.h"

namespace FlowFunc {

class FLOW_FUNC_VISIBILITY MetaMultiFunc {
 public:
  MetaMultiFunc() = default;
  virtual ~MetaMultiFunc() = default;

  // Once per instance, at deploy time. Non-zero fails the deployment.
  virtual int32_t Init(const std::shared_ptr<MetaParams>& params) {
    (void)params;
    return FLOW_FUNC_SUCCESS;
  }
  // Called before redeployment; the default (nothing to reset) succeeds.
  virtual int32_t ResetFlowFuncState(const std::shared_ptr<MetaParams>& params);
};

using PROC_FUNC_WITH_CONTEXT =
    std::function<int32_t(const std::shared_ptr<MetaRunContext>&,
                          const std::vector<std::shared_ptr<FlowMsg>>&)>;

using PROC_FUNC_WITH_CONTEXT_Q =
    std::function<int32_t(const std::shared_ptr<MetaRunContext>&,
                          const std::vector<std::shared_ptr<FlowMsgQueue>>&)>;

// A creator fills `multiFunc` when it is null (else reuses it) and adds its
// procs to `procFuncList`. Returns FLOW_FUNC_SUCCESS or an error code.
using MULTI_FUNC_CREATOR_FUNC = std::function<int32_t(
    std::shared_ptr<MetaMultiFunc>& multiFunc,
    std::map<AscendString, PROC_FUNC_WITH_CONTEXT>& procFuncList)>;

using MULTI_FUNC_WITH_Q_CREATOR_FUNC = std::function<int32_t(
    std::shared_ptr<MetaMultiFunc>& multiFunc,
    std::map<AscendString, PROC_FUNC_WITH_CONTEXT_Q>& procFuncList)>;

// Register a creator under `flowFuncName` (NUL-terminated). False when the
// name is null/empty, the creator is empty, or the name is taken (the first
// registration stays). Never throws.
FLOW_FUNC_VISIBILITY bool RegisterMultiFunc(
    const char* flowFuncName,
    const MULTI_FUNC_CREATOR_FUNC& funcCreator) noexcept;
FLOW_FUNC_VISIBILITY bool RegisterMultiFunc(
    const char* flowFuncName,
    const MULTI_FUNC_WITH_Q_CREATOR_FUNC& funcWithQCreator) noexcept;

// Registers member functions of T as procs. Each RegProcFunc registers one
// function name whose creator makes (or reuses) the shared T and publishes
// every proc of this registrar of the matching kind. Must outlive the
// registrations: use it through FLOW_FUNC_REGISTRAR, which makes it static.
template <typename T>
class FlowFuncRegistrar {
 public:
  // A proc of T taking messages (Input = FlowMsg) or queues (FlowMsgQueue).
  template <typename Input>
  using CustomProc =
      std::function<int32_t(T*, const std::shared_ptr<MetaRunContext>&,
                            const std::vector<std::shared_ptr<Input>>&)>;
  using CUSTOM_PROC_FUNC = CustomProc<FlowMsg>;
  using CUSTOM_PROC_FUNC_WITH_Q = CustomProc<FlowMsgQueue>;

  FlowFuncRegistrar& RegProcFunc(const char* flowFuncName,
                                 const CUSTOM_PROC_FUNC& func) {
    procs_[AscendString(flowFuncName)] = func;
    MULTI_FUNC_CREATOR_FUNC creator =
        [this](std::shared_ptr<MetaMultiFunc>& multiFunc,
               std::map<AscendString, PROC_FUNC_WITH_CONTEXT>& procList)
        -> int32_t { return Publish(procs_, multiFunc, procList); };
    (void)RegisterMultiFunc(flowFuncName, creator);
    return *this;
  }

  FlowFuncRegistrar& RegProcFunc(const char* flowFuncName,
                                 const CUSTOM_PROC_FUNC_WITH_Q& func) {
    queueProcs_[AscendString(flowFuncName)] = func;
    MULTI_FUNC_WITH_Q_CREATOR_FUNC creator =
        [this](std::shared_ptr<MetaMultiFunc>& multiFunc,
               std::map<AscendString, PROC_FUNC_WITH_CONTEXT_Q>& procList)
        -> int32_t { return Publish(queueProcs_, multiFunc, procList); };
    (void)RegisterMultiFunc(flowFuncName, creator);
    return *this;
  }

 private:
  template <typename Input>
  using BoundProc =
      std::function<int32_t(const std::shared_ptr<MetaRunContext>&,
                            const std::vector<std::shared_ptr<Input>>&)>;

  // Creates T into an empty slot, or finds T in a filled one (null if the
  // slot holds another class).
  static T* InstanceIn(std::shared_ptr<MetaMultiFunc>& multiFunc) {
    if (multiFunc == nullptr) {
      T* created = new (std::nothrow) T();
      multiFunc.reset(created);
      return created;
    }
    return dynamic_cast<T*>(multiFunc.get());
  }

  // Binds every proc of `procs` to the shared instance. Binding the raw
  // pointer is safe: the runtime keeps `multiFunc` alive while procs run.
  template <typename Input>
  static int32_t Publish(const std::map<AscendString, CustomProc<Input>>& procs,
                         std::shared_ptr<MetaMultiFunc>& multiFunc,
                         std::map<AscendString, BoundProc<Input>>& procList) {
    T* instance = InstanceIn(multiFunc);
    if (instance == nullptr) {
      return FLOW_FUNC_FAILED;
    }
    for (typename std::map<AscendString, CustomProc<Input>>::const_iterator it =
             procs.begin();
         it != procs.end(); ++it) {
      CustomProc<Input> proc = it->second;
      procList[it->first] = [instance, proc](
                                const std::shared_ptr<MetaRunContext>& ctx,
                                const std::vector<std::shared_ptr<Input>>& in) {
        return proc(instance, ctx, in);
      };
    }
    return FLOW_FUNC_SUCCESS;
  }

  std::map<AscendString, CUSTOM_PROC_FUNC> procs_;
  std::map<AscendString, CUSTOM_PROC_FUNC_WITH_Q> queueProcs_;
};

}  // namespace FlowFunc

// FLOW_FUNC_REGISTRAR(MyFunc).RegProcFunc("a", &MyFunc::ProcA)
//                            .RegProcFunc("b", &MyFunc::ProcB);
// at namespace scope. Declares a static registrar and a static reference
// initialised by the chained calls, which therefore run at static-init time.
#define FLOW_FUNC_REGISTRAR_AT_(clazz, ctr)                                   \
  static ::FlowFunc::FlowFuncRegistrar<clazz> hflowFlowFuncRegistrar##ctr;    \
  static ::FlowFunc::FlowFuncRegistrar<clazz>& hflowFlowFuncRegistrarRef##ctr \
      __attribute__((unused)) = hflowFlowFuncRegistrar##ctr
#define FLOW_FUNC_REGISTRAR_EXPAND_(clazz, ctr) \
  FLOW_FUNC_REGISTRAR_AT_(clazz, ctr)
#define FLOW_FUNC_REGISTRAR(clazz) \
  FLOW_FUNC_REGISTRAR_EXPAND_(clazz, __COUNTER__)

#endif  // HFLOW_FLOW_FUNC_META_MULTI_FUNC_H_
