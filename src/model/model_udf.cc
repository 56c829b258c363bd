// The model UDF, `_BuiltIn_Model`: a model node's instance. The deployer
// turns a model node (model_pp with a graph file) into a node running this
// function from libhflow_model.so, with the model's spec in its init
// params (model_config.h), so a model instance is deployed, batched,
// replicated and reported as any UDF instance is.
//
//   in0..inN ──[_BuiltIn_Model: ModelIr on ATen]── out0..outM
//
// Init loads the model through LoadedModel::Acquire on the deploy thread
// that bound the device (Note [Loading on the bound thread]). Proc, with
// GE's semantics:
//   - the model's inputs are the node's inputs in order, each output one
//     message (the transaction and flags of the inputs, as the executor
//     sets them on every output);
//   - an input with a non-zero ret_code or no data does not run the model:
//     each output is an empty message carrying that ret_code;
//   - an input of another dtype or shape than the model's (after the
//     compile config) fails the transaction naming the input, expected and
//     got; a kernel error fails it naming node and operator; the graph
//     goes on.
//
// Thread-safety: the runtime serialises Init and Proc of one instance.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"
#include "model/executor.h"
#include "model/loaded_model.h"
#include "model/model_config.h"
#include "nlohmann/json.hpp"

namespace hflow {
namespace model {
namespace {

using FlowFunc::FlowMsg;

std::string StringAttr(FlowFunc::MetaContext* c, const char* name) {
  FlowFunc::AscendString v;
  if (c->GetAttr(name, v) != FlowFunc::FLOW_FUNC_SUCCESS) return "";
  return v.GetString();
}

// Intra-op threads when the node does not say: one per instance, so that
// replicas and pipeline stages (the dataflow's own parallelism) never
// oversubscribe the cores; a lone large model asks for more.
constexpr int64_t kDefaultThreads = 1;

class ModelFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override {
    Status s = Load();
    if (!s.ok()) {
      FLOW_FUNC_LOG_ERROR("model load failed: %s", s.ToString().c_str());
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& in) override {
    const ModelIr& ir = model_->ir();
    if (in.size() != ir.inputs.size()) {
      FLOW_FUNC_LOG_ERROR("the model takes %zu inputs, the node gave %zu",
                          ir.inputs.size(), in.size());
      return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
    }
    for (const auto& m : in) {
      if (m == nullptr) return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
      if (m->GetRetCode() != 0 || m->GetTensor() == nullptr) {
        return EmptyOutputs(m->GetRetCode());
      }
    }
    std::vector<TensorView> views;
    for (size_t i = 0; i < in.size(); ++i) {
      FlowFunc::Tensor* t = in[i]->GetTensor();
      std::string why = Mismatch(ir.inputs[i], t);
      if (!why.empty()) {
        FLOW_FUNC_LOG_ERROR("input %zu ('%s'): %s", i,
                            ir.inputs[i].name.c_str(), why.c_str());
        return FlowFunc::FLOW_FUNC_ERR_PARAM_INVALID;
      }
      views.push_back(
          TensorView{t->GetDataType(), t->GetShape(), t->GetData()});
    }
    std::vector<OutputTensor> outs;
    Status s = exec_->Run(views, &outs);
    if (!s.ok()) {
      FLOW_FUNC_LOG_ERROR("%s: %s", ir.source.c_str(), s.message().c_str());
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      int32_t rc = Emit(static_cast<uint32_t>(i), outs[i]);
      if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }

 private:
  Status Load() {
    ModelSpec spec;
    spec.framework = StringAttr(context_, kAttrFramework);
    spec.graph_file = StringAttr(context_, kAttrGraphFile);
    spec.compile_config = StringAttr(context_, kAttrCompileConfig);
    const std::string params = StringAttr(context_, kAttrLoadParams);
    if (!params.empty()) {
      nlohmann::json j = nlohmann::json::parse(params, nullptr, false);
      if (!j.is_object()) return Status::InvalidArgument("bad load params");
      for (const auto& [k, v] : j.items()) {
        if (v.is_string()) spec.load_params[k] = v.get<std::string>();
      }
    }
    int64_t threads = 0;
    (void)context_->GetAttr(kAttrIntraOpThreads, threads);
    if (threads <= 0) threads = kDefaultThreads;
    HFLOW_RETURN_IF_ERROR(
        LoadedModel::Acquire(spec, context_->GetRunningDeviceId(), &model_));
    const ModelIr& ir = model_->ir();
    if (ir.outputs.size() != context_->GetOutputNum()) {
      return Status::InvalidArgument(
          ir.source + " has " + std::to_string(ir.outputs.size()) +
          " outputs, the node " + std::to_string(context_->GetOutputNum()));
    }
    return Executor::Create(ir, model_->constants(), static_cast<int>(threads),
                            &exec_);
  }

  // "expected float32[1,3,?,?], got int32[3]", or "" when `t` fits `want`.
  static std::string Mismatch(const IrValue& want, FlowFunc::Tensor* t) {
    const std::vector<int64_t>& got = t->GetShape();
    bool ok = t->GetDataType() == want.dtype;
    if (ok && want.has_shape) {
      ok = got.size() == want.dims.size();
      for (size_t d = 0; ok && d < got.size(); ++d) {
        ok = want.dims[d] < 0 || want.dims[d] == got[d];
      }
    }
    if (ok) return "";
    return "expected " + DataTypeName(want.dtype) +
           (want.has_shape ? ShapeText(want.dims) : "[any]") + ", got " +
           DataTypeName(t->GetDataType()) + ShapeText(got);
  }

  int32_t EmptyOutputs(int32_t rc) {
    for (uint32_t i = 0; i < context_->GetOutputNum(); ++i) {
      auto m =
          context_->AllocEmptyDataMsg(FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA);
      if (m == nullptr) return FlowFunc::FLOW_FUNC_ERR_MEM_BUF_ERROR;
      m->SetRetCode(rc);
      const int32_t r = context_->SetOutput(i, m);
      if (r != FlowFunc::FLOW_FUNC_SUCCESS) return r;
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }

  int32_t Emit(uint32_t index, const OutputTensor& o) {
    if (ElementSize(o.dtype) == 0) {
      FLOW_FUNC_LOG_ERROR("output %u has an element type no message holds",
                          index);
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    auto m = context_->AllocTensorMsg(o.dims, o.dtype);
    if (m == nullptr || m->GetTensor() == nullptr) {
      FLOW_FUNC_LOG_ERROR("output %u: no memory for %zu bytes", index, o.bytes);
      return FlowFunc::FLOW_FUNC_ERR_MEM_BUF_ERROR;
    }
    if (o.bytes > 0) std::memcpy(m->GetTensor()->GetData(), o.data, o.bytes);
    return context_->SetOutput(index, m);
  }

  std::shared_ptr<const LoadedModel> model_;
  std::unique_ptr<Executor> exec_;
};

}  // namespace
}  // namespace model
}  // namespace hflow

REGISTER_FLOW_FUNC(hflow::model::kModelFunction, hflow::model::ModelFunc);
