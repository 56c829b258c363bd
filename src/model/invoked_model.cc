// The loader of models a UDF invokes (flow_func/invoked_model.h), set when
// this library is loaded: each invoked model is a ModelRunner, loaded on
// the UDF instance's Init thread (bound to its device), run by
// RunFlowModel on the caller's thread.
//
// Thread-safety: the loader is reentrant; a model runs one call at a time
// (its context serialises them).
#include "flow_func/invoked_model.h"

#include <memory>
#include <utility>

#include "model/model_runner.h"

namespace hflow {
namespace model {
namespace {

class InvokedRunner : public flow_func::InvokedModel {
 public:
  explicit InvokedRunner(std::unique_ptr<ModelRunner> r) : r_(std::move(r)) {}
  int32_t Run(const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in,
              const flow_func::MsgMakers& make,
              std::vector<std::shared_ptr<FlowFunc::FlowMsg>>* out) override {
    return r_->Run(in, make, out);
  }

 private:
  std::unique_ptr<ModelRunner> r_;
};

Status Load(const flow_func::InvokedModelSpec& spec, int32_t device,
            std::unique_ptr<flow_func::InvokedModel>* out) {
  ModelSpec m;
  m.framework = spec.framework;
  m.graph_file = spec.graph_file;
  m.compile_config = spec.compile_config;
  m.load_params = spec.load_params;
  std::unique_ptr<ModelRunner> r;
  HFLOW_RETURN_IF_ERROR(
      ModelRunner::Load(m, device, spec.intra_op_threads, &r));
  *out = std::make_unique<InvokedRunner>(std::move(r));
  return Status::OK();
}

// Registered once, when the library is loaded (it is never unloaded).
const bool kRegistered = [] {
  flow_func::SetInvokedModelLoader(&Load);
  return true;
}();

}  // namespace
}  // namespace model
}  // namespace hflow
