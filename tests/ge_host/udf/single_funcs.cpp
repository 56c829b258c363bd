// Single-function UDFs of the GE host programs (C++11, old string ABI, as
// for CANN DataFlow):
//
//   PassThrough       in0 ── out0 (the input message itself; batching
//                     programs see what the CountBatch/TimeBatch gave it)
//   AddPair           in0, in1 ── out0 = in0 + in1 (int32, one shape)
//   CheckNonNegative  in0 ── out0 = in0, or RaiseException(kNegativeInput,
//                     transaction) and no output when an element is < 0
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

namespace {

// The code CheckNonNegative raises (a user code, as GE's samples use).
const int32_t kNegativeInput = FLOW_FUNC_ERR_USER_DEFINE_START + 7;

class PassThrough : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 1 || !in[0]) return FLOW_FUNC_ERR_PARAM_INVALID;
    return context_->SetOutput(0, in[0]);
  }
};

class AddPair : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 2 || !in[0] || !in[1]) return FLOW_FUNC_ERR_PARAM_INVALID;
    Tensor* a = in[0]->GetTensor();
    Tensor* b = in[1]->GetTensor();
    if (a == nullptr || b == nullptr ||
        a->GetDataType() != TensorDataType::DT_INT32 ||
        b->GetDataType() != TensorDataType::DT_INT32 ||
        a->GetShape() != b->GetShape()) {
      FLOW_FUNC_LOG_ERROR("AddPair takes two int32 tensors of one shape");
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    std::shared_ptr<FlowMsg> out =
        context_->AllocTensorMsg(a->GetShape(), TensorDataType::DT_INT32);
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    const int32_t* x = static_cast<const int32_t*>(a->GetData());
    const int32_t* y = static_cast<const int32_t*>(b->GetData());
    int32_t* z = static_cast<int32_t*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < a->GetElementCnt(); ++i) z[i] = x[i] + y[i];
    return context_->SetOutput(0, out);
  }
};

class CheckNonNegative : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 1 || !in[0]) return FLOW_FUNC_ERR_PARAM_INVALID;
    Tensor* t = in[0]->GetTensor();
    if (t == nullptr || t->GetDataType() != TensorDataType::DT_INT32) {
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    const int32_t* x = static_cast<const int32_t*>(t->GetData());
    for (int64_t i = 0; i < t->GetElementCnt(); ++i) {
      if (x[i] < 0) {
        // As GE's samples: raise with the transaction as the user context
        // and return success; the fetcher gets the exception instead.
        context_->RaiseException(kNegativeInput, in[0]->GetTransactionId());
        return FLOW_FUNC_SUCCESS;
      }
    }
    return context_->SetOutput(0, in[0]);
  }
};

}  // namespace

// Runs its invoked closure "model_key" on its two inputs (GE's
// AddInvokedClosure + RunFlowModel) and sends the model's first output.
class InvokeModel : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    std::vector<std::shared_ptr<FlowMsg> > out;
    const int32_t rc = context_->RunFlowModel("model_key", in, out, 5000);
    if (rc != FLOW_FUNC_SUCCESS) return rc;
    if (out.size() != 1) return FLOW_FUNC_FAILED;
    return context_->SetOutput(0, out[0]);
  }
};

REGISTER_FLOW_FUNC("PassThrough", PassThrough);
REGISTER_FLOW_FUNC("InvokeModel", InvokeModel);
REGISTER_FLOW_FUNC("AddPair", AddPair);
REGISTER_FLOW_FUNC("CheckNonNegative", CheckNonNegative);
