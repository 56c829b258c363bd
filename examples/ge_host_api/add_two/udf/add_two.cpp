// The add_two example's UDF (C++11, old string ABI, as for CANN DataFlow):
// out0 = in0 + in1 for two float tensors of one shape.
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

namespace {

class AddTwo : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 2 || !in[0] || !in[1]) return FLOW_FUNC_ERR_PARAM_INVALID;
    Tensor* a = in[0]->GetTensor();
    Tensor* b = in[1]->GetTensor();
    if (a == nullptr || b == nullptr ||
        a->GetDataType() != TensorDataType::DT_FLOAT ||
        b->GetDataType() != TensorDataType::DT_FLOAT ||
        a->GetShape() != b->GetShape()) {
      FLOW_FUNC_LOG_ERROR("AddTwo takes two float tensors of one shape");
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    std::shared_ptr<FlowMsg> out =
        context_->AllocTensorMsg(a->GetShape(), TensorDataType::DT_FLOAT);
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    const float* x = static_cast<const float*>(a->GetData());
    const float* y = static_cast<const float*>(b->GetData());
    float* z = static_cast<float*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < a->GetElementCnt(); ++i) z[i] = x[i] + y[i];
    return context_->SetOutput(0, out);
  }
};

}  // namespace

REGISTER_FLOW_FUNC("AddTwo", AddTwo);
