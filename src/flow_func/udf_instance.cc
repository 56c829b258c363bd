// UdfInstance (see udf_instance.h).
// Thread-safety: as documented there.
#include "flow_func/udf_instance.h"

#include <exception>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/lib/flow_func_internal.h"
#include "rt/ctxcheck_user_call.h"
#include "util/fast_tls.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::FlowMsg;
namespace ffi = FlowFunc::internal;

// The call slot Enter set on this thread, cleared by Leave.
thread_local std::atomic<uint32_t>* t_call_phase HFLOW_FAST_TLS = nullptr;

// Per-call thread-local hooks of libflow_func: the log prefix and the
// allocator behind FlowBufferFactory. Restored on exit. Both are built once
// per instance (Note [Proc hot path]); the allocator captures only a raw
// pointer so installing it copies no heap state.
class CallHooks {
 public:
  CallHooks(const std::string& header, const ffi::TensorAllocator& alloc) {
    ffi::SetLogExtHeader(header.c_str());
    previous_ = ffi::SwapTensorAllocator(&alloc);
  }
  ~CallHooks() {
    ffi::SwapTensorAllocator(previous_);
    ffi::SetLogExtHeader("");
  }

 private:
  const ffi::TensorAllocator* previous_;
};

// Runs user code, converting escaping exceptions into FLOW_FUNC_FAILED.
// `where` is only called when something was thrown: naming the call costs
// string building that the per-message path must not pay.
template <typename Where, typename F>
int32_t Guarded(Where&& where, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    FLOW_FUNC_LOG_ERROR("%s threw: %s", where().c_str(), e.what());
  } catch (...) {
    FLOW_FUNC_LOG_ERROR("%s threw a non-standard exception", where().c_str());
  }
  return FlowFunc::FLOW_FUNC_FAILED;
}

}  // namespace

Status UdfInstance::Create(std::vector<FuncDesc> funcs, InstanceEnv env,
                           std::unique_ptr<UdfInstance>* out) {
  if (funcs.empty()) {
    return Status::InvalidArgument("node '" + env.node +
                                   "': no function to instantiate");
  }
  if (!env.allocator) {
    return Status::InvalidArgument("node '" + env.node + "': no allocator");
  }
  std::unique_ptr<UdfInstance> inst(new UdfInstance());
  inst->funcs_ = std::move(funcs);
  inst->calls_.reset(new CallSlot[inst->funcs_.size()]);
  inst->core_ = std::make_shared<ContextCore>(
      std::make_shared<const InstanceEnv>(std::move(env)));
  inst->log_header_ = "[" + inst->env().node + "@device" +
                      std::to_string(inst->env().device) + "] ";
  // Note [Proc hot path]
  // Everything a Proc call needs besides the messages is built here, once:
  // the log prefix, this allocator and the call names (only built on
  // failure). A raw pointer is enough: the hook is installed only while a
  // call of this instance runs, and the instance outlives its calls.
  ContextCore* core = inst->core_.get();
  inst->allocator_ =
      [core](const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt,
             uint32_t align) -> std::shared_ptr<FlowFunc::Tensor> {
    std::shared_ptr<FlowMsg> msg = core->AllocTensor(shape, dt, align);
    if (!msg) return nullptr;
    // The tensor keeps its message (and mbuf) alive.
    return std::shared_ptr<FlowFunc::Tensor>(msg, msg->GetTensor());
  };
  ffi::FunctionKind kind;
  const std::string& first = inst->funcs_[0].name;
  if (!ffi::LookupKind(inst->funcs_[0].library, first.c_str(), &kind)) {
    return Status::NotFound("node '" + inst->env().node + "': function '" +
                            first +
                            "' is not registered; load its UDF "
                            "library or check the name");
  }
  for (const FuncDesc& f : inst->funcs_) {
    util::UdfSite site;
    site.node = inst->env().node.c_str();
    site.function = f.name.c_str();
    site.replica = static_cast<int32_t>(inst->env().instance_id);
    site.device = inst->env().device;
    inst->sites_.push_back(site);
  }
  HFLOW_RETURN_IF_ERROR(kind == ffi::FunctionKind::kFlowFunc
                            ? inst->CreateSingle()
                            : inst->CreateMulti());
  *out = std::move(inst);
  return Status::OK();
}

UdfInstance::~UdfInstance() {
  // The user's destructor runs here (Undeploy binds the device first).
  rt::ctxcheck::UserCall check(nullptr, sites_.empty() ? nullptr : &sites_[0],
                               "its destructor");
  single_.reset();
  multi_.reset();
  procs_.clear();  // a proc may hold the last reference to the object
  procs_q_.clear();
}

std::string UdfInstance::Where(size_t index) const {
  return "node '" + env().node + "' function '" +
         (index < funcs_.size() ? funcs_[index].name : std::string("?")) +
         "' on device " + std::to_string(env().device);
}

Status UdfInstance::CreateSingle() {
  if (funcs_.size() != 1) {
    return Status::InvalidArgument(
        Where(0) +
        ": a single-function UDF (REGISTER_FLOW_FUNC) cannot be "
        "combined with other functions in one FunctionPp");
  }
  if (funcs_[0].stream_input) {
    return Status::InvalidArgument(
        Where(0) +
        ": func_list has stream_input but the function is a REGISTER_FLOW_FUNC "
        "class (message inputs); register a queue proc (RegProcFunc taking "
        "FlowMsgQueue inputs) or drop stream_input");
  }
  FlowFunc::FLOW_FUNC_CREATOR_FUNC creator;
  ffi::LookupFlowFunc(funcs_[0].library, funcs_[0].name.c_str(), &creator);
  rt::ctxcheck::UserCall check(nullptr, &sites_[0], "its creator");
  int32_t rc = Guarded([&] { return Where(0) + " creator"; },
                       [&] {
                         single_ = creator ? creator() : nullptr;
                         return single_ ? FlowFunc::FLOW_FUNC_SUCCESS
                                        : FlowFunc::FLOW_FUNC_FAILED;
                       });
  if (rc != FlowFunc::FLOW_FUNC_SUCCESS) {
    return Status::Internal(Where(0) +
                            ": the registered creator returned no "
                            "instance");
  }
  context_ = std::make_shared<MetaContextImpl>(core_);
  single_->SetContext(context_.get());
  return Status::OK();
}

Status UdfInstance::CreateMulti() {
  for (size_t i = 0; i < funcs_.size(); ++i) {
    const char* name = funcs_[i].name.c_str();
    const std::string& library = funcs_[i].library;
    ffi::FunctionKind kind;
    if (!ffi::LookupKind(library, name, &kind)) {
      return Status::NotFound(Where(i) +
                              ": not registered; load its UDF "
                              "library or check the name");
    }
    if (kind == ffi::FunctionKind::kFlowFunc) {
      return Status::InvalidArgument(
          Where(i) +
          ": a single-function UDF (REGISTER_FLOW_FUNC) cannot be "
          "combined with other functions in one FunctionPp");
    }
    // Every creator gets the same instance pointer: the first creates the
    // user's object, the rest attach their procs to it.
    rt::ctxcheck::UserCall check(nullptr, &sites_[i], "its creator");
    int32_t rc = Guarded([&] { return Where(i) + " creator"; },
                         [&] {
                           if (kind == ffi::FunctionKind::kMultiFunc) {
                             FlowFunc::MULTI_FUNC_CREATOR_FUNC c;
                             ffi::LookupMultiFunc(library, name, &c);
                             return c(multi_, procs_);
                           }
                           FlowFunc::MULTI_FUNC_WITH_Q_CREATOR_FUNC c;
                           ffi::LookupMultiFuncWithQ(library, name, &c);
                           return c(multi_, procs_q_);
                         });
    if (rc != FlowFunc::FLOW_FUNC_SUCCESS || !multi_) {
      return Status::Internal(Where(i) +
                              ": creating the function object "
                              "failed with code " +
                              std::to_string(rc));
    }
  }
  HFLOW_RETURN_IF_ERROR(CheckStreamInput());
  params_ = std::make_shared<MetaParamsImpl>(core_);
  run_context_ = std::make_shared<MetaRunContextImpl>(core_);
  return Status::OK();
}

// Note [Stream input is checked at load]
// GE picks the call by func_list's stream_input and fails the first call
// whose proc kind does not match ("proc_func_with_q is null"); hflow
// refuses the mismatch when the instance is created (BuildGraph), naming
// the node and the function, so a wrong config never half-runs.
Status UdfInstance::CheckStreamInput() const {
  for (size_t i = 0; i < funcs_.size(); ++i) {
    FlowFunc::AscendString name(funcs_[i].name.c_str());
    const bool queue_proc = procs_q_.count(name) != 0;
    if (queue_proc && !funcs_[i].stream_input) {
      return Status::InvalidArgument(
          Where(i) +
          ": registered with a queue proc (FlowMsgQueue inputs) but "
          "func_list has no stream_input; set \"stream_input\": true for it "
          "in the compile config");
    }
    if (!queue_proc && funcs_[i].stream_input) {
      return Status::InvalidArgument(
          Where(i) +
          ": func_list has stream_input but the function is registered "
          "with a message proc; register it with FlowMsgQueue inputs or drop "
          "stream_input");
    }
  }
  return Status::OK();
}

void UdfInstance::Enter(size_t index, util::UdfPhase phase, uint64_t trans) {
  CallSlot& slot = calls_[index];
  slot.trans.store(trans, std::memory_order_relaxed);
  slot.phase.store(static_cast<uint32_t>(phase), std::memory_order_release);
  t_call_phase = &slot.phase;
  util::EnterUdf(&sites_[index], phase, trans);
}

void UdfInstance::Leave() {
  util::LeaveUdf();
  if (t_call_phase != nullptr)
    t_call_phase->store(0, std::memory_order_release);
  t_call_phase = nullptr;
}

bool UdfInstance::InCall(std::string* what) const {
  bool any = false;
  if (what != nullptr) what->clear();
  for (size_t f = 0; f < funcs_.size(); ++f) {
    const auto phase = static_cast<util::UdfPhase>(
        calls_[f].phase.load(std::memory_order_acquire));
    if (phase == util::UdfPhase::kNone) continue;
    any = true;
    if (what == nullptr) break;
    std::string in;
    if (phase == util::UdfPhase::kInit) {
      in = " in Init";
    } else if (phase == util::UdfPhase::kReset) {
      in = " in ResetFlowFuncState";
    } else if (funcs_[f].stream_input) {
      in = " in its stream Proc";
    } else {
      in = " in Proc of transaction " +
           std::to_string(calls_[f].trans.load(std::memory_order_relaxed));
    }
    *what += (what->empty() ? "" : "; ") +
             ("node '" + env().node + "' function '" + funcs_[f].name +
              "' (replica " + std::to_string(env().instance_id) +
              ") on device " + std::to_string(env().device) + in);
  }
  return any;
}

Status UdfInstance::Init(const rt::ScopedDevice& bound) {
  HFLOW_RETURN_IF_ERROR(bound.Require(env().device));
  // The invoked models load here, on the thread `bound` proves is bound to
  // the instance's device, before the UDF's Init may use them.
  HFLOW_RETURN_IF_ERROR(core_->LoadInvokedModels());
  CallHooks hooks(log_header_, allocator_);
  Enter(0, util::UdfPhase::kInit, 0);
  int32_t rc;
  {
    rt::ctxcheck::UserCall check(bound.runtime(), &sites_[0], "Init");
    rc = Guarded(
        [&] { return Where(0) + " Init"; },
        [&] { return single_ ? single_->Init() : multi_->Init(params_); });
  }
  Leave();
  if (rc != FlowFunc::FLOW_FUNC_SUCCESS) {
    return Status::FailedPrecondition(
        Where(0) + ": Init returned " + std::to_string(rc) +
        "; the deployment cannot continue (see the UDF's log)");
  }
  return Status::OK();
}

int32_t UdfInstance::Proc(const rt::ScopedDevice& bound, size_t index,
                          const std::vector<std::shared_ptr<FlowMsg>>& inputs,
                          uint64_t trans) {
  if (!bound.Require(env().device).ok() || index >= funcs_.size()) {
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  CallHooks hooks(log_header_, allocator_);
  core_->SetCurrentInputs(&inputs);
  Enter(index, util::UdfPhase::kProc, trans);
  int32_t rc;
  {
    rt::ctxcheck::UserCall check(bound.runtime(), &sites_[index], "Proc");
    rc = Guarded([&] { return Where(index) + " Proc"; },
                 [&]() -> int32_t {
                   if (single_) return single_->Proc(inputs);
                   FlowFunc::AscendString name(funcs_[index].name.c_str());
                   auto it = procs_.find(name);
                   if (it == procs_.end())  // a stream function: ProcQueues
                     return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;
                   return it->second(run_context_, inputs);
                 });
  }
  Leave();
  core_->SetCurrentInputs(nullptr);
  return rc;
}

// Note [Resetting an instance]
// GE calls ResetFlowFuncState once per instance (the multi-function object
// once, not per function) when a deployed graph is brought back to its
// initial state, and only then. A UDF that resets itself keeps its object;
// any other answer (the default's FLOW_FUNC_ERR_NOT_SUPPORT, an error, a
// throw) makes the runtime destroy the object and create and Init a new
// one, which is what GE documents for a UDF that does not implement it.
// The user's destructor and creator run with the same hooks and device as
// Init. The caller guarantees that no Proc of the instance runs meanwhile.
Status UdfInstance::ResetState(const rt::ScopedDevice& bound, bool* recreated) {
  HFLOW_RETURN_IF_ERROR(bound.Require(env().device));
  if (recreated != nullptr) *recreated = false;
  CallHooks hooks(log_header_, allocator_);
  Enter(0, util::UdfPhase::kReset, 0);
  int32_t rc;
  {
    rt::ctxcheck::UserCall check(bound.runtime(), &sites_[0],
                                 "ResetFlowFuncState");
    rc = Guarded([&] { return Where(0) + " ResetFlowFuncState"; },
                 [&] {
                   return single_ ? single_->ResetFlowFuncState()
                                  : multi_->ResetFlowFuncState(params_);
                 });
  }
  if (rc == FlowFunc::FLOW_FUNC_SUCCESS) {
    Leave();
    return Status::OK();
  }
  const bool multi = is_multi();
  {
    rt::ctxcheck::UserCall check(bound.runtime(), &sites_[0], "its destructor");
    single_.reset();  // the user's destructor runs here, device bound
    multi_.reset();
    procs_.clear();  // a proc may hold the last reference to the object
    procs_q_.clear();
  }
  context_.reset();
  params_.reset();
  run_context_.reset();
  Leave();
  if (recreated != nullptr) *recreated = true;
  HFLOW_RETURN_IF_ERROR(
      (multi ? CreateMulti() : CreateSingle())
          .WithContext("resetting (ResetFlowFuncState returned " +
                       std::to_string(rc) + "): "));
  return Init(bound).WithContext("resetting: ");
}

int32_t UdfInstance::ProcQueues(
    const rt::ScopedDevice& bound, size_t index,
    const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>& queues) {
  if (!bound.Require(env().device).ok() || index >= funcs_.size() || !multi_) {
    return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
  }
  auto q = procs_q_.find(FlowFunc::AscendString(funcs_[index].name.c_str()));
  if (q == procs_q_.end()) return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;
  CallHooks hooks(log_header_, allocator_);
  Enter(index, util::UdfPhase::kProc, 0);
  int32_t rc;
  {
    rt::ctxcheck::UserCall check(bound.runtime(), &sites_[index],
                                 "stream Proc");
    rc = Guarded([&] { return Where(index) + " stream Proc"; },
                 [&] { return q->second(run_context_, queues); });
  }
  Leave();
  return rc;
}

}  // namespace flow_func
}  // namespace hflow
