// Compile-only check that UDF code written for CANN DataFlow builds against
// hflow's headers as C++11 with the old ABI and -Wall -Wextra -Werror: both
// registration macros (twice each in one file), chained RegProcFunc with
// message and queue procs, the attribute templates and every log macro with
// and without arguments. Never linked or run.
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func/ascend_string.h"
#include "flow_func/dflow_attr_value.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"
#include "flow_func/meta_multi_func.h"

namespace smoke {

class AddFunc : public FlowFunc::MetaFlowFunc {
 public:
  int32_t Init() override {
    int64_t scale = 0;
    std::vector<FlowFunc::AscendString> names;
    if (context_->GetAttr("scale", scale) != FlowFunc::FLOW_FUNC_SUCCESS ||
        context_->GetAttr("names", names) != FlowFunc::FLOW_FUNC_SUCCESS) {
      FLOW_FUNC_LOG_WARN("attributes missing");
    }
    FLOW_FUNC_LOG_INFO("scale=%ld names=%zu", static_cast<long>(scale),
                       names.size());
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t Proc(
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& inputs) override {
    FLOW_FUNC_LOG_DEBUG("inputs=%zu", inputs.size());
    std::shared_ptr<FlowFunc::FlowMsg> out =
        context_->AllocTensorMsg({2, 2}, FlowFunc::TensorDataType::DT_INT32);
    if (out == nullptr) {
      FLOW_FUNC_LOG_ERROR("alloc failed");
      return FlowFunc::FLOW_FUNC_FAILED;
    }
    return context_->SetOutput(0, out);
  }
};

class MultiFunc : public FlowFunc::MetaMultiFunc {
 public:
  int32_t Init(const std::shared_ptr<FlowFunc::MetaParams>& params) override {
    float ratio = 0.0F;
    (void)params->GetAttr("ratio", ratio);
    FLOW_FUNC_RUN_LOG_INFO("init %s", params->GetName());
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t ProcA(const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
                const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) {
    FlowFunc::OutOptions options;
    options.MutableBalanceConfig()->SetAffinityPolicy(
        FlowFunc::AffinityPolicy::ROW_AFFINITY);
    return ctx->SetOutput(0, in.empty() ? nullptr : in[0], options);
  }
  int32_t ProcB(
      const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsg>>& in) const {
    (void)ctx;
    (void)in;
    FLOW_FUNC_RUN_LOG_ERROR("no args");
    return FlowFunc::FLOW_FUNC_SUCCESS;
  }
  int32_t ProcQ(
      const std::shared_ptr<FlowFunc::MetaRunContext>& ctx,
      const std::vector<std::shared_ptr<FlowFunc::FlowMsgQueue>>& queues) {
    (void)ctx;
    std::shared_ptr<FlowFunc::FlowMsg> msg;
    return queues.empty() ? FlowFunc::FLOW_FUNC_SUCCESS
                          : queues[0]->Dequeue(msg, 10);
  }
};

}  // namespace smoke

REGISTER_FLOW_FUNC("SmokeAdd", smoke::AddFunc);
REGISTER_FLOW_FUNC("SmokeAdd2", smoke::AddFunc);

FLOW_FUNC_REGISTRAR(smoke::MultiFunc)
    .RegProcFunc("smoke_a", &smoke::MultiFunc::ProcA)
    .RegProcFunc("smoke_b", &smoke::MultiFunc::ProcB)
    .RegProcFunc("smoke_q", &smoke::MultiFunc::ProcQ);

namespace FlowFunc {
// UDFs commonly register inside namespace FlowFunc, unqualified.
REGISTER_FLOW_FUNC("SmokeAdd3", smoke::AddFunc);
FLOW_FUNC_REGISTRAR(smoke::MultiFunc)
    .RegProcFunc("smoke_c", &smoke::MultiFunc::ProcA);
}  // namespace FlowFunc
