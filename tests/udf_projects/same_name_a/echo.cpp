// One of two UDF libraries (same_name_a, same_name_b) that register the same
// function name "SameNameEcho" with different code, to check that each node
// runs the function of its own compile config's library:
//
//   in0 ─[SameNameEcho: out = in0 + 1000]─ out0      (library a)
//
// The class has the same (external) name in both libraries on purpose: the
// libraries are loaded RTLD_LOCAL, so neither may pick up the other's code.
// Library a also registers "OnlyInA", which library b does not have.
#include <cstdint>
#include <memory>
#include <vector>

#include "flow_func/flow_func_defines.h"
#include "flow_func/meta_flow_func.h"

using namespace FlowFunc;

class SameNameEcho : public MetaFlowFunc {
 public:
  int32_t Init() override { return FLOW_FUNC_SUCCESS; }

  int32_t Proc(const std::vector<std::shared_ptr<FlowMsg> >& in) override {
    if (in.size() != 1 || !in[0]) return FLOW_FUNC_ERR_PARAM_INVALID;
    Tensor* a = in[0]->GetTensor();
    if (a == nullptr || a->GetDataType() != TensorDataType::DT_INT32) {
      return FLOW_FUNC_ERR_PARAM_INVALID;
    }
    std::shared_ptr<FlowMsg> out =
        context_->AllocTensorMsg(a->GetShape(), TensorDataType::DT_INT32);
    if (!out) return FLOW_FUNC_ERR_MEM_BUF_ERROR;
    const int32_t* x = static_cast<const int32_t*>(a->GetData());
    int32_t* z = static_cast<int32_t*>(out->GetTensor()->GetData());
    for (int64_t i = 0; i < a->GetElementCnt(); ++i) z[i] = x[i] + kOffset;
    return context_->SetOutput(0, out);
  }

 private:
  static const int32_t kOffset = 1000;
};

REGISTER_FLOW_FUNC("SameNameEcho", SameNameEcho);
REGISTER_FLOW_FUNC("OnlyInA", SameNameEcho);
