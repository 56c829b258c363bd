// A single-function UDF written as for CANN DataFlow (C++11, old string ABI):
//
//   in0 ──┐
//         ├─[SingleAdd: out = in0 + in1 + bias]── out0
//   in1 ──┘
//
// Init reads the int attr "bias" and fails with a user code when the bool
// attr "fail_init" is true; Proc rejects inputs that are not int32 tensors of
// one shape.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

namespace {

const int32_t kUserInitFailure = FLOW_FUNC_ERR_USER_DEFINE_START + 1;

class SingleAdd : public MetaFlowFunc {
 public:
  int32_t Init() override {
    int64_t bias = 0;
    if (context_->GetAttr("bias", bias) == FLOW_FUNC_SUCCESS) bias_ = bias;
    bool fail = false;
    if (context_->GetAttr("fail_init", fail) == FLOW_FUNC_SUCCESS && fail) {
      FLOW_FUNC_LOG_ERROR("SingleAdd asked to fail its Init");
      return kUserInitFailure;
    }
    FLOW_FUNC_LOG_INFO("SingleAdd ready on device %d, bias %lld",
                       context_->GetRunningDeviceId(),
                       static_cast<long long>(bias_));
    return FLOW_FUNC_SUCCESS;
  }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 2 || !in[0] || !in[1]) return FLOW_FUNC_ERR_PARAM_INVALID;
    Tensor* a = in[0]->GetTensor();
    Tensor* b = in[1]->GetTensor();
    if (a == nullptr || b == nullptr ||
        a->GetDataType() != TensorDataType::DT_INT32 ||
        b->GetDataType() != TensorDataType::DT_INT32 ||
        a->GetShape() != b->GetShape()) {
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    std::shared_ptr<FlowMsg> out =
        context_->AllocTensorMsg(a->GetShape(), TensorDataType::DT_INT32);
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    const int32_t* x = static_cast<const int32_t*>(a->GetData());
    const int32_t* y = static_cast<const int32_t*>(b->GetData());
    int32_t* z = static_cast<int32_t*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < a->GetElementCnt(); ++i) {
      z[i] = x[i] + y[i] + static_cast<int32_t>(bias_);
    }
    return context_->SetOutput(0, out);
  }

 private:
  int64_t bias_ = 0;
};

}  // namespace

REGISTER_FLOW_FUNC("SingleAdd", SingleAdd);
