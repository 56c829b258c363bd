// The contexts a UDF instance sees: MetaContext (single-function UDFs),
// MetaParams and MetaRunContext (multi-function UDFs). They read attributes
// from the FunctionPp's init params, allocate messages on the instance's
// device, hand outputs to the runtime through a sink, and carry the
// exception channel.
//
// Thread-safety: one context serves one UDF instance; the runtime calls the
// instance from one thread at a time. The sinks must be thread-safe if UDF
// code calls them from its own threads.
#ifndef HFLOW_FLOW_FUNC_UDF_CONTEXT_H_
#define HFLOW_FLOW_FUNC_UDF_CONTEXT_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "flow_func/balance.h"
#include "flow_func/init_params.h"
#include "flow_func/invoked_model.h"
#include "flow_func/mbuf_msg.h"
#include "flow_func/meta_context.h"
#include "flow_func/meta_params.h"
#include "flow_func/meta_run_context.h"

namespace hflow {
namespace flow_func {

// What the runtime provides to one UDF instance.
struct InstanceEnv {
  std::string node;       // node name (messages, GetName)
  std::string work_path;  // GetWorkPath
  int32_t device = 0;     // GetRunningDeviceId (cluster config id)
  int32_t instance_id = 0;
  int32_t instance_num = 1;
  size_t input_num = 0;
  size_t output_num = 0;
  BalanceKind balance = BalanceKind::kNone;  // the node's balance attr
  // The node's tag in error messages (deploy::Deployment::ErrorNodeTag;
  // 0: none): for an instance that passes its failures on itself.
  uint32_t error_tag = 0;
  AttrMap attrs;
  std::shared_ptr<MsgAllocator> allocator;
  // Receives SetOutput(index, msg); returns a FlowFunc code.
  std::function<int32_t(uint32_t, std::shared_ptr<MbufFlowMsg>)> output;
  // Exception channel (exception catch): raise and observe.
  std::function<void(int32_t code, uint64_t user_context_id)> raise;
  std::function<bool(int32_t* code, uint64_t* user_context_id)> get_exception;
  // The models the UDF invokes (RunFlowModel), loaded at Init.
  std::vector<InvokedModelSpec> invoked;
};

// Shared by the three context classes.
class ContextCore {
 public:
  explicit ContextCore(std::shared_ptr<const InstanceEnv> env)
      : env_(std::move(env)) {}

  const InstanceEnv& env() const { return *env_; }
  std::shared_ptr<const FlowFunc::AttrValue> Attr(const char* name) const;
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensor(
      const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt,
      uint32_t align) const;
  std::shared_ptr<FlowFunc::FlowMsg> AllocEmpty(FlowFunc::MsgType t) const;
  // A raw-data message of `size` bytes (null, logged, on failure).
  std::shared_ptr<FlowFunc::FlowMsg> AllocRaw(uint64_t size) const;
  int32_t Output(uint32_t idx, std::shared_ptr<FlowFunc::FlowMsg> msg) const;
  // SetOutput/SetMultiOutputs with options: the balance checks (nothing
  // is sent when one fails), then every message is sent; a failed send
  // does not stop the others and the last failure is returned (as GE).
  int32_t MultiOutput(
      uint32_t idx, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
      const FlowFunc::OutOptions& options) const;
  int32_t UserData(void* data, size_t size, size_t offset) const;
  void Raise(int32_t code, uint64_t user_ctx) const;
  bool Exception(int32_t& code, uint64_t& user_ctx) const;
  // Loads env().invoked on the calling thread's binding (UdfInstance::Init,
  // on the deploy thread bound to the instance's device).
  Status LoadInvokedModels();
  // RunFlowModel: the invoked model `key` on `in` into `out`, on the
  // calling thread. A run that took longer than `timeout` ms (>= 0) fails
  // with FLOW_FUNC_ERR_TIME_OUT_ERROR and no outputs, as GE's does.
  int32_t RunFlowModel(
      const char* key,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in,
      std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& out,
      int32_t timeout) const;

  // A new message takes the balance labels of the input being processed.
  void InheritLabels(MbufFlowMsg* msg) const;
  // The inputs of the Proc call in progress on the calling thread
  // (GetUserData reads the first). Per thread: a stream function's thread
  // runs alongside the instance's other functions and has no current input.
  void SetCurrentInputs(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* in);

 private:
  // `msg` with `labels` in its head: msg itself when they are there
  // already (nothing is written: it may be queued); a copy when anyone
  // else may read its head (an input, one mbuf fanned out to several
  // consumers; a message sent or queued already; `must_copy`); else msg
  // written in place.
  int32_t Labelled(const std::shared_ptr<MbufFlowMsg>& msg,
                   const BalanceLabels& labels, bool must_copy,
                   std::shared_ptr<FlowFunc::FlowMsg>* out) const;

  std::shared_ptr<const InstanceEnv> env_;
  struct Invoked {
    std::unique_ptr<InvokedModel> model;
    std::mutex mu;  // one run of a model at a time
  };
  std::map<std::string, std::unique_ptr<Invoked>> invoked_;
};

class MetaContextImpl final : public FlowFunc::MetaContext {
 public:
  explicit MetaContextImpl(std::shared_ptr<ContextCore> core)
      : core_(std::move(core)) {}
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsg(
      const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt) override;
  int32_t SetOutput(uint32_t idx,
                    std::shared_ptr<FlowFunc::FlowMsg> msg) override;
  std::shared_ptr<const FlowFunc::AttrValue> GetAttr(
      const char* name) const override;
  using FlowFunc::MetaContext::GetAttr;
  size_t GetInputNum() const override { return core_->env().input_num; }
  size_t GetOutputNum() const override { return core_->env().output_num; }
  std::shared_ptr<FlowFunc::FlowMsg> AllocEmptyDataMsg(
      FlowFunc::MsgType t) override;
  int32_t RunFlowModel(
      const char* key,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in,
      std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& out,
      int32_t timeout) override;
  const char* GetWorkPath() const override {
    return core_->env().work_path.c_str();
  }
  int32_t GetRunningDeviceId() const override { return core_->env().device; }
  int32_t GetUserData(void* data, size_t size, size_t offset) const override;
  int32_t SetOutput(uint32_t idx, std::shared_ptr<FlowFunc::FlowMsg> msg,
                    const FlowFunc::OutOptions& options) override;
  int32_t SetMultiOutputs(
      uint32_t idx, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
      const FlowFunc::OutOptions& options) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsgWithAlign(
      const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt,
      uint32_t align) override;
  void RaiseException(int32_t code, uint64_t user_ctx) override;
  bool GetException(int32_t& code, uint64_t& user_ctx) override;
  // hflow's own, for its built-in single-function UDFs (GE's MetaContext
  // has no raw messages): the model node's torch tensor messages.
  std::shared_ptr<FlowFunc::FlowMsg> AllocRawMsg(uint64_t size) const {
    return core_->AllocRaw(size);
  }

 private:
  std::shared_ptr<ContextCore> core_;
};

class MetaParamsImpl final : public FlowFunc::MetaParams {
 public:
  explicit MetaParamsImpl(std::shared_ptr<ContextCore> core)
      : core_(std::move(core)) {}
  const char* GetName() const override { return core_->env().node.c_str(); }
  std::shared_ptr<const FlowFunc::AttrValue> GetAttr(
      const char* name) const override;
  using FlowFunc::MetaParams::GetAttr;
  size_t GetInputNum() const override { return core_->env().input_num; }
  size_t GetOutputNum() const override { return core_->env().output_num; }
  const char* GetWorkPath() const override {
    return core_->env().work_path.c_str();
  }
  int32_t GetRunningDeviceId() const override { return core_->env().device; }
  int32_t GetRunningInstanceId() const override {
    return core_->env().instance_id;
  }
  int32_t GetRunningInstanceNum() const override {
    return core_->env().instance_num;
  }

 private:
  std::shared_ptr<ContextCore> core_;
};

class MetaRunContextImpl final : public FlowFunc::MetaRunContext {
 public:
  explicit MetaRunContextImpl(std::shared_ptr<ContextCore> core)
      : core_(std::move(core)) {}
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsg(
      const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocEmptyDataMsg(
      FlowFunc::MsgType t) override;
  int32_t SetOutput(uint32_t idx,
                    std::shared_ptr<FlowFunc::FlowMsg> msg) override;
  int32_t RunFlowModel(
      const char* key,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in,
      std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& out,
      int32_t timeout) override;
  int32_t GetUserData(void* data, size_t size, size_t offset) const override;
  int32_t SetOutput(uint32_t idx, std::shared_ptr<FlowFunc::FlowMsg> msg,
                    const FlowFunc::OutOptions& options) override;
  int32_t SetMultiOutputs(
      uint32_t idx, const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& msgs,
      const FlowFunc::OutOptions& options) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorMsgWithAlign(
      const std::vector<int64_t>& shape, FlowFunc::TensorDataType dt,
      uint32_t align) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocTensorListMsg(
      const std::vector<std::vector<int64_t>>& shapes,
      const std::vector<FlowFunc::TensorDataType>& dts,
      uint32_t align) override;
  void RaiseException(int32_t code, uint64_t user_ctx) override;
  bool GetException(int32_t& code, uint64_t& user_ctx) override;
  std::shared_ptr<FlowFunc::FlowMsg> AllocRawDataMsg(int64_t size,
                                                     uint32_t align) override;
  std::shared_ptr<FlowFunc::FlowMsg> ToFlowMsg(
      std::shared_ptr<FlowFunc::Tensor> tensor) override;

 private:
  std::shared_ptr<ContextCore> core_;
};

}  // namespace flow_func
}  // namespace hflow

#endif  // HFLOW_FLOW_FUNC_UDF_CONTEXT_H_
