// UdfInstance (see udf_instance.h).
// Thread-safety: as documented there.
#include "flow_func/udf_instance.h"

#include <deque>
#include <exception>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/flow_msg_queue.h"
#include "flow_func/lib/flow_func_internal.h"

namespace hflow {
namespace flow_func {
namespace {

using FlowFunc::FlowMsg;
namespace ffi = FlowFunc::internal;

// Queue-style procs get each input as a queue holding that call's message.
class CallQueue final : public FlowFunc::FlowMsgQueue {
 public:
  explicit CallQueue(std::shared_ptr<FlowMsg> m) {
    if (m) q_.push_back(std::move(m));
  }
  int32_t Dequeue(std::shared_ptr<FlowMsg>& out, int32_t) override {
    if (q_.empty()) return FlowFunc::FLOW_FUNC_ERR_TIME_OUT_ERROR;
    out = std::move(q_.front());
    q_.pop_front();
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Depth() const override { return 1; }
  int32_t Size() const override { return static_cast<int32_t>(q_.size()); }

 private:
  std::deque<std::shared_ptr<FlowMsg>> q_;
};

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
  HFLOW_RETURN_IF_ERROR(kind == ffi::FunctionKind::kFlowFunc
                            ? inst->CreateSingle()
                            : inst->CreateMulti());
  for (const FuncDesc& f : inst->funcs_) {
    util::UdfSite site;
    site.node = inst->env().node.c_str();
    site.function = f.name.c_str();
    site.replica = static_cast<int32_t>(inst->env().instance_id);
    site.device = inst->env().device;
    inst->sites_.push_back(site);
  }
  *out = std::move(inst);
  return Status::OK();
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
  FlowFunc::FLOW_FUNC_CREATOR_FUNC creator;
  ffi::LookupFlowFunc(funcs_[0].library, funcs_[0].name.c_str(), &creator);
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
  params_ = std::make_shared<MetaParamsImpl>(core_);
  run_context_ = std::make_shared<MetaRunContextImpl>(core_);
  return Status::OK();
}

void UdfInstance::Enter(size_t index, util::UdfPhase phase, uint64_t trans) {
  call_func_.store(index, std::memory_order_relaxed);
  call_trans_.store(trans, std::memory_order_relaxed);
  call_phase_.store(static_cast<uint32_t>(phase), std::memory_order_release);
  util::EnterUdf(&sites_[index], phase, trans);
}

void UdfInstance::Leave() {
  util::LeaveUdf();
  call_phase_.store(0, std::memory_order_release);
}

bool UdfInstance::InCall(std::string* what) const {
  const auto phase =
      static_cast<util::UdfPhase>(call_phase_.load(std::memory_order_acquire));
  if (phase == util::UdfPhase::kNone) return false;
  if (what != nullptr) {
    const size_t f = call_func_.load(std::memory_order_relaxed);
    *what =
        "node '" + env().node + "' function '" +
        (f < funcs_.size() ? funcs_[f].name : std::string("?")) +
        "' (replica " + std::to_string(env().instance_id) + ") on device " +
        std::to_string(env().device) +
        (phase == util::UdfPhase::kInit ? std::string(" in Init")
         : phase == util::UdfPhase::kReset
             ? std::string(" in ResetFlowFuncState")
             : " in Proc of transaction " +
                   std::to_string(call_trans_.load(std::memory_order_relaxed)));
  }
  return true;
}

Status UdfInstance::Init(const rt::ScopedDevice& bound) {
  HFLOW_RETURN_IF_ERROR(bound.Require(env().device));
  CallHooks hooks(log_header_, allocator_);
  Enter(0, util::UdfPhase::kInit, 0);
  int32_t rc = Guarded(
      [&] { return Where(0) + " Init"; },
      [&] { return single_ ? single_->Init() : multi_->Init(params_); });
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
  int32_t rc =
      Guarded([&] { return Where(index) + " Proc"; },
              [&]() -> int32_t {
                if (single_) return single_->Proc(inputs);
                FlowFunc::AscendString name(funcs_[index].name.c_str());
                auto it = procs_.find(name);
                if (it != procs_.end()) return it->second(run_context_, inputs);
                auto q = procs_q_.find(name);
                if (q == procs_q_.end())
                  return FlowFunc::FLOW_FUNC_ERR_NOT_SUPPORT;
                std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>> queues;
                for (const auto& m : inputs)
                  queues.push_back(std::make_shared<CallQueue>(m));
                return q->second(run_context_, queues);
              });
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
  int32_t rc = Guarded([&] { return Where(0) + " ResetFlowFuncState"; },
                       [&] {
                         return single_ ? single_->ResetFlowFuncState()
                                        : multi_->ResetFlowFuncState(params_);
                       });
  if (rc == FlowFunc::FLOW_FUNC_SUCCESS) {
    Leave();
    return Status::OK();
  }
  const bool multi = is_multi();
  single_.reset();  // the user's destructor runs here, device bound
  multi_.reset();
  procs_.clear();
  procs_q_.clear();
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

}  // namespace flow_func
}  // namespace hflow
