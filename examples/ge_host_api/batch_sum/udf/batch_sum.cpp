// The batch_sum example's UDF (C++11, old string ABI): its input is a
// CountBatch batch of int32 tensors stacked along a new leading dimension
// ([batch, n]); the output is the column sums, shape [n].
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

namespace {

class SumBatch : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }
  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 1 || !in[0]) return FLOW_FUNC_ERR_PARAM_INVALID;
    Tensor* t = in[0]->GetTensor();
    if (t == nullptr || t->GetDataType() != TensorDataType::DT_INT32 ||
        t->GetShape().size() != 2) {
      FLOW_FUNC_LOG_ERROR("SumBatch takes a [batch, n] int32 batch");
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    const int64_t rows = t->GetShape()[0];
    const int64_t cols = t->GetShape()[1];
    std::vector<int64_t> shape(1, cols);
    std::shared_ptr<FlowMsg> out =
        context_->AllocTensorMsg(shape, TensorDataType::DT_INT32);
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    const int32_t* x = static_cast<const int32_t*>(t->GetData());
    int32_t* y = static_cast<int32_t*>(out->GetTensor()->GetData());
    for (int64_t c = 0; c < cols; ++c) {
      y[c] = 0;
      for (int64_t r = 0; r < rows; ++r) y[c] += x[r * cols + c];
    }
    return context_->SetOutput(0, out);
  }
};

}  // namespace

REGISTER_FLOW_FUNC("SumBatch", SumBatch);
