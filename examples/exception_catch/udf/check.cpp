// The exception_catch example's UDF: a single-function UDF (MetaFlowFunc +
// REGISTER_FLOW_FUNC, C++11, old string ABI, as for CANN DataFlow).
// Graph (see ../graph.txt):
//
//   x ──[check: CheckNonNegative]── output 0
//
// A message whose elements are all >= 0 passes through unchanged. One with a
// negative element raises an exception, RaiseException(kNegativeInput, the
// message's transaction id), emits nothing and returns success: the graph
// sets "exception_catch": true, so the fetcher receives a FlowInfo with
// ret_code kNegativeInput and transaction_id that id. Takes int32 tensors.
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/flow_func_log.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

namespace {

// A user-defined code: user codes lie in [FLOW_FUNC_ERR_USER_DEFINE_START,
// FLOW_FUNC_ERR_USER_DEFINE_END].
const int32_t kNegativeInput = FLOW_FUNC_ERR_USER_DEFINE_START + 1;  // 9900001

class CheckNonNegative : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 1 || !in[0]) return FLOW_FUNC_ERR_PARAM_INVALID;
    Tensor* t = in[0]->GetTensor();
    if (t == nullptr || t->GetDataType() != TensorDataType::DT_INT32) {
      FLOW_FUNC_LOG_ERROR("CheckNonNegative takes an int32 tensor");
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    const int32_t* x = static_cast<const int32_t*>(t->GetData());
    for (int64_t i = 0; i < t->GetElementCnt(); ++i) {
      if (x[i] < 0) {
        const uint64_t trans = in[0]->GetTransactionId();
        FLOW_FUNC_LOG_WARN("transaction %llu: element %lld is %d; raising %d",
                           static_cast<unsigned long long>(trans),
                           static_cast<long long>(i), x[i], kNegativeInput);
        context_->RaiseException(kNegativeInput, trans);
        return FLOW_FUNC_SUCCESS;  // the exception, not the ret code, reports
                                   // it
      }
    }
    return context_->SetOutput(0, in[0]);
  }
};

}  // namespace

REGISTER_FLOW_FUNC("CheckNonNegative", CheckNonNegative);
