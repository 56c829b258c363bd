// The model UDF, `_BuiltIn_Model`: a model node's instance. The deployer
// turns a model node (model_pp with a graph file) into a node running this
// function from libhflow_model.so, with the model's spec in its init
// params (model_config.h), so a model instance is deployed, batched,
// replicated and reported as any UDF instance is.
//
//   in0..inN ──[_BuiltIn_Model: ModelIr on ATen]── out0..outM
//
// Init loads the model (ModelRunner::Load) on the deploy thread that
// bound the device (Note [Loading on the bound thread]). Proc runs it with
// GE's semantics (model_runner.h) and sends each output message; the
// runtime gives them the inputs' transaction and flags. A failed run fails
// the transaction only; the graph goes on.
//
// Thread-safety: the runtime serialises Init and Proc of one instance.
#include <memory>
#include <string>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/udf_context.h"
#include "model/model_config.h"
#include "model/model_runner.h"
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

class ModelFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override {
    Status s = Load();
    if (!s.ok()) {
      FLOW_FUNC_LOG_ERROR("model load failed: %s", s.ToString().c_str());
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    make_.tensor = [this](const std::vector<int64_t>& shape,
                          FlowFunc::TensorDataType dt) {
      return context_->AllocTensorMsg(shape, dt);
    };
    make_.empty = [this] {
      return context_->AllocEmptyDataMsg(
          FlowFunc::MsgType::MSG_TYPE_TENSOR_DATA);
    };
    // Torch tensor messages out need raw messages, which hflow's own
    // context makes (GE's MetaContext cannot); elsewhere outputs are
    // tensor messages.
    if (auto* impl = dynamic_cast<flow_func::MetaContextImpl*>(context_)) {
      make_.raw = [impl](uint64_t size) { return impl->AllocRawMsg(size); };
    }
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg>>& in) override {
    std::vector<std::shared_ptr<FlowMsg>> out;
    const int32_t rc = runner_->Run(in, make_, &out);
    if (rc != FlowFunc::FLOW_FUNC_SUCCESS) return rc;
    for (size_t i = 0; i < out.size(); ++i) {
      const int32_t r = context_->SetOutput(static_cast<uint32_t>(i), out[i]);
      if (r != FlowFunc::FLOW_FUNC_SUCCESS) return r;
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
    HFLOW_RETURN_IF_ERROR(ModelRunner::Load(
        spec, context_->GetRunningDeviceId(), threads, &runner_));
    const ModelIr& ir = runner_->ir();
    if (ir.outputs.size() != context_->GetOutputNum()) {
      return Status::InvalidArgument(
          ir.source + " has " + std::to_string(ir.outputs.size()) +
          " outputs, the node " + std::to_string(context_->GetOutputNum()));
    }
    return Status::OK();
  }

  std::unique_ptr<ModelRunner> runner_;
  flow_func::MsgMakers make_;
};

}  // namespace
}  // namespace model
}  // namespace hflow

REGISTER_FLOW_FUNC(hflow::model::kModelFunction, hflow::model::ModelFunc);
